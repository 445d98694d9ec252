import fs from 'node:fs';
import git from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import { GIT_REF_NOT_FOUND } from './classify.js';
import type { AdvertisedRef } from './refs.js';
import type { Link } from './remote.js';
import { fetchFiltered } from './filtered-fetch.js';
import { isCommitId } from './refs.js';
import { advertise, type Advertisement } from './upload-pack.js';
import type { GitCache } from './working-copy.js';

export type { Link } from './remote.js';

/** Every ref the remote advertises, in one request (GET info/refs). */
export async function listRemoteRefs(link: Link): Promise<AdvertisedRef[]> {
  return git.listServerRefs({
    http: link.http,
    url: link.remote.url,
    headers: link.remote.headers(),
    // v1 answers with every ref in the GET itself; v2 would need a second request (ls-refs).
    protocolVersion: 1,
    peelTags: true,
  });
}

/**
 * Fetches one ref (or commit id) into the repository at `dir`; returns the object the remote
 * ref names. The local HEAD is offered as a "have", so only objects new since the last sync
 * travel, even in a shallow repository. Only commits, trees, tags and the blobs under the
 * repository's site path are stored (see filtered-fetch.ts).
 */
export async function fetchRemoteRef(
  link: Link,
  dir: string,
  ref: string,
  depth: number,
  _cache?: GitCache,
): Promise<string> {
  const adv = await advertise(link);
  const oid = isCommitId(ref) ? ref.toLowerCase() : adv.refs.find((r) => r.ref === ref)?.oid;
  if (!oid) {
    throw new StalledError(GIT_REF_NOT_FOUND, `ref ${ref} does not exist in ${link.remote.url}`);
  }
  await fetchKeeping(link, dir, adv, { wants: [oid], keep: [oid], depth });
  return oid;
}

/** Fetches the whole history of every branch and tag, keeping the site files of `keep`. */
export async function fetchEverything(
  link: Link,
  dir: string,
  keep: string,
  _cache?: GitCache,
): Promise<void> {
  const adv = await advertise(link);
  const wants = adv.refs
    .filter((r) => r.ref.startsWith('refs/heads/') || r.ref.startsWith('refs/tags/'))
    .map((r) => r.oid);
  // git's own "infinite" depth: deepens a shallow repository to the full history.
  await fetchKeeping(link, dir, adv, { wants, keep: [keep], depth: 0x7fffffff });
}

/**
 * Fetches `commit` again without offering anything as common ground: for a commit that is
 * stored without all of its site files (fetched for a status push, say).
 */
export async function fetchWhole(
  link: Link,
  dir: string,
  commit: string,
  depth: number,
): Promise<void> {
  const adv = await advertise(link);
  await fetchKeeping(link, dir, adv, { wants: [commit], keep: [commit], depth }, false);
}

async function fetchKeeping(
  link: Link,
  dir: string,
  adv: Advertisement,
  req: { wants: string[]; keep: string[]; depth: number },
  withHaves = true,
): Promise<void> {
  if (!req.wants.length) return;
  const sitePath = (await recordedSitePath(dir)) ?? '';
  const first = await fetchFiltered(link, dir, adv, { ...req, sitePath, withHaves });
  if (!first.missing) return;
  // The server left out blobs bpa's haves imply but bpa never kept (a file copied into the
  // site from elsewhere in the repository): ask for the snapshot as if for a first clone.
  const again = withHaves
    ? await fetchFiltered(link, dir, adv, { ...req, sitePath, withHaves: false })
    : first;
  if (again.missing) {
    throw new Error(`the server's pack lacks ${again.missing} files of the site`);
  }
}

const SITE_PATH_KEY = 'bpa.sitepath';

/** The site path whose blobs this cache keeps ('' for all); undefined for a cache without one. */
export async function recordedSitePath(dir: string): Promise<string | undefined> {
  const value = (await git
    .getConfig({ fs, dir, path: SITE_PATH_KEY })
    .catch(() => undefined)) as unknown;
  return typeof value === 'string' ? value : undefined;
}

export async function recordSitePath(dir: string, sitePath: string): Promise<void> {
  await git.setConfig({ fs, dir, path: SITE_PATH_KEY, value: sitePath });
}
