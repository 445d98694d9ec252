import fs from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import { GIT_CACHE_INVALID } from './classify.js';

/** isomorphic-git's object cache: pack indexes stay parsed for the length of one operation. */
export type GitCache = Record<string, unknown>;

/**
 * Creates the repository in `dir` unless it exists; records the credential-free URL. Refuses a
 * directory that holds files but no repository: it is not a cache bpa made, and a checkout (or
 * a cache reset) would destroy what is there.
 */
export async function ensureRepo(dir: string, url: string): Promise<void> {
  if (fs.existsSync(join(dir, '.git', 'config'))) return;
  if (!fs.existsSync(join(dir, '.git')) && !(await isEmptyWorkTree(dir))) {
    throw new StalledError(GIT_CACHE_INVALID, `${dir} is not empty and not a bpa source cache`);
  }
  await git.init({ fs, dir, defaultBranch: 'main' });
  await git.addRemote({ fs, dir, remote: 'origin', url, force: true });
}

/** The commit checked out in the working copy, or undefined for an empty or broken cache. */
export async function checkedOutCommit(dir: string): Promise<string | undefined> {
  if (!fs.existsSync(join(dir, '.git'))) return undefined;
  try {
    return await git.resolveRef({ fs, dir, ref: 'HEAD' });
  } catch {
    return undefined;
  }
}

export async function hasCommit(dir: string, oid: string, cache: GitCache): Promise<boolean> {
  try {
    await git.readCommit({ fs, dir, oid, cache });
    return true;
  } catch {
    return false;
  }
}

/** The commit an object names: itself, or what a (chain of) annotated tag(s) points to. */
export async function peelToCommit(dir: string, oid: string, cache: GitCache): Promise<string> {
  let current = oid;
  for (let hops = 0; hops < 10; hops++) {
    const { type, object } = await git.readObject({
      fs,
      dir,
      oid: current,
      cache,
      format: 'parsed',
    });
    if (type !== 'tag') return current;
    current = (object as { object: string }).object;
  }
  return current;
}

/** True when the working tree holds nothing but the repository itself. */
export async function isEmptyWorkTree(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).every((name) => name === '.git');
  } catch {
    return true;
  }
}

/** True for a directory bpa may wipe and re-create: absent, empty, or a git repository. */
export async function isDisposableCache(dir: string): Promise<boolean> {
  return fs.existsSync(join(dir, '.git')) || (await isEmptyWorkTree(dir));
}

/** How many packfiles the cache holds: each fetch adds one. */
export async function packCount(dir: string): Promise<number> {
  try {
    const names = await readdir(join(dir, '.git', 'objects', 'pack'));
    return names.filter((n) => n.endsWith('.pack')).length;
  } catch {
    return 0;
  }
}
