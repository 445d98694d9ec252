import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StalledError, messageOf } from '../util/errors.js';
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

/**
 * True when the request carries `token` as its bearer token; otherwise answers 401 with a
 * `WWW-Authenticate` challenge (the body never says whether a token was close) and returns
 * false. The request body is drained so that the connection can be reused.
 */
export function requireBearer(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  realm = 'bpa',
): boolean {
  const given = bearerToken(req);
  if (given !== undefined && sameSecret(given, token)) return true;
  req.resume();
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
