import { hasErrors, type Problem } from '../util/problem.js';
import { DEFAULT_LIMITS, type LoadLimits } from './limits.js';
import { FileLocator } from './locate.js';
import { parseFile, type LoadedDocument } from './parse.js';
import { readSite, type SiteFile } from './read-site.js';

export type { LoadedDocument } from './parse.js';
export type { SiteFile } from './read-site.js';
export { DEFAULT_LIMITS, type LoadLimits } from './limits.js';
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

/** Reads and parses a site directory (or one file). */
export async function loadSite(
  path: string,
  limits: LoadLimits = DEFAULT_LIMITS,
): Promise<LoadedSite> {
  const read = await readSite(path, limits);
  return parseSite(read.root, read.files, read.problems, limits);
}

/** Parses already-read files: the pure half of `loadSite`. */
export function parseSite(
  root: string,
  files: SiteFile[],
  readProblems: Problem[] = [],
  limits: LoadLimits = DEFAULT_LIMITS,
): LoadedSite {
  const documents: LoadedDocument[] = [];
  const problems = [...readProblems];
  for (const f of files) {
    const parsed = parseFile(f.path, f.text, limits);
    documents.push(...parsed.documents);
    problems.push(...parsed.problems);
  }
  return { root, files, documents, problems, incomplete: hasErrors(problems) };
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
