import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { messageOf } from '../util/errors.js';
import { redact, sanitize } from '../util/redact.js';
import type { Logger } from '../util/log.js';
import type { GuessLimiter } from './guess-limit.js';
import type { BpaMetrics } from './metrics.js';
import { sendJson } from './respond.js';
import type { Scheduler } from './scheduler.js';
import { handleWebhook } from './webhook.js';

export interface HttpServerOptions {
  listen: { host: string; port: number };
  scheduler: Scheduler;
  metrics: BpaMetrics;
  /** Enables POST /hooks/git; without it the route does not exist (404). */
  webhookSecret?: string;
  /** Counts wrong webhook secrets and signatures (the webhook secret's own limit). */
  webhookLimiter?: GuessLimiter;
  leader?: { isLeader(): boolean };
  /** Why bpa cannot follow its site now (operator mode: a watch that cannot be re-established). */
  notReady?: () => string | undefined;
  log: Logger;
  /** /healthz fails once a reconcile has run (or a timed one been overdue) this long (1 h). */
  maxRunMs?: number;
  /** Largest webhook body accepted (1 MiB). */
  maxBodyBytes?: number;
  /**
   * More routes, from the features that serve under their own path (each owns its module):
   * an exact path, or a prefix ending in `/` that takes every path under it.
   */
  routes?: RouteSet[];
  /** Longest a request may take to arrive, body included (30 s; artifact uploads need more). */
  requestTimeoutMs?: number;
}

/** A handler per method for one path, or for every path under a prefix ending in `/`. */
export interface RouteSet {
  path: string;
  handlers: Partial<Record<string, Handler>>;
}

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

/** `path` is the request's decoded-free pathname (prefix routes read their rest from it). */
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) => Promise<void> | void;
type Routes = Record<string, Partial<Record<string, Handler>>>;

/** How long close() lets requests in progress finish before cutting their connections. */
const CLOSE_GRACE_MS = 2_000;

/**
 * The controller's HTTP interface: probes, metrics, the webhook and the status API, on plain
 * node:http. No response or log line ever carries the webhook secret.
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const log = opts.log.child({ component: 'http' });
  const routes = buildRoutes(opts, log);
  const server = createServer((req, res) => {
    void dispatch(routes, req, res, log);
  });
  // Slow or stalled clients must not hold sockets open indefinitely.
  server.headersTimeout = 10_000;
  server.requestTimeout = opts.requestTimeoutMs ?? 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen.port, opts.listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url, webhook: opts.webhookSecret ? 'enabled' : 'disabled' }, 'listening');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      cut.unref();
      server.close(() => {
        clearTimeout(cut);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { url, close };
}

function buildRoutes(opts: HttpServerOptions, log: Logger): Routes {
  const { scheduler, metrics, leader } = opts;
  const maxRunMs = opts.maxRunMs ?? 3_600_000;
  const routes: Routes = {
    '/healthz': {
      GET: (_req, res) => {
        // Answering at all shows the event loop turns; a wedged scheduler needs a restart.
        const reason = scheduler.wedged(maxRunMs);
        if (reason) sendJson(res, 500, { status: 'unhealthy', reason });
        else sendJson(res, 200, { status: 'ok' });
      },
    },
    '/readyz': {
      GET: (_req, res) => {
        const state = scheduler.state();
        const blocked = opts.notReady?.();
        if (state.stopping) sendJson(res, 503, { status: 'stopping' });
        else if (blocked) sendJson(res, 503, { status: 'not-ready', reason: blocked });
        else if (leader && !leader.isLeader()) sendJson(res, 200, { status: 'standby' });
        else if (state.completedRuns > 0) sendJson(res, 200, { status: 'ready' });
        else
          sendJson(res, 503, {
            status: 'starting',
            reason: 'the first reconcile has not finished',
          });
      },
    },
    '/metrics': {
      GET: async (_req, res) => {
        const text = await metrics.render();
        res.writeHead(200, {
          'content-type': metrics.contentType,
          'content-length': Buffer.byteLength(text),
          'cache-control': 'no-store',
        });
        res.end(text);
      },
    },
    '/api/v1/status': {
      GET: (_req, res) => {
        sendJson(res, 200, statusDocument(scheduler, leader));
      },
    },
  };
  const secret = opts.webhookSecret;
  if (secret) {
    routes['/hooks/git'] = {
      POST: (req, res) =>
        handleWebhook(req, res, {
          secret,
          trigger: () => scheduler.trigger('webhook'),
          record: (result) => metrics.recordWebhook(result),
          log,
          maxBodyBytes: opts.maxBodyBytes,
          ...(opts.webhookLimiter ? { limiter: opts.webhookLimiter } : {}),
        }),
    };
  }
  for (const extra of opts.routes ?? []) {
    if (routes[extra.path]) throw new Error(`two handlers for the route ${extra.path}`);
    routes[extra.path] = extra.handlers;
  }
  return routes;
}

/** The handlers for a path: its exact route, else the longest prefix route (`/x/`) above it. */
function routeFor(routes: Routes, path: string): Routes[string] | undefined {
  const exact = routes[path];
  if (exact) return exact;
  // "/a/b/c" tries "/a/b/", then "/a/"; "/" alone is never a prefix route.
  let end = path.lastIndexOf('/', path.length - 2);
  for (; end > 0; end = path.lastIndexOf('/', end - 1)) {
    const prefix = routes[path.slice(0, end + 1)];
    if (prefix) return prefix;
  }
  return undefined;
}

