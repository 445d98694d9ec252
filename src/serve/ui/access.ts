import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { bearerToken, clientOf, guessBlockMessage, sameSecret } from '../auth.js';
import type { GuessBlock, GuessLimiter } from '../guess-limit.js';
import type { RouteSet } from '../http.js';
import { sendJson } from '../respond.js';
import { html, type Html } from './html.js';

/**
 * Who may see the status page:
 * - `token`: whoever gives the token of --ui-token-file, as a bearer token or through the
 *   login form (which sets a session cookie);
 * - `open`: anyone who can connect: only when bpa listens on a loopback address (reached
 *   through `kubectl port-forward` or an SSH tunnel), or when the operator said so with
 *   --ui-insecure-no-token (a proxy in front does the authentication);
 * - `off`: bpa listens on a network address and has no token: the page answers 403 saying
 *   how to turn it on. bpa still starts: probes, metrics, webhook and status API do not
 *   depend on it.
 */
export type UiAccess =
  | { mode: 'token'; token: string }
  | { mode: 'open'; why: 'loopback' | 'insecure' }
  | { mode: 'off'; reason: string };

export function uiAccess(opts: {
  listenHost: string;
  token?: string;
  insecureNoToken?: boolean;
}): UiAccess {
  if (opts.token) return { mode: 'token', token: opts.token };
  if (isLoopback(opts.listenHost)) return { mode: 'open', why: 'loopback' };
  if (opts.insecureNoToken) return { mode: 'open', why: 'insecure' };
  return {
    mode: 'off',
    reason: `bpa listens on ${opts.listenHost || 'every address'} and no --ui-token-file is given: give one (a file holding a long random token), listen on 127.0.0.1, or, behind an authenticating proxy, --ui-insecure-no-token`,
  };
}

/** 127.0.0.0/8, ::1, ::ffff:127.x, localhost. Everything else (0.0.0.0, ::, a name) is not. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/** The host name of a Host header (`[::1]:8080` → `::1`, `localhost:8080` → `localhost`). */
function hostName(header: string | undefined): string {
  const h = (header ?? '').trim();
  return (/^\[([^\]]*)\](?::\d*)?$/.exec(h) ?? /^([^:]*)(?::\d*)?$/.exec(h))?.[1] ?? '';
}

const COOKIE = 'bpa_ui';
const SESSION_SECONDS = 12 * 3600;

/**
 * The cookie's value: when it expires (seconds since the epoch) and a MAC of that with the
 * token, so the token itself is never stored in it, and a copied cookie stops working when
 * the session ends, not only when the browser drops it.
 */
function sessionValue(token: string, expires: number): string {
  const mac = createHmac('sha256', token).update(`bpa status page session v2 ${expires}`);
  return `${expires}.${mac.digest('hex')}`;
}

