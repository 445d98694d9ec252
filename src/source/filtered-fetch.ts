/**
 * Fetches commits into the cache keeping only what bpa reads: commits, trees, tags and the
 * blobs under the site path. The server sends its pack whole (git has no path filter every
 * server supports); it goes to a file as it arrives, each object is identified a chunk at a
 * time, and the kept objects are written as a pack of their own (blobs up to IN_MEMORY_MAX) or
 * as loose objects (larger site files). A repository's other files, however large, are never
 * held in memory and never stored: memory and disk follow the site, not the repository.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fs from 'node:fs';
import git from 'isomorphic-git';
import { ObjectStore, encodeEntry, type LargeSource } from './object-store.js';
import { IN_MEMORY_MAX, PackScan } from './pack-scan.js';
import { siteFiles, type GitObject, type ObjectReader } from './site-tree.js';
import type { Link } from './remote.js';
import { fetchPack, type Advertisement } from './upload-pack.js';

export interface FilteredFetch {
  wants: string[];
  /** Commits (or tags) whose site files must be complete afterwards. */
  keep: string[];
  /** Repository-relative site path; '' keeps every blob. */
  sitePath: string;
  /** History depth; undefined: everything. */
  depth?: number;
  /**
   * Offer the checked-out commit as common ground, so only newer objects travel. A blob the
   * server then leaves out may be one bpa dropped (a file copied into the site from elsewhere):
   * the result says so, and the caller fetches again without.
   */
  withHaves: boolean;
}

/** How many of the kept commits' site blobs are still not stored. */
export interface FilteredFetchResult {
  missing: number;
}

export async function fetchFiltered(
  link: Link,
  dir: string,
  adv: Advertisement,
  req: FilteredFetch,
): Promise<FilteredFetchResult> {
  const store = new ObjectStore(dir);
  const gitdir = store.gitdir;
  const haves: string[] = [];
  if (req.withHaves) {
    const head = await git.resolveRef({ fs, dir, ref: 'HEAD' }).catch(() => undefined);
    if (head && (await store.has(head))) haves.push(head);
  }
  const shallowFile = join(gitdir, 'shallow');
  const shallows = existsSync(shallowFile)
    ? (await readFile(shallowFile, 'utf8')).split('\n').filter(Boolean)
    : [];
  const incoming = join(gitdir, `bpa-incoming-${randomBytes(6).toString('hex')}.tmp`);
  let scan: PackScan | undefined;
  try {
    const res = await fetchPack(
      link,
      adv.capabilities,
      {
        wants: req.wants,
        haves,
        shallows,
        ...(req.depth !== undefined ? { depth: req.depth } : {}),
      },
      incoming,
    );
    if (res.received) scan = await PackScan.open(incoming);
    const pack = scan;

    // Objects of the new pack first, then what the repository already holds.
    const read: ObjectReader = async (oid) => {
      const e = pack?.byOid.get(oid);
      if (e && e.type !== 'blob') {
        const c = await pack!.content(e);
        return { type: c.type, data: c.data as Buffer } satisfies GitObject;
      }
      return store.read(oid);
    };
    const wanted = new Set<string>();
    for (const tip of req.keep) {
      // A commit the server did not have: the caller reports it.
      if (!(await read(tip))) continue;
      for (const f of await siteFiles(read, tip, req.sitePath)) wanted.add(f.oid);
    }

    const small: Array<{ oid: string; raw: Buffer }> = [];
    const large: Array<{ oid: string; source: LargeSource }> = [];
    for (const e of pack?.entries ?? []) {
      if (!e.oid || !e.type) continue;
      if (e.type === 'blob' && !wanted.has(e.oid)) continue;
      if (await store.has(e.oid)) continue;
      const whole = e.kind >= 1 && e.kind <= 4;
      if (e.type === 'blob' && (e.objectSize ?? 0) > IN_MEMORY_MAX) {
        // Copied as it came when it is not a delta: no second compression of a large file.
        if (whole) {
          large.push({
            oid: e.oid,
            source: { kind: 'entry', pack: incoming, offset: e.offset, end: e.end },
          });
        } else {
          const c = await pack!.content(e);
          if (!c.file) throw new Error(`internal: large object ${e.oid} has no file`);
          large.push({ oid: e.oid, source: { kind: 'file', file: c.file, size: c.size } });
        }
      } else if (whole) small.push({ oid: e.oid, raw: pack!.raw(e) });
      else {
        const c = await pack!.content(e);
        small.push({ oid: e.oid, raw: encodeEntry(c.type, c.data as Buffer) });
      }
    }
    await store.writePack(small);
    await store.writeLargePack(large);

    const shallow = new Set(shallows);
    for (const oid of res.shallow) {
      // The server calls the fetched commit shallow when it sent no parent; one whose parents
      // are here already (the previous fetch) is not.
      const commit = shallow.has(oid) ? undefined : await read(oid);
      const parents = commit ? parentsOf(commit.data) : [];
      const complete = parents.length > 0 && (await every(parents, (p) => store.has(p)));
      if (!complete) shallow.add(oid);
    }
    for (const oid of res.unshallow) shallow.delete(oid);
    if (shallow.size) await writeFile(shallowFile, [...shallow].map((o) => `${o}\n`).join(''));
    else await rm(shallowFile, { force: true });

    let missing = 0;
    for (const oid of wanted) if (!(await store.has(oid))) missing++;
    return { missing };
  } finally {
    await scan?.close();
    await rm(incoming, { force: true });
  }
}

function parentsOf(commit: Buffer): string[] {
  const end = commit.indexOf('\n\n');
  const head = commit.toString('utf8', 0, end < 0 ? commit.length : end);
  return head
    .split('\n')
    .filter((l) => l.startsWith('parent '))
    .map((l) => l.slice(7));
}

async function every<T>(items: T[], test: (item: T) => Promise<boolean>): Promise<boolean> {
  for (const item of items) if (!(await test(item))) return false;
  return true;
}
