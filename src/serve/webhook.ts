import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../util/log.js';
import { clientOf, guessBlockMessage, sameSecret } from './auth.js';
import type { Guess, GuessBlock, GuessLimiter } from './guess-limit.js';
import type { WebhookResult } from './metrics.js';
import { sendJson } from './respond.js';
import type { TriggerOutcome } from './scheduler.js';

export type WebhookProvider = 'github' | 'gitea' | 'gitlab';

export interface WebhookVerdict {
  result: Extract<WebhookResult, 'accepted' | 'unauthorized'>;
  provider?: WebhookProvider;
  event?: string;
  /** Whether the event asks for a reconcile (a GitHub ping does not). */
  trigger: boolean;
  /** Set when the signature was not even checked: too many wrong ones (see GuessLimiter). */
  blocked?: GuessBlock;
}

/** Compares a credential through a guess limit (`isRight` is the comparison). */
export type WebhookCheck = (isRight: () => boolean) => Guess;

/** Without a limit: only the comparison. */
const UNLIMITED: WebhookCheck = (isRight) => ({ ok: isRight() });

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const GITHUB_SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const HEX_SIGNATURE = /^[0-9a-f]{64}$/i;

/**
 * Checks a webhook against the shared secret, in the formats of GitHub
 * (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`), Gitea and Forgejo
 * (`X-Gitea-Signature` / `X-Forgejo-Signature`: the same HMAC, bare hex) and GitLab
 * (`X-Gitlab-Token`: the secret itself). The first of these headers present decides; a
 * request with none of them is unauthorized. Every comparison takes constant time, and goes
 * through `check` (the webhook secret's guess limit): a GitLab token is a guess at the secret,
 * and so is a signature, which anyone can compute with a secret they guess. A header that is
 * no signature at all (not 64 hex digits) tests no secret and is refused uncounted.
 */
export function verifyWebhook(
  headers: IncomingHttpHeaders,
  body: Buffer,
  secret: string,
  check: WebhookCheck = UNLIMITED,
): WebhookVerdict {
  const denied: WebhookVerdict = { result: 'unauthorized', trigger: false };
  if (secret === '') return denied;
  const refused = (guess: Guess): WebhookVerdict | undefined =>
    guess.ok ? undefined : { ...denied, ...(guess.blocked ? { blocked: guess.blocked } : {}) };
  const github = single(headers['x-hub-signature-256']);
  if (github !== undefined) {
    const hex = GITHUB_SIGNATURE.exec(github)?.[1];
    if (hex === undefined) return denied;
    const no = refused(check(() => hmacMatches(hex, body, secret)));
    if (no) return no;
    const event = single(headers['x-github-event']) ?? single(headers['x-gitea-event']);
    return accepted('github', event, event !== 'ping');
  }
  const gitea = single(headers['x-gitea-signature']) ?? single(headers['x-forgejo-signature']);
  if (gitea !== undefined) {
    if (!HEX_SIGNATURE.test(gitea)) return denied;
    const no = refused(check(() => hmacMatches(gitea, body, secret)));
    if (no) return no;
    const event = single(headers['x-gitea-event']) ?? single(headers['x-forgejo-event']);
    return accepted('gitea', event, true);
  }
  const gitlab = single(headers['x-gitlab-token']);
  if (gitlab !== undefined) {
    const no = refused(check(() => sameSecret(gitlab, secret)));
    if (no) return no;
    return accepted('gitlab', single(headers['x-gitlab-event']), true);
  }
  return denied;
}

function accepted(
  provider: WebhookProvider,
  event: string | undefined,
  trigger: boolean,
): WebhookVerdict {
  return { result: 'accepted', provider, event, trigger };
}

function single(value: string | string[] | undefined): string | undefined {
  // A repeated signature header is ambiguous; treat it as absent-and-wrong, never pick one.
  if (Array.isArray(value)) return '';
  return value?.trim();
}

function hmacMatches(hex: string, body: Buffer, secret: string): boolean {
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(hex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export type BodyRead = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' };

/** Reads a request body of at most `limit` bytes, giving up as soon as it is exceeded. */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve({ ok: true, body: Buffer.concat(chunks) });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', reject);
  });
}

export interface WebhookHandlerOptions {
  secret: string;
  trigger: () => TriggerOutcome;
  record?: (result: WebhookResult) => void;
  log: Logger;
  maxBodyBytes?: number;
  /** The webhook secret's guess limit: wrong secrets and signatures count, a block is 429. */
  limiter?: GuessLimiter;
  now?: () => number;
}

/**
 * POST /hooks/git: 413 when the body is too large, 401 (and no reconcile) unless the
 * signature checks out, 429 while the limit on wrong secrets holds, else 202 and a trigger, which the scheduler coalesces with any
 * reconcile already in flight or queued.
 */
export async function handleWebhook(
  req: IncomingMessage,
  res: ServerResponse,
  opts: WebhookHandlerOptions,
): Promise<void> {
  const limit = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const delivery =
    single(req.headers['x-github-delivery']) ??
    single(req.headers['x-gitea-delivery']) ??
    single(req.headers['x-gitlab-event-uuid']);
  const log = opts.log.child({ remote: req.socket.remoteAddress, delivery });
  const read = await readBody(req, limit);
  if (!read.ok) {
    opts.record?.('bad_request');
    log.warn({ limit }, 'webhook rejected: body too large');
    // The rest of the body is not worth reading: answer, then drop the connection.
    res.setHeader('connection', 'close');
    sendJson(res, 413, { error: 'payload_too_large', message: `the body exceeds ${limit} bytes` });
    req.resume();
    return;
  }
  const limiter = opts.limiter;
  const verdict = verifyWebhook(
    req.headers,
    read.body,
    opts.secret,
    limiter && ((isRight) => limiter.check(clientOf(req), opts.now?.() ?? Date.now(), isRight)),
  );
  opts.record?.(verdict.result);
  if (verdict.blocked) {
    log.warn({ seconds: verdict.blocked.seconds }, 'webhook rejected: too many wrong secrets');
    res.setHeader('retry-after', String(verdict.blocked.seconds));
    sendJson(res, 429, {
      error: 'too_many_requests',
      message: guessBlockMessage(verdict.blocked),
    });
    return;
  }
  if (verdict.result !== 'accepted') {
    log.warn('webhook rejected: missing or invalid signature');
    sendJson(res, 401, { error: 'unauthorized', message: 'missing or invalid webhook signature' });
    return;
  }
  const { provider, event } = verdict;
  const outcome = verdict.trigger ? opts.trigger() : 'ignored';
  log.info({ provider, event, outcome }, 'webhook accepted');
  sendJson(res, 202, { accepted: true, provider, event: event ?? null, outcome });
}
