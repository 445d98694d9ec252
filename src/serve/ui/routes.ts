import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { Handler, RouteSet } from '../http.js';
import { APP_CSS, APP_JS } from './assets.js';
import { html, type Html } from './html.js';
import type { LiveBus } from './live.js';
import type { UiModel, UiSnapshot } from './model.js';
import {
  clusterPage,
  controllerLine,
  historyPage,
  inventoryPage,
  layout,
  logsPage,
  overviewPage,
  type InventoryQuery,
} from './pages.js';
import { streamEvents } from './sse.js';
import { sendJson } from '../respond.js';
import { redact } from '../../util/redact.js';

/**
 * Everything the page may load comes from this process: no inline script or style, no other
 * origin, no frames. A page that could run anything else could read the site's inventory.
 */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export interface StatusPageOptions {
  model: UiModel;
  bus: LiveBus;
  /**
   * Lets a request in, or answers it (a login form, 401) and returns false. Absent: the page
   * is open (bpa listens on loopback only, see ui-auth.ts).
   */
  guard?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean> | boolean;
  /** More routes of the page's own (the login form). */
  extra?: RouteSet[];
  /** Pages offer to log out (the page asks for a token). */
  loggedIn?: boolean;
  /** Event streams open at once (100). */
  maxStreams?: number;
  /**
   * An installer log by its id (`<cluster>/<file>`, state/logs.ts): its end, or undefined when
   * there is no such log. Absent: `/api/v1/logs/` does not exist.
   */
  logs?: (id: string) => Promise<{ text: string; truncated: boolean } | undefined>;
  now?: () => number;
}

/** The status page's routes, for startHttpServer's `routes`. */
export function statusPageRoutes(opts: StatusPageOptions): RouteSet[] {
  const now = opts.now ?? Date.now;
  const guarded =
    (handler: Handler): Handler =>
    async (req, res, path) => {
      if (opts.guard && !(await opts.guard(req, res, path))) return;
      await handler(req, res, path);
    };
  const page = (
    nav: string,
    title: string,
    body: (input: Request) => Promise<Html> | Html,
    live?: (path: string) => string | undefined,
  ): Handler =>
    guarded(async (req, res, path) => {
      const input: Request = {
        snap: opts.model.snapshot(),
        now: now(),
        path,
        url: new URL(req.url ?? '/', 'http://bpa.invalid'),
      };
      let content: Html;
      try {
        content = await body(input);
      } catch (err: unknown) {
        if (err instanceof NotFound) {
          sendHtml(
            req,
            res,
            404,
            layoutFor(
              input,
              nav,
              'Not found',
              html`<section>
                <h2>Not found</h2>
                <p>${err.message}</p>
                <p><a href="/">Back to the overview</a></p>
              </section>`,
            ),
          );
          return;
        }
        throw err;
      }
      sendHtml(req, res, 200, layoutFor(input, nav, title, content, live?.(path)));
    });
  const layoutFor = (
    input: { snap: UiSnapshot; now: number },
    nav: string,
    title: string,
    body: Html,
    live?: string,
  ): Html =>
    layout({
      title,
      site: input.snap.site?.metadata.name,
      nav,
      controller: controllerLine(input),
      body,
      ...(live !== undefined ? { live } : {}),
      logout: opts.loggedIn === true,
    });

  return [
    {
      path: '/',
      handlers: {
        GET: page('/', 'Overview', async (input) =>
          overviewPage(input, await opts.model.history(100)),
        ),
      },
    },
    {
      path: '/clusters/',
      handlers: {
        GET: page(
          '/',
          'Cluster',
          (input) => {
            const name = clusterName(input.path);
            const doc = input.snap.clusters.find((c) => c.metadata.name === name);
            if (!doc) throw new NotFound(`No cluster named ${name ?? ''} is reported.`);
            return clusterPage(input, doc);
          },
          (path) => clusterName(path) ?? '',
        ),
      },
    },
    {
      path: '/inventory',
      handlers: {
        GET: page('/inventory', 'Inventory', (input) =>
          inventoryPage(input, inventoryQuery(input.url)),
        ),
      },
    },
    {
      path: '/history',
      handlers: {
        GET: page('/history', 'History', async (input) =>
          historyPage(input, await opts.model.history(200)),
        ),
      },
    },
    {
      path: '/logs',
      handlers: {
        GET: page(
          '/logs',
          'Installer',
          () => logsPage(),
          () => '',
        ),
      },
    },
    { path: '/ui/app.js', handlers: { GET: asset(APP_JS, 'text/javascript; charset=utf-8') } },
    { path: '/ui/app.css', handlers: { GET: asset(APP_CSS, 'text/css; charset=utf-8') } },
    {
      path: '/ui/events',
      handlers: {
        GET: guarded((req, res) =>
          streamEvents(req, res, opts.bus, {
            ...(opts.maxStreams !== undefined ? { maxStreams: opts.maxStreams } : {}),
          }),
        ),
      },
    },
    ...(opts.logs ? [logRoute(opts.logs, guarded)] : []),
    ...(opts.extra ?? []),
  ];
}

