// The recent commits of a site repository as bpa has them locally, for the status page.
import type { ReadCommitResult } from 'isomorphic-git';

export interface HistoryEntry {
  commit: string;
  subject: string;
  author: string;
  /** ISO time of the commit (the committer's). */
  at: string;
  /** A status commit of bpa: the revision it reported on (its Bpa-Source trailer). */
  bpaSource?: string;
  /** The plan hash of a status commit (Bpa-Plan). */
  bpaPlan?: string;
}

/**
 * The commits reachable from `refs` (first parents) in the local repository `dir`, newest
 * first, up to `limit`. bpa fetches shallow, so a walk ends where the local history ends: a
 * missing parent is the end of what bpa saw, not an error.
 */
export async function readHistory(
  dir: string,
  refs: readonly string[],
  limit: number,
): Promise<HistoryEntry[]> {
  const seen = new Map<string, HistoryEntry>();
  for (const ref of refs)
    for (const e of await walk(dir, ref, limit)) if (!seen.has(e.commit)) seen.set(e.commit, e);
  return [...seen.values()]
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
    .slice(0, limit);
}

async function walk(dir: string, ref: string, limit: number): Promise<HistoryEntry[]> {
  const [{ default: git }, fs] = await Promise.all([import('isomorphic-git'), import('node:fs')]);
  const out: HistoryEntry[] = [];
  let oid: string | undefined;
  try {
    oid = await git.resolveRef({ fs, dir, ref });
  } catch {
    return out;
  }
  while (oid && out.length < limit) {
    let read: ReadCommitResult;
    try {
      read = await git.readCommit({ fs, dir, oid });
    } catch {
      break;
    }
    out.push(entryOf(read));
    oid = read.commit.parent[0];
  }
  return out;
}

function entryOf(read: ReadCommitResult): HistoryEntry {
  const { commit } = read;
  const message = commit.message;
  const source = /^Bpa-Source: (\S+)$/m.exec(message)?.[1];
  const plan = /^Bpa-Plan: (\S+)$/m.exec(message)?.[1];
  return {
    commit: read.oid,
    subject: message.split('\n')[0] ?? '',
    author: commit.author.name,
    at: new Date(commit.committer.timestamp * 1000).toISOString(),
    ...(source ? { bpaSource: source } : {}),
    ...(plan ? { bpaPlan: plan } : {}),
  };
}
