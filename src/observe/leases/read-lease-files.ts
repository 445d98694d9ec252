import { open, realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { Lease } from '../types.js';
import { error, warning, type Problem } from '../../util/problem.js';
import { detectLeaseFormat } from './detect.js';
import { parseLeases } from './index.js';
import { parseKeaSeries, type KeaSource } from './kea.js';
import type { LeaseCache } from './lease-cache.js';
import { LEASE_FILE_OUTSIDE_SITE, LEASE_FILE_UNREADABLE } from './problems.js';
import { mergeLeases } from './select.js';
import type { ParsedLeases } from './types.js';

export interface LeaseFilesResult {
  /** Normalized MAC → the newest active lease across all files. */
  leases: Map<string, Lease>;
  problems: Problem[];
}

/**
 * Kea's lease file cleanup leaves older data beside the live file: `.completed` (a finished
 * cleanup not yet renamed; when present it replaces the other two), else `.2` (the previous
 * cleanup's output) and `.1` (the file rotated out when the cleanup began). Kea loads them in
 * this order before the live file; so does bpa.
 */
const KEA_COMPLETED = '.completed';
const KEA_OLDER = ['.2', '.1'];
const KEA_SUFFIXES = [KEA_COMPLETED, ...KEA_OLDER];

/**
 * Reads lease files (format detected per file) and merges them: MAC → newest lease, later
 * files winning ties. A file that cannot be read is a problem, never an exception. With
 * `confineTo` (the site directory, for lease files the site names), a file or Kea companion
 * that resolves outside it, through a symbolic link, is refused and not read. With `cache`, a
 * file read with the same text as last time is not parsed again (lease-cache.ts).
 */
export async function readLeaseFiles(
  paths: string[],
  now: number,
  opts: { confineTo?: string; cache?: LeaseCache } = {},
): Promise<LeaseFilesResult> {
  const problems: Problem[] = [];
  const root =
    opts.confineTo === undefined
      ? undefined
      : await realpath(opts.confineTo).catch(() => resolve(opts.confineTo ?? '.'));
  const selected = selectPaths(paths);
  const { cache } = opts;
  const results = await Promise.all(selected.map((p) => readOne(p, now, root, cache)));
  for (const r of results) problems.push(...r.problems);
  const lists = results.map((r) => r.leases);
  if (!cache) return { leases: mergeLeases(lists), problems };
  cache.retain(selected);
  return { leases: cache.merge(lists, () => mergeLeases(lists)), problems };
}

/**
 * Drops repeated paths and Kea companions of a listed file: they are read as part of that
 * file's series, and read alone they could bring back a lease the live file has ended.
 */
function selectPaths(paths: string[]): string[] {
  const listed = new Set(paths.map((p) => resolve(p)));
  const seen = new Set<string>();
  return paths.filter((p) => {
    const abs = resolve(p);
    if (seen.has(abs)) return false;
    seen.add(abs);
    return !KEA_SUFFIXES.some((s) => abs.endsWith(s) && listed.has(abs.slice(0, -s.length)));
  });
}

async function readOne(
  path: string,
  now: number,
  root: string | undefined,
  cache: LeaseCache | undefined,
): Promise<ParsedLeases> {
  const read = await readText(path, root);
  if ('problem' in read) return { leases: [], problems: [read.problem] };
  const { text } = read;
  const parse = (sources: KeaSource[], run: () => ParsedLeases): ParsedLeases =>
    cache ? cache.parse(path, sources, now, run) : run();
  if (detectLeaseFormat(text, path) !== 'kea')
    return parse([{ text, file: path }], () => parseLeases(text, { file: path, now }));
  const problems: Problem[] = [];
  const sources: KeaSource[] = [];
  const completed = await readCompanion(path + KEA_COMPLETED, problems, root);
  if (completed) sources.push(completed);
  else {
    for (const suffix of KEA_OLDER) {
      const older = await readCompanion(path + suffix, problems, root);
      if (older) sources.push(older);
    }
  }
  sources.push({ text, file: path });
  const parsed = parse(sources, () => parseKeaSeries(sources, now));
  return { leases: parsed.leases, problems: [...problems, ...parsed.problems] };
}

/** A companion that does not exist is normal (no cleanup has run yet); other errors are not. */
async function readCompanion(
  path: string,
  problems: Problem[],
  root?: string,
): Promise<KeaSource | undefined> {
  const read = await readText(path, root);
  if ('text' in read) return { text: read.text, file: path };
  if (!read.missing) problems.push(read.problem);
  return undefined;
}

type ReadOutcome = { text: string } | { problem: Problem; missing: boolean };

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
};

/**
 * The largest lease file bpa reads. Parsing holds the text and every entry of it at once (about
 * ten times the file's size in memory), so a runaway file would take the controller past its
 * memory limit; a real one is far smaller (dnsmasq: ~100 bytes per lease; ISC and Kea append a
 * record per renewal until their hourly cleanup). A larger file is reported and not read.
 */
export const MAX_LEASE_FILE_BYTES = 32 * 1024 * 1024;

async function readText(path: string, root?: string): Promise<ReadOutcome> {
  try {
    // The file is read where its links lead, and only when that is inside the site.
    const real = root === undefined ? path : await realpath(path);
    if (root !== undefined && !real.startsWith(root + sep)) {
      return {
        problem: error(
          LEASE_FILE_OUTSIDE_SITE,
          `lease file ${path} leads outside the site directory; it is not read. Keep site lease files inside the site, or give a file of this machine to bpa with --leases`,
          { file: path },
        ),
        missing: false,
      };
    }
    // The size is checked on the open file, so what is read is what was measured.
    const file = await open(real, 'r');
    try {
      const { size } = await file.stat();
      if (size > MAX_LEASE_FILE_BYTES) {
        const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
        return {
          problem: warning(
            LEASE_FILE_UNREADABLE,
            `lease file ${path} is ${mib(size)}, over the ${mib(MAX_LEASE_FILE_BYTES)} bpa reads; it was not read`,
            { file: path },
          ),
          missing: false,
        };
      }
      return { text: await file.readFile('utf8') };
    } finally {
      await file.close();
    }
  } catch (err: unknown) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      (code && REASONS[code]) ?? code ?? (err instanceof Error ? err.message : String(err));
    return {
      problem: warning(LEASE_FILE_UNREADABLE, `cannot read lease file ${path}: ${why}`, {
        file: path,
      }),
      missing: code === 'ENOENT',
    };
  }
}
