import { createHash } from 'node:crypto';
import fs from 'node:fs';
import git from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import { GIT_PATH_NOT_FOUND } from './classify.js';
import { STATUS_DIR, normalizeSitePath } from './site-path.js';

export { STATUS_DIR, normalizeSitePath };

/**
 * A digest of the site's input at `commit`: the tree at `sitePath` without its `status/`
 * subtree. Git trees are content-addressed, so hashing the site root's entries (name, mode,
 * object id) covers every file below them: a commit that only touches status/ or paths outside
 * the site keeps the digest, any edit inside the site changes it.
 */
export async function inputDigest(dir: string, commit: string, sitePath: string): Promise<string> {
  const path = normalizeSitePath(sitePath);
  const cache = {};
  let entries: { mode: string; path: string; oid: string; type: string }[];
  try {
    const res = await git.readTree({
      fs,
      dir,
      oid: commit,
      cache,
      ...(path ? { filepath: path } : {}),
    });
    entries = res.tree;
  } catch (err: unknown) {
    const code = (err as { code?: unknown }).code;
    if (code === 'NotFoundError' || code === 'ObjectTypeError') {
      throw new StalledError(
        GIT_PATH_NOT_FOUND,
        `site path ${path || '.'} is not a directory in commit ${commit.slice(0, 12)}`,
      );
    }
    throw err;
  }
  return digestEntries(path, entries);
}

/** Pure part of inputDigest: the hash of a site root's tree entries, status/ left out. */
export function digestEntries(
  sitePath: string,
  entries: readonly { mode: string; path: string; oid: string; type: string }[],
): string {
  const h = createHash('sha256');
  h.update(`bpa-input-v1\0${sitePath}\0`);
  const kept = entries
    .filter((e) => e.path !== STATUS_DIR)
    .map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.path}\n`);
  // Trees from git are already sorted; sorting again keeps the digest independent of the caller.
  kept.sort();
  for (const line of kept) h.update(line);
  return h.digest('hex');
}