function validSession(value: string, token: string, nowMs: number): boolean {
  const m = /^(\d{1,12})\.[0-9a-f]{64}$/.exec(value);
  if (!m) return false;
  const expires = Number(m[1]);
  return sameSecret(value, sessionValue(token, expires)) && expires * 1000 > nowMs;
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/** 429 with Retry-After: too many wrong tokens (see GuessLimiter). */
function tooMany(
  req: IncomingMessage,
  res: ServerResponse,
  page: boolean,
  block: GuessBlock,
): void {
  req.resume();
  res.setHeader('retry-after', String(block.seconds));
  const message = guessBlockMessage(block);
  if (page) sendPage(res, 429, loginForm('/', `${message[0]?.toUpperCase()}${message.slice(1)}.`));
  else sendJson(res, 429, { error: 'too_many_requests', message });
}

/**
 * A local path to return to after the login, never another site (`//evil`, `/\evil`), and
 * only printable ASCII (what a Location header may carry: the page's own links are encoded).
 */
function safeNext(next: string | null | undefined): string {
  return next && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';
}

/**
 * The guard of the page's routes for an access mode: lets a request in, or answers it (the
 * login form for a page, 401 for the event stream, 403 when the page is off).
 */
export function uiGuard(
  access: UiAccess,
  limiter: GuessLimiter,
  now: () => number = Date.now,
): (req: IncomingMessage, res: ServerResponse, path: string) => boolean {
  return (req, res, path) => {
    // The event stream and the API (logs) answer 401 and 403 as JSON, not with a login form.
    const page = path !== '/ui/events' && !path.startsWith('/api/');
    if (access.mode === 'open') {
      if (access.why !== 'loopback' || isLoopback(hostName(req.headers.host))) return true;
      // A page of another site that resolved its own name to 127.0.0.1 (DNS rebinding) would
      // be the same origin as this one: open on loopback means asked for by a loopback name.
      req.resume();
      const message = `the status page is open only to loopback names (localhost, 127.0.0.1, [::1]), not ${hostName(req.headers.host) || 'a request without Host'}: open it at http://127.0.0.1:<port>/, or give bpa --ui-token-file`;
      if (page)
        sendPage(
          res,
          403,
          loginLayout(
            html`<h1>Not this address</h1>
              <p>${message}.</p>`,
          ),
        );
      else sendJson(res, 403, { error: 'forbidden', message });
      return false;
    }
    if (access.mode === 'off') {
      req.resume();
      if (page)
        sendPage(
          res,
          403,
          loginLayout(
            html`<h1>The status page is off</h1>
              <p>${access.reason}.</p>
              <p>See docs/ui.md, “Access”.</p>`,
          ),
        );
      else
        sendJson(res, 403, {
          error: 'forbidden',
          message: `the status page is off: ${access.reason}`,
        });
      return false;
    }
    // A bearer token is a guess like the form's: the same limiter counts it (a session
    // cookie is a MAC nobody guesses, and keeps working while guessing is blocked).
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      const guess = limiter.check(clientOf(req), now(), () => sameSecret(bearer, access.token));
      if (guess.ok) return true;
      if (guess.blocked) {
        tooMany(req, res, page, guess.blocked);
        return false;
      }
    } else {
      const session = cookieOf(req, COOKIE);
      if (session !== undefined && validSession(session, access.token, now())) return true;
    }
    req.resume();
    if (page) {
      const url = new URL(req.url ?? '/', 'http://bpa.invalid');
      res.writeHead(303, {
        location: `/ui/login?${new URLSearchParams({ next: url.pathname + url.search }).toString()}`,
        'cache-control': 'no-store',
      });
      res.end();
    } else {
      res.setHeader('www-authenticate', 'Bearer realm="bpa"');
      sendJson(res, 401, {
        error: 'unauthorized',
        message: 'log in at /ui/login, or send the token as a bearer token',
      });
    }
    return false;
  };
}