const LOGS = '/api/v1/logs/';

/**
 * `GET /api/v1/logs/<cluster>/<file>`: the end of an installer log, redacted as a whole (a key
 * block over many lines too), behind the page's access control. Only an id is accepted
 * (state/logs.ts checks it): never a path.
 */
function logRoute(
  read: NonNullable<StatusPageOptions['logs']>,
  guarded: (handler: Handler) => Handler,
): RouteSet {
  return {
    path: LOGS,
    handlers: {
      GET: guarded(async (req, res, path) => {
        req.resume();
        let id: string;
        try {
          id = decodeURIComponent(path.slice(LOGS.length));
        } catch {
          id = '';
        }
        const log = await read(id);
        if (!log) {
          sendJson(res, 404, { error: 'not_found', message: 'no installer log has that id' });
          return;
        }
        const body = Buffer.from(
          `${log.truncated ? '# bpa: only the end of the log\n' : ''}${redact(log.text)}`,
        );
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
          'content-length': body.length,
        });
        res.end(body);
      }),
    },
  };
}

interface Request {
  snap: UiSnapshot;
  now: number;
  path: string;
  url: URL;
}

class NotFound extends Error {}

/** `/clusters/<name>` → name (undefined for anything else). */
function clusterName(path: string): string | undefined {
  const rest = path.slice('/clusters/'.length);
  if (!rest || rest.includes('/')) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}

const SHOW = ['all', 'eligible', 'ineligible', 'free', 'held'] as const;

function inventoryQuery(url: URL): InventoryQuery {
  const show = url.searchParams.get('show') ?? 'all';
  const page = Number(url.searchParams.get('page') ?? '1');
  return {
    q: (url.searchParams.get('q') ?? '').slice(0, 200).trim(),
    show: (SHOW as readonly string[]).includes(show) ? (show as InventoryQuery['show']) : 'all',
    page: Number.isSafeInteger(page) && page > 0 ? page : 1,
  };
}

/** An HTML page with the security headers; gzip when the browser takes it. */
function sendHtml(req: IncomingMessage, res: ServerResponse, status: number, page: Html): void {
  const body = Buffer.from(page.text);
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && body.length > 1024;
  const data = gzip ? gzipSync(body, { level: 6 }) : body;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    vary: 'accept-encoding',
    'content-length': data.length,
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(data);
}

/** A static asset: revalidated by its ETag, so a reload costs a 304. */
function asset(text: string, type: string): Handler {
  const body = Buffer.from(text);
  const gz = gzipSync(body, { level: 9 });
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
  return (req, res) => {
    const headers = {
      ...SECURITY_HEADERS,
      'cache-control': 'no-cache',
      etag,
      vary: 'accept-encoding',
    };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const data = gzip ? gz : body;
    res.writeHead(200, {
      ...headers,
      'content-type': type,
      'content-length': data.length,
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    res.end(data);
  };
}
