// The git layer of the source stage: follow a ref of an HTTP(S) repository into a working-copy
// cache, and digest the site's input at a commit.
export type { GitAuth, RepoOptions, Revision } from './types.js';
export { syncRepo } from './sync.js';
export { inputDigest, digestEntries, normalizeSitePath, STATUS_DIR } from './digest.js';
export { sourceCacheDir } from './cache-dir.js';
export { remoteFor, splitCredentials, type Remote } from './remote.js';
export { httpClient } from './http-client.js';
export {
  GIT_AUTH,
  GIT_CACHE_INVALID,
  GIT_FAILED,
  GIT_PATH_NOT_FOUND,
  GIT_PUSH_DECLINED,
  GIT_PUSH_REJECTED,
  GIT_REF_NOT_FOUND,
  GIT_REPO_NOT_FOUND,
  GIT_UNAVAILABLE,
  toGitError,
} from './classify.js';
