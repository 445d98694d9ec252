import type { HttpClient } from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import type { GitAuth } from './types.js';

/** A remote as bpa talks to it: a URL without credentials and the headers that carry them. */
export interface Remote {
  /** The URL with any user:password@ removed; safe to log and to store. */
  url: string;
  /** A fresh object on each call: isomorphic-git adds to the headers it is given. */
  headers(): Record<string, string>;
  /** Literal secrets to scrub from any text that leaves the git layer. */
  secrets: string[];
}

/**
 * Moves credentials out of the URL (they would otherwise end up in logs and in the cache's git
 * config) and into a basic-auth header sent with every request, which also saves the 401
 * round trip an auth callback would cost. Explicit `auth` wins over URL credentials.
 */
export function remoteFor(rawUrl: string, auth?: GitAuth): Remote {
  const { url, auth: fromUrl } = splitCredentials(rawUrl);
  const creds = credentialsOf(auth) ?? credentialsOf(fromUrl);
  const header = creds ? basicAuth(creds.username, creds.password) : undefined;
  const secrets = creds && creds.password ? [creds.password, header ?? ''] : [];
  return {
    url,
    secrets,
    headers: (): Record<string, string> => (header ? { authorization: header } : {}),
  };
}

export function splitCredentials(rawUrl: string): { url: string; auth?: GitAuth } {
  let parsed: URL;
  try {
    parsed = new URL(rawUrl);
  } catch {
    throw new StalledError('GIT_URL_INVALID', 'the repository URL is not a valid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new StalledError(
      'GIT_URL_UNSUPPORTED',
      `unsupported repository URL scheme ${parsed.protocol} (bpa fetches over http or https)`,
    );
  }
  if (!parsed.username && !parsed.password) return { url: stripSlash(parsed.toString()) };
  const auth: GitAuth = {
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
  parsed.username = '';
  parsed.password = '';
  return { url: stripSlash(parsed.toString()), auth };
}

function credentialsOf(
  auth: GitAuth | undefined,
): { username: string; password: string } | undefined {
  if (!auth) return undefined;
  if (auth.token) return { username: auth.username || 'x-access-token', password: auth.token };
  if (auth.username || auth.password)
    return { username: auth.username ?? '', password: auth.password ?? '' };
  return undefined;
}

function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** isomorphic-git appends /info/refs itself; a trailing slash would double it. */
function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** A remote and the HTTP client to reach it. */
export interface Link {
  remote: Remote;
  http: HttpClient;
}
