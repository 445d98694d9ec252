// Commits status reports to the site repository and pushes them, without ever force-pushing or
// merging: a push that loses a race is redone from scratch on top of the new remote head.
import fs from 'node:fs';
import git from 'isomorphic-git';
import { StalledError, TransientError } from '../util/errors.js';
import { sanitize } from '../util/redact.js';
import { backoff, retry } from '../util/retry.js';
import { GIT_PUSH_DECLINED, GIT_PUSH_REJECTED, redact, toGitError } from './classify.js';
import { httpClient } from './http-client.js';
import { remoteFor } from './remote.js';
import { fetchRemoteRef, listRemoteRefs, type Link } from './transport.js';
import { editTree } from './tree-edit.js';
import type { RepoOptions } from './types.js';
import { ensureRepo, hasCommit, type GitCache } from './working-copy.js';

export interface StatusCommit {
  /** Repo-relative path → content (null deletes). */
  files: Record<string, string | null>;
  message: string;
  author: { name: string; email: string };
  /** The branch to push to: the source branch, or a separate status branch. */
  branch: string;
}

export interface PushOptions {
  /** Attempts before giving up with GIT_PUSH_REJECTED (default 5). */
  maxAttempts?: number;
  /** First backoff after a rejected push, doubled each time, with jitter (default 200 ms). */
  backoffMs?: number;
  /** Commit timestamp source (default Date.now). */
  now?: () => number;
}

/** Local ref the status commit is built on; never a branch, so HEAD and the checkout stay put. */
export const PUSH_REF = 'refs/bpa/status-push';
const BACKOFF_CAP_MS = 5_000;

/**
 * Commits `commit.files` on top of the current remote head of `commit.branch` and pushes it.
 *
 * - The commit is built from objects alone (blobs and trees written into the cache's object
 *   store, no checkout), so the working copy bpa is applying is never touched, and a shallow
 *   cache is enough.
 * - When the files already hold that content, nothing is committed: `commit` is undefined.
 * - A status branch that does not exist yet is created as an orphan holding only the status
 *   files: it is an audit trail of reports, not a second copy of the site that would go stale.
 * - A rejected push (someone pushed in between: non-fast-forward, or the ref moved between
 *   the advertisement and the update) is redone: fetch the new head, re-create the commit on
 *   it, push again, up to `maxAttempts` times with a growing backoff. The other commit is
 *   always kept as the parent, so nothing of it is lost.
 *
 * Callers serialize operations on one `dir` (one reconcile in flight per site).
 */
export async function commitAndPush(
  repo: RepoOptions,
  commit: StatusCommit,
  opts: PushOptions = {},
): Promise<{ commit: string | undefined; attempts: number }> {
  const remote = remoteFor(repo.url, repo.auth);
  const link: Link = { remote, http: httpClient(repo.http, repo.timeoutMs) };
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
  const branchRef = `refs/heads/${commit.branch}`;
  let lastReason = '';

  const attempt = async (n: number): Promise<{ commit: string | undefined; attempts: number }> => {
    const cache: GitCache = {};
    try {
      await ensureRepo(repo.dir, remote.url);
      const head = await remoteHead(link, repo, branchRef, cache);
      const baseTree = head
        ? (await git.readCommit({ fs, dir: repo.dir, oid: head, cache })).commit.tree
        : undefined;
      let tree = await editTree(repo.dir, baseTree, commit.files, cache);
      if (tree === undefined) {
        if (!head) return { commit: undefined, attempts: n };
        tree = await git.writeTree({ fs, dir: repo.dir, tree: [] });
      }
      if (tree === baseTree) return { commit: undefined, attempts: n };
      const created = await writeStatusCommit(
        repo.dir,
        tree,
        head,
        commit,
        (opts.now ?? Date.now)(),
      );
      await git.writeRef({ fs, dir: repo.dir, ref: PUSH_REF, value: created, force: true });
      await git.push({
        fs,
        http: link.http,
        dir: repo.dir,
        url: remote.url,
        ref: PUSH_REF,
        remoteRef: branchRef,
        headers: remote.headers(),
        cache,
      });
      return { commit: created, attempts: n };
    } catch (err: unknown) {
      const rejection = rejectionOf(err);
      if (rejection === undefined) {
        throw toGitError(err, `pushing status to ${commit.branch}`, remote.url, remote.secrets);
      }
      lastReason = redact(sanitize(rejection), remote.secrets);
      if (/declined|protected|hook/i.test(rejection)) {
        throw new StalledError(
          GIT_PUSH_DECLINED,
          `the server declined the status push to ${commit.branch}: ${lastReason}`,
        );
      }
      throw new LostRace();
    }
  };
  try {
    return await retry(attempt, {
      attempts: maxAttempts,
      retryIf: (err) => err instanceof LostRace,
      delayMs: backoff(opts.backoffMs ?? 200, BACKOFF_CAP_MS),
    });
  } catch (err: unknown) {
    if (!(err instanceof LostRace)) throw err;
    throw new TransientError(
      GIT_PUSH_REJECTED,
      `status push to ${commit.branch} rejected ${maxAttempts} times (${lastReason}); another writer keeps moving the branch`,
    );
  }
}

/** The push lost a race with another writer: redone on the new head. */
class LostRace extends Error {}

/** The commit the branch points to on the remote, fetched if not local; undefined if absent. */
async function remoteHead(
  link: Link,
  repo: RepoOptions,
  branchRef: string,
  cache: GitCache,
): Promise<string | undefined> {
  const advertised = (await listRemoteRefs(link)).find((r) => r.ref === branchRef);
  if (!advertised) return undefined;
  if (await hasCommit(repo.dir, advertised.oid, cache)) return advertised.oid;
  // The branch may have moved again since the advertisement; the fetch result is what we build on.
  return fetchRemoteRef(link, repo.dir, branchRef, repo.depth ?? 1, cache);
}

async function writeStatusCommit(
  dir: string,
  tree: string,
  parent: string | undefined,
  commit: StatusCommit,
  nowMs: number,
): Promise<string> {
  const who = {
    name: commit.author.name,
    email: commit.author.email,
    timestamp: Math.floor(nowMs / 1000),
    timezoneOffset: 0,
  };
  return git.writeCommit({
    fs,
    dir,
    commit: {
      message: `${commit.message.replace(/\s+$/, '')}\n`,
      tree,
      parent: parent ? [parent] : [],
      author: who,
      committer: who,
    },
  });
}

/**
 * Why a push was refused, when the refusal is a lost race or a server policy rather than a
 * transport failure: isomorphic-git's own fast-forward check (PushRejectedError) or a ref
 * update the server refused (GitPushError).
 */
function rejectionOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; data?: { reason?: unknown; prettyDetails?: unknown } } | null;
  if (e?.code === 'PushRejectedError') return String(e.data?.reason ?? 'rejected');
  if (e?.code === 'GitPushError') return String(e.data?.prettyDetails ?? 'rejected').trim();
  return undefined;
}
