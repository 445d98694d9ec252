import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  readSuspensions,
  WHOLE_SITE,
  writeSuspensions,
  type Suspension,
  type Suspensions,
} from '../state/suspensions.js';
import type { Logger } from '../util/log.js';
import { printable } from '../util/printable.js';
import { messageOf } from '../util/errors.js';
import { requireBearer } from './auth.js';
import type { GuessLimiter } from './guess-limit.js';
import type { RouteSet } from './http.js';
import { sendJson } from './respond.js';
import { readBody } from './webhook.js';

export interface SuspendApiOptions {
  /** The bearer token (from --api-token-file). Without one the routes do not exist. */
  token: string;
  /** Counts wrong tokens: the guess limit of this token (each secret has its own). */
  limiter: GuessLimiter;
  stateDir: string;
  /**
   * The names of the site's clusters, as bpa read the site or as its state directory keeps
   * them (undefined when it knows of none at all): a cluster the site does not have is refused
   * rather than "suspended", since a typo would hold nothing.
   */
  clusters: () => Promise<readonly string[] | undefined> | readonly string[] | undefined;
  /** Asks for a reconcile, so the suspension reaches the reports (and the next commit) soon. */
  trigger: () => void;
  log: Logger;
  now?: () => number;
}

const MAX_BODY = 16 * 1024;
/** How long the rest of an oversized body is dropped before the connection is cut. */
const CUT_AFTER_MS = 1_000;
const NAME = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The emergency stop without a commit: `POST /api/v1/suspend` (`{"cluster": "east",
 * "reason": "…"}`, no cluster: the whole site), `POST /api/v1/resume` (`{"cluster": "east"}`,
 * no cluster: everything the API suspended) and `GET /api/v1/suspend`, each with the bearer
 * token. Suspensions are kept in the state directory (they survive a restart and hold for
 * every bpa applying with it), logged, and shown in the next reports, which are committed.
 * A cluster the site does not have is 404 (resuming one that is suspended is always allowed,
 * so that a suspension outliving its cluster can be lifted); when bpa knows of no cluster at
 * all, the name is taken with a warning, since an emergency stop must not wait.
 */
export function suspendRoutes(opts: SuspendApiOptions): RouteSet[] {
  // One change at a time: two calls at once must not lose one another's suspension.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(fn, fn);
    chain = next.catch(() => undefined);
    return next;
  };
  const change =
    (kind: 'suspend' | 'resume') =>
    async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      if (!requireBearer(req, res, opts.token, opts.limiter)) return;
      const body = await readRequest(req, res);
      if (!body) return;
      try {
        let unchecked: string | undefined;
        const suspended = await serial(async () => {
          const now = await readSuspensions(opts.stateDir);
          const target = body.cluster ?? WHOLE_SITE;
          if (body.cluster !== undefined && !(kind === 'resume' && now[body.cluster])) {
            const known = await opts.clusters();
            // An emergency stop is never refused for want of knowledge: with no list to check
            // against (a new state directory, the site not read yet), the name is taken.
            if (known === undefined)
              unchecked = `bpa does not know the site's clusters yet (it has not read the site, and its state directory names none), so it could not check that the site has a cluster ${body.cluster}: check the name`;
            else if (!known.includes(body.cluster)) return unknownCluster(body.cluster, known);
          }
          if (kind === 'suspend') {
            now[target] = {
              since: new Date(opts.now?.() ?? Date.now()).toISOString(),
              ...(body.reason ? { reason: body.reason } : {}),
            };
          } else if (body.cluster) {
            delete now[body.cluster];
          } else {
            for (const k of Object.keys(now)) delete now[k];
          }
          await writeSuspensions(opts.stateDir, now);
          return now;
        });
        if (suspended instanceof Refusal) {
          sendJson(res, suspended.status, suspended.body);
          return;
        }
        opts.log.warn(
          {
            cluster: body.cluster ?? 'all',
            reason: body.reason,
            remote: req.socket.remoteAddress,
            ...(unchecked ? { warning: unchecked } : {}),
          },
          kind === 'suspend'
            ? 'suspended through the API: nothing is applied until resumed'
            : 'resumed through the API',
        );
        opts.trigger();
        sendJson(res, 200, {
          suspended: view(suspended),
          ...(unchecked ? { warning: unchecked } : {}),
        });
      } catch (err: unknown) {
        opts.log.error({ err: messageOf(err) }, `${kind} through the API failed`);
        sendJson(res, 500, { error: 'internal', message: printable(messageOf(err)) });
      }
    };
  return [
    {
      path: '/api/v1/suspend',
      handlers: {
        POST: change('suspend'),
        GET: async (req, res) => {
          if (!requireBearer(req, res, opts.token, opts.limiter)) return;
          try {
            sendJson(res, 200, { suspended: view(await readSuspensions(opts.stateDir)) });
          } catch (err: unknown) {
            sendJson(res, 500, { error: 'internal', message: printable(messageOf(err)) });
          }
        },
      },
    },
    { path: '/api/v1/resume', handlers: { POST: change('resume') } },
  ];
}

/** An answer instead of a change. */
class Refusal {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {}
}

/** 404 for a cluster the site does not have, when bpa knows the site's clusters (`known`). */
function unknownCluster(name: string, known: readonly string[]): Refusal {
  const clusters = [...known].sort();
  return new Refusal(404, {
    error: 'unknown_cluster',
    message: `the site has no cluster ${name}${clusters.length ? `; its clusters: ${clusters.join(', ')}` : ' (it has no clusters)'}; nothing was changed`,
    clusters,
  });
}

/**
 * The whole site under its own field, so that no cluster name (`site` included) can hide it;
 * clusters by name, in a plain object built from entries, never through a prototype.
 */
function view(s: Suspensions): {
  site: Suspension | null;
  clusters: Record<string, Suspension>;
} {
  return {
    site: s[WHOLE_SITE] ?? null,
    clusters: Object.fromEntries(
      Object.entries(s)
        .filter(([k]) => k !== WHOLE_SITE)
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    ),
  };
}

interface ChangeRequest {
  cluster?: string;
  reason?: string;
}

/** The JSON body (may be empty); answers 400 or 413 itself and returns undefined. */
async function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<ChangeRequest | undefined> {
  const read = await readBody(req, MAX_BODY);
  if (!read.ok) {
    // As the artifact routes do: drop what still comes for a moment (so a small rest does not
    // turn the close into a reset the client sees instead of the answer), then cut the
    // connection rather than read a large body to its end.
    res.setHeader('connection', 'close');
    req.resume();
    sendJson(res, 413, {
      error: 'payload_too_large',
      message: `the body exceeds ${MAX_BODY} bytes`,
    });
    res.once('finish', () => {
      if (!req.readableEnded) setTimeout(() => req.destroy(), CUT_AFTER_MS).unref();
    });
    return undefined;
  }
  const bad = (message: string): undefined => {
    sendJson(res, 400, { error: 'bad_request', message });
    return undefined;
  };
  const text = read.body.toString('utf8').trim();
  if (!text) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return bad('the body is not JSON; send {"cluster": "<name>", "reason": "<why>"} or nothing');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return bad('the body must be a JSON object');
  const { cluster, reason, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return bad(`unknown field ${unknown.join(', ')}: only cluster and reason`);
  if (cluster !== undefined && (typeof cluster !== 'string' || !NAME.test(cluster)))
    return bad('cluster must be a cluster name (lowercase letters, digits, - and .)');
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 500))
    return bad('reason must be a string of at most 500 characters');
  return {
    ...(cluster ? { cluster } : {}),
    ...(reason ? { reason: printable(reason).trim() } : {}),
  };
}
