// Reads bpa's earlier reports from the branch they were pushed to, when that is not the branch
// bpa follows (--status-branch): the working copy of the followed branch does not have them.
import fs from 'node:fs';
import git from 'isomorphic-git';
import { toGitError } from './classify.js';
import { httpClient } from './http-client.js';
import { remoteFor } from './remote.js';
import { fetchRemoteRef, listRemoteRefs, type Link } from './transport.js';
import type { RepoOptions } from './types.js';
import { ensureRepo, hasCommit, type GitCache } from './working-copy.js';

/**
 * The files directly in `dir` (repository-relative) at the remote head of `branch`, by name;
 * empty when the branch or the directory does not exist yet. The head is fetched into the
 * cache's object store only (no checkout, no local branch), as the status push does.
 */
export async function readBranchDir(
  repo: RepoOptions,
  branch: string,
  dir: string,
): Promise<Map<string, string>> {
  const remote = remoteFor(repo.url, repo.auth);
  const link: Link = { remote, http: httpClient(repo.http, repo.timeoutMs) };
  const cache: GitCache = {};
  const out = new Map<string, string>();
  try {
    await ensureRepo(repo.dir, remote.url);
    const ref = `refs/heads/${branch}`;
    const advertised = (await listRemoteRefs(link)).find((r) => r.ref === ref);
    if (!advertised) return out;
    const head = (await hasCommit(repo.dir, advertised.oid, cache))
      ? advertised.oid
      : await fetchRemoteRef(link, repo.dir, ref, repo.depth ?? 1, cache);
    let entries: Array<{ path: string; oid: string; type: string }>;
    try {
      entries = (
        await git.readTree({
          fs,
          dir: repo.dir,
          oid: head,
          cache,
          ...(dir ? { filepath: dir } : {}),
        })
      ).tree;
    } catch (err: unknown) {
      if ((err as { code?: string }).code === 'NotFoundError') return out;
      throw err;
    }
    for (const e of entries) {
      if (e.type !== 'blob') continue;
      const { blob } = await git.readBlob({ fs, dir: repo.dir, oid: e.oid, cache });
      out.set(e.path, Buffer.from(blob).toString('utf8'));
    }
    return out;
  } catch (err: unknown) {
    throw toGitError(err, `reading the reports on ${branch}`, remote.url, remote.secrets);
  }
}