/** GET /api/v1/status: the site status of the last reconcile and what the scheduler is doing. */
export function statusDocument(
  scheduler: Scheduler,
  leader: { isLeader(): boolean } | undefined,
): Record<string, unknown> {
  const state = scheduler.state();
  const run = state.lastRun;
  const summary = run?.summary;
  const error = summary?.error && { ...summary.error, message: redact(summary.error.message) };
  return {
    status: summary?.status ?? null,
    lastReconcile: run
      ? {
          trigger: run.trigger,
          result: run.summary.result,
          revision: run.summary.revision ?? null,
          appliedRevision: run.summary.appliedRevision ?? null,
          clusters: run.summary.clusters,
          error: error ?? null,
          startedAt: iso(run.startedAt),
          finishedAt: iso(run.finishedAt),
        }
      : null,
    running: state.running,
    runningSince: iso(state.runningSince),
    queued: state.queued,
    nextRunAt: iso(state.nextRunAt),
    lastSuccess: iso(state.lastSuccessAt),
    consecutiveFailures: state.consecutiveFailures,
    leader: leader ? leader.isLeader() : null,
  };
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

async function dispatch(
  routes: Routes,
  req: IncomingMessage,
  res: ServerResponse,
  log: Logger,
): Promise<void> {
  const method = req.method ?? 'GET';
  const path = new URL(req.url ?? '/', 'http://bpa.invalid').pathname;
  const route = routeFor(routes, path);
  if (!route) {
    req.resume();
    sendJson(res, 404, { error: 'not_found', message: `no route for ${path}` });
    return;
  }
  // HEAD is answered like GET; node:http leaves the body out.
  const handler = route[method] ?? (method === 'HEAD' ? route.GET : undefined);
  if (!handler) {
    req.resume();
    res.setHeader('allow', Object.keys(route).join(', '));
    sendJson(res, 405, {
      error: 'method_not_allowed',
      message: `${method} is not allowed on ${path}`,
    });
    return;
  }
  try {
    await handler(req, res, path);
    log.debug({ method, path, status: res.statusCode }, 'request');
  } catch (err: unknown) {
    log.error({ method, path, err: sanitize(messageOf(err)) }, 'request failed');
    if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: 'internal error' });
    else res.destroy();
  }
}
