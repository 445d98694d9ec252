import { rm } from 'node:fs/promises';
import { StalledError } from '../util/errors.js';
import { GIT_REF_NOT_FOUND, isRemoteFailure, toGitError } from './classify.js';
import { httpClient } from './http-client.js';
import { isCommitId, resolveAdvertised } from './refs.js';
import { remoteFor } from './remote.js';
import { fetchEverything, fetchRemoteRef, listRemoteRefs, type Link } from './transport.js';
import type { RepoOptions, Revision } from './types.js';
import {
  checkedOutCommit,
  checkoutExact,
  ensureRepo,
  hasCommit,
  isDisposableCache,
  isEmptyWorkTree,
  packCount,
  peelToCommit,
  type GitCache,
} from './working-copy.js';

/** Past this many packfiles (one per fetch) the cache is re-cloned rather than grown further. */
const MAX_PACKS = 64;

interface Ctx extends Link {
  opts: RepoOptions;
  cache: GitCache;
}

/**
 * Brings the working copy in `opts.dir` to the commit `opts.ref` names on the remote.
 *
 * A poll whose remote is unchanged costs one ref advertisement (GET info/refs, protocol v1,
 * which lists every ref in that single response) and no pack download; a commit id that is
 * already checked out costs no request at all. Only a new commit is fetched, shallow by
 * default, and only when its objects are not already local (a status commit bpa pushed
 * itself, for instance).
 *
 * Callers serialize operations on one `dir` (one reconcile in flight per site).
 */
export async function syncRepo(
  opts: RepoOptions,
): Promise<{ revision: Revision; changed: boolean }> {
  const remote = remoteFor(opts.url, opts.auth);
  const ctx: Ctx = { opts, remote, http: httpClient(opts.http, opts.timeoutMs), cache: {} };
  try {
    return await syncOnce(ctx);
  } catch (err: unknown) {
    if (isRemoteFailure(err))
      throw toGitError(err, `fetching ${opts.ref}`, remote.url, remote.secrets);
    // Anything else is the local cache (a torn write, a corrupt pack): it is only a cache, so
    // start again from an empty directory once before giving up.
    if (!(await isDisposableCache(opts.dir))) {
      throw toGitError(err, `fetching ${opts.ref}`, remote.url, remote.secrets);
    }
    await rm(opts.dir, { recursive: true, force: true });
    try {
      return await syncOnce({ ...ctx, cache: {} });
    } catch (again: unknown) {
      throw toGitError(again, `fetching ${opts.ref}`, remote.url, remote.secrets);
    }
  }
}

async function syncOnce(ctx: Ctx): Promise<{ revision: Revision; changed: boolean }> {
  const { opts } = ctx;
  const fetchedAt = Date.now();
  const local = await checkedOutCommit(opts.dir);

  if (isCommitId(opts.ref)) {
    const commit = opts.ref.toLowerCase();
    const revision = { commit, ref: commit, fetchedAt };
    if (local === commit) return { revision, changed: false };
    const fresh = await prepare(ctx);
    if (!(await hasCommit(opts.dir, commit, ctx.cache))) await fetchCommitId(ctx, commit);
    await checkoutExact(opts.dir, commit, ctx.cache, fresh);
    return { revision, changed: true };
  }

  const target = resolveAdvertised(await listRemoteRefs(ctx), opts.ref);
  if (!target) {
    throw new StalledError(
      GIT_REF_NOT_FOUND,
      `ref ${opts.ref} does not exist in ${ctx.remote.url}`,
    );
  }
  if (local === target.commit) {
    return { revision: { commit: target.commit, ref: target.fullRef, fetchedAt }, changed: false };
  }
  const fresh = await prepare(ctx);
  let commit = target.commit;
  if (!(await hasCommit(opts.dir, commit, ctx.cache))) {
    // The ref may have moved since the advertisement: what the fetch brings is what counts.
    const fetched = await fetchRemoteRef(ctx, opts.dir, target.fullRef, opts.depth ?? 1, ctx.cache);
    commit = await peelToCommit(opts.dir, fetched, ctx.cache);
  }
  await checkoutExact(opts.dir, commit, ctx.cache, fresh);
  return { revision: { commit, ref: target.fullRef, fetchedAt }, changed: true };
}

/**
 * Creates the cache, or re-creates it when fetches have piled up too many packfiles. True when
 * the working tree is empty, so a checkout has nothing to clean up.
 */
async function prepare(ctx: Ctx): Promise<boolean> {
  if ((await packCount(ctx.opts.dir)) > MAX_PACKS) {
    await rm(ctx.opts.dir, { recursive: true, force: true });
  }
  await ensureRepo(ctx.opts.dir, ctx.remote.url);
  return isEmptyWorkTree(ctx.opts.dir);
}

/**
 * Fetches a commit by id. Over smart HTTP, git servers serve any commit reachable from a ref
 * (the advertisement may be stale between the two requests, so they must); a server that
 * refuses, or an id older than the shallow history, falls back to the full history of every
 * branch.
 */
async function fetchCommitId(ctx: Ctx, commit: string): Promise<void> {
  try {
    await fetchRemoteRef(ctx, ctx.opts.dir, commit, ctx.opts.depth ?? 1, ctx.cache);
  } catch (err: unknown) {
    if (!/not our ref|ERR /i.test(String((err as Error).message))) throw err;
  }
  if (await hasCommit(ctx.opts.dir, commit, ctx.cache)) return;
  await fetchEverything(ctx, ctx.opts.dir, ctx.cache);
  if (!(await hasCommit(ctx.opts.dir, commit, ctx.cache))) {
    throw new StalledError(GIT_REF_NOT_FOUND, `commit ${commit} is not in ${ctx.remote.url}`);
  }
}
