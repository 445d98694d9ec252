import { BpaError, StalledError, TransientError, messageOf } from '../util/errors.js';
import { sanitize } from '../util/redact.js';

/** Error codes of the git layer. */
export const GIT_UNAVAILABLE = 'GIT_UNAVAILABLE';
export const GIT_AUTH = 'GIT_AUTH';
export const GIT_REF_NOT_FOUND = 'GIT_REF_NOT_FOUND';
export const GIT_REPO_NOT_FOUND = 'GIT_REPO_NOT_FOUND';
export const GIT_PATH_NOT_FOUND = 'GIT_PATH_NOT_FOUND';
export const GIT_PUSH_REJECTED = 'GIT_PUSH_REJECTED';
export const GIT_PUSH_DECLINED = 'GIT_PUSH_DECLINED';
export const GIT_FAILED = 'GIT_FAILED';
export const GIT_CACHE_INVALID = 'GIT_CACHE_INVALID';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

interface ErrorLike {
  code?: unknown;
  data?: { statusCode?: unknown };
  message?: unknown;
}

/** The HTTP status of an isomorphic-git HttpError, if that is what `err` is. */
export function httpStatusOf(err: unknown): number | undefined {
  const e = err as ErrorLike | null;
  if (e && e.code === 'HttpError' && typeof e.data?.statusCode === 'number')
    return e.data.statusCode;
  return undefined;
}

/** True when the failure came from the network or the git server rather than the local cache. */
export function isRemoteFailure(err: unknown): boolean {
  if (err instanceof BpaError) return true;
  const e = err as ErrorLike | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (httpStatusOf(err) !== undefined) return true;
  if (NETWORK_CODES.has(code)) return true;
  if (code === 'SmartHttpError' || code === 'RemoteCapabilityError') return true;
  if (code === 'GitPushError' || code === 'PushRejectedError') return true;
  return /timed out|socket hang up|not our ref|upload-pack|receive-pack/i.test(messageOf(err));
}

/**
 * Turns whatever isomorphic-git or Node threw into a bpa error with a stable code and a retry
 * decision. The message names the remote by its credential-free URL and is scrubbed of every
 * secret the caller knows about, in case a server or library echoed one back.
 */
export function toGitError(
  err: unknown,
  what: string,
  url: string,
  secrets: readonly string[],
): BpaError {
  if (err instanceof BpaError) return err;
  const status = httpStatusOf(err);
  const clean = (text: string): string => redact(sanitize(text), secrets);
  const where = clean(url);
  if (status === 401 || status === 403) {
    return new StalledError(GIT_AUTH, `${what}: ${where} refused the credentials (HTTP ${status})`);
  }
  if (status === 404) {
    return new StalledError(
      GIT_REPO_NOT_FOUND,
      `${what}: no git repository at ${where} (HTTP 404)`,
    );
  }
  if (status !== undefined) {
    return new TransientError(GIT_UNAVAILABLE, `${what}: ${where} answered HTTP ${status}`);
  }
  const e = err as ErrorLike | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code) || /timed out|socket hang up/i.test(messageOf(err))) {
    return new TransientError(
      GIT_UNAVAILABLE,
      `${what}: ${where} is unreachable (${code || clean(messageOf(err))})`,
    );
  }
  if (code === 'SmartHttpError') {
    return new TransientError(
      GIT_UNAVAILABLE,
      `${what}: ${where} did not answer as a git smart-HTTP server`,
    );
  }
  return new TransientError(GIT_FAILED, `${what}: ${clean(messageOf(err))}`);
}

/** Replaces each literal secret in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}
