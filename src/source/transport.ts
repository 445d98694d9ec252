import fs from 'node:fs';
import git, { type HttpClient } from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import { GIT_REF_NOT_FOUND } from './classify.js';
import type { AdvertisedRef } from './refs.js';
import type { Remote } from './remote.js';
import type { GitCache } from './working-copy.js';

export interface Link {
  remote: Remote;
  http: HttpClient;
}

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
 * travel, even in a shallow repository.
 */
export async function fetchRemoteRef(
  link: Link,
  dir: string,
  ref: string,
  depth: number,
  cache: GitCache,
): Promise<string> {
  const res = await git.fetch({
    fs,
    http: link.http,
    dir,
    url: link.remote.url,
    ref: 'HEAD',
    remoteRef: ref,
    singleBranch: true,
    tags: false,
    depth,
    headers: link.remote.headers(),
    cache,
  });
  if (!res.fetchHead) {
    throw new StalledError(GIT_REF_NOT_FOUND, `ref ${ref} does not exist in ${link.remote.url}`);
  }
  return res.fetchHead;
}

/** Fetches the whole history of every branch and tag. */
export async function fetchEverything(link: Link, dir: string, cache: GitCache): Promise<void> {
  await git.fetch({
    fs,
    http: link.http,
    dir,
    url: link.remote.url,
    singleBranch: false,
    tags: true,
    // git's own "infinite" depth: deepens a shallow repository to the full history.
    depth: 0x7fffffff,
    headers: link.remote.headers(),
    cache,
  });
}
