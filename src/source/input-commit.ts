import { trailerValues } from './trailers.js';

/** How far below a revision bpa looks for the commit that brought its input. */
const MAX_DEPTH = 50;

export const APPROVAL_TRAILER = 'Bpa-Approved-Plan';

export interface CommitReader {
  read(oid: string): Promise<{ message: string; parent?: string }>;
  /** The digest of the site's input at a commit (throws when its objects are not here). */
  digest(oid: string): Promise<string>;
  /** Fetches more history below the revision (a shallow copy), once, when a parent is missing. */
  deepen?(): Promise<void>;
}

/**
 * The commit that brought the site's input of `revision`: the revision itself when it carries
 * a Bpa-Approved-Plan trailer (an empty commit approving a new plan), else, going down first
 * parents, the last commit with the same input (commits of status/ only, or outside the site,
 * are passed over). A parent that is not in the local copy (a shallow fetch) is fetched once
 * when the source can deepen its copy; otherwise it ends the walk.
 */
export async function commitBringingInput(
  revision: string,
  reader: CommitReader,
): Promise<{ commit: string; message: string }> {
  const digest = await reader.digest(revision);
  let oid = revision;
  let { message, parent } = await reader.read(oid);
  let deepened = false;
  for (let depth = 0; depth < MAX_DEPTH && parent && !hasTrailer(message); depth++) {
    let parentDigest = await reader.digest(parent).catch(() => undefined);
    if (parentDigest === undefined && reader.deepen && !deepened) {
      deepened = true;
      await reader.deepen();
      parentDigest = await reader.digest(parent).catch(() => undefined);
    }
    if (parentDigest !== digest) break;
    oid = parent;
    ({ message, parent } = await reader.read(oid));
  }
  return { commit: oid, message };
}

function hasTrailer(message: string): boolean {
  return trailerValues(message, APPROVAL_TRAILER).length > 0;
}

/**
 * The plan hash a commit message approves: the last `Bpa-Approved-Plan: <hash>` trailer (a
 * squash merge may repeat an older one above it). Only a trailer counts, as `git
 * interpret-trailers --parse` finds them (the message's last paragraph, never its subject):
 * the same line quoted in the subject or in the middle of the text approves nothing.
 * `malformed` when the trailer holds no full sha256.
 */
export function approvedPlan(message: string): { hash?: string; malformed?: string } {
  const value = trailerValues(message, APPROVAL_TRAILER).at(-1);
  if (value === undefined) return {};
  return /^[0-9a-f]{64}$/.test(value) ? { hash: value } : { malformed: value.slice(0, 80) };
}

/**
 * `commitBringingInput` over a local git directory (the cache of either transport), reading
 * commits with isomorphic-git; `deepen` fetches more history the transport's own way.
 */
export async function localInputCommit(
  dir: string,
  sitePath: string,
  revision: string,
  deepen: () => Promise<void>,
): Promise<{ commit: string; message: string }> {
  const [{ default: git }, fs, { inputDigest }] = await Promise.all([
    import('isomorphic-git'),
    import('node:fs'),
    import('./git.js'),
  ]);
  return commitBringingInput(revision, {
    read: async (oid) => {
      const { commit } = await git.readCommit({ fs, dir, oid });
      return { message: commit.message, parent: commit.parent[0] };
    },
    digest: (oid) => inputDigest(dir, oid, sitePath),
    deepen,
  });
}
