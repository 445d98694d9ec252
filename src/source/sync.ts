import { rm } from 'node:fs/promises';
import { StalledError } from '../util/errors.js';
import { GIT_REF_NOT_FOUND, isRemoteFailure, toGitError } from './classify.js';
import { httpClient } from './http-client.js';
import { isCommitId, resolveAdvertised } from './refs.js';
import { remoteFor } from './remote.js';
import { checkoutSite } from './site-checkout.js';
import { normalizeSitePath } from './site-path.js';
import { MissingObjectError } from './site-tree.js';
import {
  fetchEverything,
  fetchRemoteRef,
  fetchWhole,
  listRemoteRefs,
  recordSitePath,
  recordedSitePath,
  type Link,
} from './transport.js';
import type { RepoOptions, Revision } from './types.js';
import {
  checkedOutCommit,
  ensureRepo,
  hasCommit,
  isDisposableCache,
  packCount,
  peelToCommit,
  type GitCache,
} from './working-copy.js';

/** Past this many packfiles (one per fetch) the cache is re-cloned rather than grown further. */
const MAX_PACKS = 64;

interface Ctx extends Link {
  opts: RepoOptions;
  cache: GitCache;
  /** The site path, normalized: only its files are kept and checked out. */
  sitePath: string;
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
  const ctx: Ctx = {
    opts,
    remote,
    http: httpClient(opts.http, opts.timeoutMs),
    cache: {},
    sitePath: normalizeSitePath(opts.path ?? ''),
  };
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
  await dropForeignCache(ctx);
  const local = await checkedOutCommit(opts.dir);

  if (isCommitId(opts.ref)) {
    const commit = opts.ref.toLowerCase();
    const revision = { commit, ref: commit, fetchedAt };
    if (local === commit) return { revision, changed: false };
    await prepare(ctx);
    if (!(await hasCommit(opts.dir, commit, ctx.cache))) await fetchCommitId(ctx, commit);
    await checkout(ctx, commit);
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
  await prepare(ctx);
  let commit = target.commit;
  if (!(await hasCommit(opts.dir, commit, ctx.cache))) {
    // The ref may have moved since the advertisement: what the fetch brings is what counts.
    const fetched = await fetchRemoteRef(ctx, opts.dir, target.fullRef, opts.depth ?? 1, ctx.cache);
    commit = await peelToCommit(opts.dir, fetched, ctx.cache);
  }
  await checkout(ctx, commit);
  return { revision: { commit, ref: target.fullRef, fetchedAt }, changed: true };
}

/**
 * Creates the cache, or re-creates it when fetches have piled up too many packfiles, and
 * records which site path it keeps.
 */
async function prepare(ctx: Ctx): Promise<void> {
  if ((await packCount(ctx.opts.dir)) > MAX_PACKS) {
    await rm(ctx.opts.dir, { recursive: true, force: true });
  }
  await ensureRepo(ctx.opts.dir, ctx.remote.url);
  if ((await recordedSitePath(ctx.opts.dir)) !== ctx.sitePath) {
    await recordSitePath(ctx.opts.dir, ctx.sitePath);
  }
}

/**
 * A cache that keeps another site path's files (the path was changed), or one from before
 * caches kept only the site (its packs hold the whole repository, which reading any object
 * would load): it is only a cache, so it is cloned again.
 */
async function dropForeignCache(ctx: Ctx): Promise<void> {
  if ((await checkedOutCommit(ctx.opts.dir)) === undefined) return;
  if ((await recordedSitePath(ctx.opts.dir)) === ctx.sitePath) return;
  if (await isDisposableCache(ctx.opts.dir))
    await rm(ctx.opts.dir, { recursive: true, force: true });
}

/**
 * Checks out the site path of `commit`. A commit stored without all of its site files (one
 * fetched for a status push, which needs only trees) is fetched whole once first.
 */
async function checkout(ctx: Ctx, commit: string): Promise<void> {
  try {
    await checkoutSite(ctx.opts.dir, commit, ctx.sitePath, ctx.cache);
  } catch (err: unknown) {
    if (!(err instanceof MissingObjectError)) throw err;
    await fetchWhole(ctx, ctx.opts.dir, commit, ctx.opts.depth ?? 1);
    await checkoutSite(ctx.opts.dir, commit, ctx.sitePath, ctx.cache);
  }
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
  await fetchEverything(ctx, ctx.opts.dir, commit, ctx.cache);
  if (!(await hasCommit(ctx.opts.dir, commit, ctx.cache))) {
    throw new StalledError(GIT_REF_NOT_FOUND, `commit ${commit} is not in ${ctx.remote.url}`);
  }
}
