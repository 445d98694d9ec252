/**
 * What `bpa serve` keeps of a site between reconciles: each file's text and parsed documents,
 * by path and content id. The id is git's blob id of the bytes: taken from the checkout's
 * manifest when the file on disk is the one checked out (same size, mtime and inode, as git's
 * index decides), else computed from the bytes read. A file whose id is unchanged is neither
 * read nor parsed again; its documents are the same objects as before, so the validation of
 * each document can be kept too (validate/document-cache.ts).
 *
 * Nothing of a file no longer in the site is kept: memory follows the site, not the number of
 * revisions seen. The cache never changes a result: it hands back what reading and parsing the
 * same bytes gave, and everything after the parse (cross-document rules, assignment, the plan)
 * runs again over the whole site.
 */
import { createHash } from 'node:crypto';
import type { LoadLimits } from './limits.js';
import type { ParsedFile } from './parse.js';

/** A site file as read-site.ts gives it (declared here: read-site.ts uses the cache). */
interface SiteFile {
  path: string;
  text: string;
}

/** A file as the source checked it out: its blob id and what stat said right after writing it. */
export interface CheckedOutFile {
  oid: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

interface Entry {
  id: string;
  file: SiteFile;
  parsed?: ParsedFile;
}

/** What one load took from the cache and what it had to do (tests, bench/serve.ts). */
export interface CacheCounts {
  /** Files read from disk (no id known from the source, or a new one). */
  read: number;
  /** Files whose text and parse came from the cache (read or not). */
  reused: number;
  /** Files parsed. */
  parsed: number;
}

/** Git's id of a blob with these bytes: the same id whether the file came from git or not. */
export function blobId(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

export class SiteCache {
  private entries = new Map<string, Entry>();
  private known: ReadonlyMap<string, CheckedOutFile> = new Map();
  private limitsKey = '';
  counts: CacheCounts = { read: 0, reused: 0, parsed: 0 };

  /**
   * Starts one load: the files the source says it checked out (site-relative paths), and the
   * limits of the parse (a change of limits forgets everything parsed under the old ones).
   */
  begin(limits: LoadLimits, checkedOut?: ReadonlyMap<string, CheckedOutFile>): void {
    const key = JSON.stringify(limits);
    if (key !== this.limitsKey) this.entries.clear();
    this.limitsKey = key;
    this.known = checkedOut ?? new Map();
    this.counts = { read: 0, reused: 0, parsed: 0 };
  }

  /** The blob id of `path` when the file on disk is, by its stat, the one the source wrote. */
  idFromStat(path: string, st: { size: number; mtimeMs: number; ino: number }): string | undefined {
    const k = this.known.get(path);
    if (!k || k.size !== st.size || k.mtimeMs !== st.mtimeMs || k.ino !== st.ino) return undefined;
    return k.oid;
  }

  /** The file as read before, when its id has not changed. */
  reuse(path: string, id: string): SiteFile | undefined {
    const e = this.entries.get(path);
    if (e?.id !== id) return undefined;
    this.counts.reused++;
    return e.file;
  }

  /** Counts a file read from disk. */
  wasRead(): void {
    this.counts.read++;
  }

  /** A file read and not found under its id (from the source, or computed from the bytes). */
  remember(id: string, file: SiteFile): void {
    this.entries.set(file.path, { id, file });
  }

  /** The parse of exactly this file object, made once. */
  parse(file: SiteFile, parse: () => ParsedFile): ParsedFile {
    const e = this.entries.get(file.path);
    if (e?.file === file && e.parsed) return e.parsed;
    const parsed = parse();
    this.counts.parsed++;
    if (e?.file === file) e.parsed = parsed;
    return parsed;
  }

  /** Forgets every file that is not in the site any more (or could not be read this time). */
  retain(paths: ReadonlySet<string>): void {
    for (const path of this.entries.keys()) if (!paths.has(path)) this.entries.delete(path);
  }

  /** Files held (tests, bench/serve.ts). */
  get size(): number {
    return this.entries.size;
  }
}
