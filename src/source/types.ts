import type { HttpClient } from 'isomorphic-git';

/**
 * Credentials for an HTTP(S) git remote. A token is sent as the basic-auth password (the
 * convention of the common git hosts), with `username` or else `x-access-token` as the user.
 * Never logged and never written to the working-copy cache.
 */
export interface GitAuth {
  username?: string;
  password?: string;
  token?: string;
}

export interface RepoOptions {
  url: string;
  /** A branch, a tag (short or full ref name) or a 40-hex commit. */
  ref: string;
  /** Working-copy cache, e.g. <stateDir>/source/<hash of url> (see sourceCacheDir). */
  dir: string;
  /**
   * The site's directory in the repository ('' or absent: the whole repository). Only its
   * files are stored and checked out; the rest of the repository is never kept.
   */
  path?: string;
  /** History depth to fetch (default 1: shallow). */
  depth?: number;
  auth?: GitAuth;
  /** isomorphic-git HTTP client (default: isomorphic-git/http/node). */
  http?: HttpClient;
  /** Socket idle timeout per HTTP request, in ms (default 60 000). */
  timeoutMs?: number;
}

export interface Revision {
  /** The commit checked out (a tag is peeled to its commit). */
  commit: string;
  /** The full ref it came from (refs/heads/main, refs/tags/v1), or the commit itself. */
  ref: string;
  /** Epoch ms of the check against the remote. */
  fetchedAt: number;
}
