import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { splitCredentials } from './remote.js';

/**
 * The working-copy cache of a repository: one directory per URL (credentials removed, so
 * rotating a token keeps the cache) under <stateDir>/source/.
 */
export function sourceCacheDir(stateDir: string, url: string): string {
  const clean = splitCredentials(url).url;
  const id = createHash('sha256').update(clean).digest('hex').slice(0, 16);
  return join(stateDir, 'source', id);
}