/** GET/POST /ui/login and POST /ui/logout, when the page needs a token. */
export function loginRoutes(
  access: UiAccess,
  limiter: GuessLimiter,
  now: () => number = Date.now,
  maxBodyBytes = 4096,
): RouteSet[] {
  if (access.mode !== 'token') return [];
  const token = access.token;
  return [
    {
      path: '/ui/login',
      handlers: {
        GET: (req, res) => {
          const next = safeNext(
            new URL(req.url ?? '/', 'http://bpa.invalid').searchParams.get('next'),
          );
          sendPage(res, 200, loginForm(next));
        },
        POST: async (req, res) => {
          if (refuseCrossSite(req, res)) return;
          const blocked = limiter.blocked(clientOf(req), now());
          if (blocked) {
            tooMany(req, res, true, blocked);
            return;
          }
          const form = await readForm(req, maxBodyBytes);
          if (!form) {
            sendPage(res, 413, loginForm('/', 'The form is too large.'));
            return;
          }
          const next = safeNext(form.get('next'));
          const given = form.get('token') ?? '';
          const guess = limiter.check(
            clientOf(req),
            now(),
            () => given !== '' && sameSecret(given, token),
          );
          if (!guess.ok) {
            if (guess.blocked) tooMany(req, res, true, guess.blocked);
            else sendPage(res, 401, loginForm(next, 'That is not the token.'));
            return;
          }
          const secure = req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
          res.writeHead(303, {
            location: next,
            'set-cookie': `${COOKIE}=${sessionValue(token, Math.floor(now() / 1000) + SESSION_SECONDS)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_SECONDS}${secure}`,
            'cache-control': 'no-store',
          });
          res.end();
        },
      },
    },
    {
      path: '/ui/logout',
      handlers: {
        POST: (req, res) => {
          if (refuseCrossSite(req, res)) return;
          req.resume();
          res.writeHead(303, {
            location: '/ui/login',
            'set-cookie': `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
            'cache-control': 'no-store',
          });
          res.end();
        },
      },
    },
  ];
}

/**
 * Why a state-changing request was sent by a page of another site, or undefined when it was
 * not (the check of Go's CrossOriginProtection): the browser's `Sec-Fetch-Site` when it sends
 * one (`same-origin`, or `none` for an address typed or bookmarked, pass), else its `Origin`,
 * which must name the host asked for (`Host`, or `X-Forwarded-Host` from a proxy: a form of
 * another site can set neither). A request with neither header is no browser's form and
 * passes: curl and scripts stay as they were.
 */
export function crossSite(req: IncomingMessage): string | undefined {
  const fetchSite = req.headers['sec-fetch-site'];
  if (typeof fetchSite === 'string') {
    if (fetchSite === 'same-origin' || fetchSite === 'none') return undefined;
    return `Sec-Fetch-Site: ${fetchSite}`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  let from: URL | undefined;
  try {
    from = new URL(origin);
  } catch {
    // `Origin: null`: a sandboxed frame, a file, a redirect from elsewhere.
  }
  if (from && (from.protocol === 'http:' || from.protocol === 'https:')) {
    const forwarded = req.headers['x-forwarded-host'];
    const asked = [
      req.headers.host,
      (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0],
    ];
    for (const host of asked) {
      if (!host) continue;
      try {
        if (new URL(`${from.protocol}//${host.trim()}`).host === from.host) return undefined;
      } catch {
        // Not a host name: no match.
      }
    }
  }
  return `Origin: ${origin.slice(0, 200)}`;
}

/** 403 for a form sent from another site (see crossSite); true when it answered. */
function refuseCrossSite(req: IncomingMessage, res: ServerResponse): boolean {
  const why = crossSite(req);
  if (why === undefined) return false;
  req.resume();
  sendPage(
    res,
    403,
    loginLayout(
      html`<h1>Refused: sent from another site</h1>
        <p>
          bpa takes a log-in or log-out only from its own page, and the browser says this one came
          from elsewhere (${why}). Nothing was changed.
        </p>
        <p><a href="/ui/login">Open bpa's own login page</a></p>`,
    ),
  );
  return true;
}

async function readForm(req: IncomingMessage, max: number): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginForm(next: string, error?: string): Html {
  return loginLayout(
    html`<h1>bpa status page</h1>
      <form method="post" action="/ui/login">
        <label for="token">Token (the content of bpa's --ui-token-file)</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          required
          autofocus
        />
        <input type="hidden" name="next" value="${next}" />
        ${error ? html`<p class="bad">${error}</p>` : ''}
        <button type="submit">Log in</button>
      </form>`,
  );
}

function loginLayout(body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>bpa</title>
        <link rel="stylesheet" href="/ui/app.css" />
      </head>
      <body>
        <div class="login">${body}</div>
      </body>
    </html>`;
}

function sendPage(res: ServerResponse, status: number, page: Html): void {
  const body = Buffer.from(page.text);
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': body.length,
    'cache-control': 'no-store',
    'content-security-policy':
      "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  res.end(body);
}
