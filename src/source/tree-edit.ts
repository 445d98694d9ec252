import fs from 'node:fs';
import git, { type TreeEntry } from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import type { GitCache } from './working-copy.js';

/** Repo-relative path → new content, or null to delete the path. */
export type FileChanges = Record<string, string | null>;

/**
 * Writes a tree that is `base` with `changes` applied, touching only the trees on the changed
 * paths (the rest are reused by id). Returns undefined when the result is empty. Needs nothing
 * but the objects of `base` itself, so it works in a shallow repository and without a checkout.
 */
export async function editTree(
  dir: string,
  base: string | undefined,
  changes: FileChanges,
  cache: GitCache,
): Promise<string | undefined> {
  const nested = new Map<string, string | null>();
  for (const [path, content] of Object.entries(changes)) nested.set(checkPath(path), content);
  return editLevel(dir, base, nested, cache);
}

async function editLevel(
  dir: string,
  tree: string | undefined,
  changes: Map<string, string | null>,
  cache: GitCache,
  prefix = '',
): Promise<string | undefined> {
  const entries = new Map<string, TreeEntry>();
  if (tree) {
    for (const e of (await git.readTree({ fs, dir, oid: tree, cache })).tree)
      entries.set(e.path, e);
  }
  const below = new Map<string, Map<string, string | null>>();
  for (const [path, content] of changes) {
    const slash = path.indexOf('/');
    if (slash < 0) {
      // A directory where a report file goes is someone's: never replaced by a file.
      if (entries.get(path)?.type === 'tree') {
        throw new StalledError(
          'STATUS_PATH_TAKEN',
          `${prefix}${path} is a directory in the repository, where bpa writes a report file; bpa does not remove it`,
        );
      }
      if (content === null) {
        entries.delete(path);
      } else {
        const oid = await git.writeBlob({ fs, dir, blob: Buffer.from(content, 'utf8') });
        const old = entries.get(path);
        // An executable stays executable when its content is replaced.
        const mode = old?.type === 'blob' && old.mode === '100755' ? old.mode : '100644';
        entries.set(path, { mode, path, oid, type: 'blob' });
      }
      continue;
    }
    const name = path.slice(0, slash);
    let sub = below.get(name);
    if (!sub) below.set(name, (sub = new Map()));
    sub.set(path.slice(slash + 1), content);
  }
  for (const [name, sub] of below) {
    const old = entries.get(name);
    // A file or link where a directory is needed belongs to someone: never replaced by a tree.
    if (old && old.type !== 'tree') throw notADirectory(`${prefix}${name}`, old.mode);
    const oid = await editLevel(
      dir,
      old?.type === 'tree' ? old.oid : undefined,
      sub,
      cache,
      `${prefix}${name}/`,
    );
    if (oid) entries.set(name, { mode: '040000', path: name, oid, type: 'tree' });
    else if (old?.type === 'tree') entries.delete(name);
  }
  if (entries.size === 0) return undefined;
  return git.writeTree({ fs, dir, tree: [...entries.values()] });
}

/**
 * A path to write goes through an entry that is a file or a symbolic link, where a directory
 * is needed. Someone put it there: it is not replaced, and retrying changes nothing.
 */
function notADirectory(path: string, mode: string): StalledError {
  return new StalledError(
    'STATUS_PATH_TAKEN',
    `${path} is ${mode === '120000' ? 'a symbolic link' : 'a file'} in the repository, where bpa writes its reports as files below it; bpa does not remove it, and writes no report until it is renamed or removed`,
  );
}

function checkPath(path: string): string {
  const parts = path.split('/');
  if (
    path.startsWith('/') ||
    parts.some((p) => p === '' || p === '.' || p === '..' || p === '.git')
  ) {
    throw new Error(`invalid repository path ${JSON.stringify(path)}`);
  }
  return path;
}
