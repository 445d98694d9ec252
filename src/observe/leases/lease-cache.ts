import { createHash } from 'node:crypto';
import type { Lease } from '../types.js';
import type { ParsedLeases } from './types.js';

/** A file as read for parsing: its path and text (Kea's series: the companions too). */
export interface LeaseSource {
  file: string;
  text: string;
}

interface Parsed {
  /** Each file and a digest of its text: the text itself (every lease) is not held. */
  sources: ReadonlyArray<{ file: string; digest: string }>;
  /** The clock the file was parsed at. */
  now: number;
  /** The first expiry among the leases kept and those warned about: from then on the result may differ. */
  until: number;
  result: ParsedLeases;
}

/**
 * Lease files as last parsed, for a process that reads them at every reconcile (`bpa serve`):
 * a file whose text is the same as last time gives the same Lease objects, and files giving
 * the same leases give the same merged map, so what is derived from a lease or the map
 * (a node's address, plan/index.ts) can be kept too.
 *
 * The clock matters only through expiry: each format keeps, per MAC, the unexpired lease that
 * expires last (select.ts), so while none of the leases kept has expired, a later clock keeps
 * the same ones; an earlier clock, or one past a kept lease's end, parses again. The text is
 * compared whole, by its digest (a file replaced by another of the same size and time is read
 * as new).
 * Only the files of the last read are kept.
 */
export class LeaseCache {
  private parsed = new Map<string, Parsed>();
  private merged: { from: readonly (readonly Lease[])[]; map: Map<string, Lease> } | undefined;
  /** Files parsed (not taken from the cache) since this cache was made: for tests. */
  parses = 0;

  /** The leases of `sources` (keyed by `key`, the listed path) at `now`, parsed by `parse` when needed. */
  parse(
    key: string,
    sources: readonly LeaseSource[],
    now: number,
    parse: () => ParsedLeases,
  ): ParsedLeases {
    const held = this.parsed.get(key);
    const read = sources.map((s) => ({ file: s.file, digest: digestOf(s.text) }));
    if (held && now >= held.now && now < held.until && sameSources(held.sources, read)) {
      // The same leases; the problems as copies, each reconcile's own.
      return { leases: held.result.leases, problems: held.result.problems.map((p) => ({ ...p })) };
    }
    const result = parse();
    this.parses++;
    let until = result.until ?? Infinity;
    for (const l of result.leases)
      if (l.expires !== undefined && l.expires < until) until = l.expires;
    this.parsed.set(key, { sources: read, now, until, result });
    return result;
  }

  /** The map `merge` makes of `results`: the same map when they are the same lease lists. */
  merge(
    results: readonly (readonly Lease[])[],
    merge: () => Map<string, Lease>,
  ): Map<string, Lease> {
    const m = this.merged;
    if (m && m.from.length === results.length && m.from.every((r, i) => r === results[i]))
      return m.map;
    const map = merge();
    this.merged = { from: [...results], map };
    return map;
  }

  /** Forgets every file but `keys` (the files of this read). */
  retain(keys: readonly string[]): void {
    const keep = new Set(keys);
    for (const k of [...this.parsed.keys()]) if (!keep.has(k)) this.parsed.delete(k);
  }
}

function sameSources(a: Parsed['sources'], b: Parsed['sources']): boolean {
  return (
    a.length === b.length && a.every((s, i) => s.file === b[i]?.file && s.digest === b[i]?.digest)
  );
}

function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
