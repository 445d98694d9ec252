import fs from 'node:fs';
import git, { type TreeEntry } from 'isomorphic-git';
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
    const oid = await editLevel(dir, old?.type === 'tree' ? old.oid : undefined, sub, cache);
    if (oid) entries.set(name, { mode: '040000', path: name, oid, type: 'tree' });
    else if (old?.type === 'tree') entries.delete(name);
  }
  if (entries.size === 0) return undefined;
  return git.writeTree({ fs, dir, tree: [...entries.values()] });
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
