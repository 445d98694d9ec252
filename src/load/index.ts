import { hasErrors, type Problem } from '../util/problem.js';
import type { CheckedOutFile, SiteCache } from './cache.js';
import { DEFAULT_LIMITS, type LoadLimits } from './limits.js';
import { FileLocator } from './locate.js';
import { parseFile, type LoadedDocument } from './parse.js';
import { readSite, type SiteFile } from './read-site.js';

export type { LoadedDocument } from './parse.js';
export type { SiteFile } from './read-site.js';
export { DEFAULT_LIMITS, type LoadLimits } from './limits.js';
export { SiteCache, blobId, type CheckedOutFile, type CacheCounts } from './cache.js';
export { parseFile } from './parse.js';
export { FileLocator } from './locate.js';

export interface LoadedSite {
  root: string;
  files: SiteFile[];
  documents: LoadedDocument[];
  problems: Problem[];
  /** True when some file could not be read or parsed: cross-document checks are partial. */
  incomplete: boolean;
}

/**
 * Reads and parses a site directory (or one file). With a cache (`bpa serve`), files whose
 * content is unchanged are neither read nor parsed again (load/cache.ts); `checkedOut` names
 * the files the source wrote, with their git blob ids.
 */
export async function loadSite(
  path: string,
  limits: LoadLimits = DEFAULT_LIMITS,
  cache?: SiteCache,
  checkedOut?: ReadonlyMap<string, CheckedOutFile>,
): Promise<LoadedSite> {
  cache?.begin(limits, checkedOut);
  const parsing = new SiteParse(limits, cache);
  // Each file is parsed as soon as it is read (see parseSite).
  const read = await readSite(path, limits, cache, (f) => parsing.add(f));
  return parsing.result(read.root, read.files, read.problems);
}

/** Parses already-read files: the pure half of `loadSite`. */
export function parseSite(
  root: string,
  files: SiteFile[],
  readProblems: Problem[] = [],
  limits: LoadLimits = DEFAULT_LIMITS,
  cache?: SiteCache,
): LoadedSite {
  const parsing = new SiteParse(limits, cache);
  return parsing.result(
    root,
    files.map((f) => parsing.add(f)),
    readProblems,
  );
}

/** A site's files parsed one at a time: their documents and problems, in file order. */
class SiteParse {
  private readonly documents: LoadedDocument[] = [];
  private readonly problems: Problem[] = [];

  constructor(
    private readonly limits: LoadLimits,
    private readonly cache: SiteCache | undefined,
  ) {}

  /** Parses one file; gives back the file to keep, holding the text its documents point into. */
  add(f: SiteFile): SiteFile {
    const { cache, limits } = this;
    const parsed = cache
      ? cache.parse(f, () => parseFile(f.path, f.text, limits))
      : parseFile(f.path, f.text, limits);
    for (const d of parsed.documents) this.documents.push(d);
    // Copies: later stages fill in positions, and a cached parse outlives this run.
    for (const p of parsed.problems) this.problems.push(cache ? { ...p } : p);
    // The same file object (the cache knows it by identity), now holding the parser's text.
    f.text = parsed.text;
    return f;
  }

  result(root: string, files: SiteFile[], readProblems: Problem[]): LoadedSite {
    const problems = [...readProblems, ...this.problems];
    return { root, files, documents: this.documents, problems, incomplete: hasErrors(problems) };
  }
}

/**
 * Fills in line and column for problems that name a document and a pointer. Files are
 * located lazily, only those that have such problems.
 */
export function locateProblems(files: readonly SiteFile[], problems: Problem[]): Problem[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const locators = new Map<string, FileLocator>();
  for (const p of problems) {
    if (p.line !== undefined || p.file === undefined || p.doc === undefined) continue;
    const file = byPath.get(p.file);
    if (!file) continue;
    let loc = locators.get(p.file);
    if (!loc) {
      loc = new FileLocator(file.text);
      locators.set(p.file, loc);
    }
    const pos = loc.locate(p.doc, p.pointer ?? '');
    p.line = pos.line;
    p.column = pos.column;
  }
  return problems;
}
