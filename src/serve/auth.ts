import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StalledError, messageOf } from '../util/errors.js';
import type { GuessBlock, GuessLimiter } from './guess-limit.js';
import { sendJson } from './respond.js';

/**
 * Secrets that `bpa serve` reads from files (the webhook secret, API and UI tokens): mounted
 * Kubernetes Secrets in a cluster, never flags or environment variables, which show in `ps`
 * and in the Pod spec. Surrounding whitespace is dropped; an empty file is refused, since an
 * empty token would let anyone in.
 */
export async function readSecretFile(file: string, what: string): Promise<string> {
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (err: unknown) {
    throw new StalledError(
      'SECRET_FILE_UNREADABLE',
      `cannot read ${what} from ${file} (${(err as { code?: string }).code ?? messageOf(err)}); check the path and its permissions`,
    );
  }
  if (text === '')
    throw new StalledError('SECRET_FILE_UNREADABLE', `${file} is empty: it must hold ${what}`);
  return text;
}

/**
 * Compares digests rather than the strings, in constant time, so that neither the content
 * nor the length of the secret leaks through the time a comparison takes.
 */
export function sameSecret(given: string, secret: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, if the request has one. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/** Whom a token check counts a guess against: the address the connection comes from. */
export function clientOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** What a 429 says: who guessed too often, and when a token is compared again. */
export function guessBlockMessage(block: GuessBlock): string {
  return block.scope === 'client'
    ? `too many wrong tokens from this address: try again in ${block.seconds} s`
    : `too many wrong tokens from many addresses: this token is not checked for ${block.seconds} s (but from an address that gave it in the last day), try again then`;
}

/**
 * True when the request carries `token` as its bearer token. Otherwise answers, and returns
 * false: 401 with a `WWW-Authenticate` challenge (the body never says whether a token was
 * close), or 429 with `Retry-After` while `limiter` blocks guessing (the token is then not
 * even compared). The request body is drained so that the connection can be reused.
 */
export function requireBearer(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  limiter: GuessLimiter,
  realm = 'bpa',
  now: number = Date.now(),
): boolean {
  const given = bearerToken(req);
  const guess =
    given === undefined
      ? undefined
      : limiter.check(clientOf(req), now, () => sameSecret(given, token));
  if (guess?.ok) return true;
  req.resume();
  if (guess?.blocked) {
    res.setHeader('retry-after', String(guess.blocked.seconds));
    sendJson(res, 429, { error: 'too_many_requests', message: guessBlockMessage(guess.blocked) });
    return false;
  }
  res.setHeader('www-authenticate', `Bearer realm="${realm}"`);
  sendJson(res, 401, {
    error: 'unauthorized',
    message:
      given === undefined
        ? 'this route needs an Authorization: Bearer token'
        : 'the bearer token is not the one configured',
  });
  return false;
}
