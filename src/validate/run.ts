import { stat } from 'node:fs/promises';
import { loadSite, locateProblems, type LoadLimits, DEFAULT_LIMITS } from '../load/index.js';
import { sortProblems, type Problem } from '../util/problem.js';
import { validateSite, type SiteModel } from './index.js';
import { checkSiteTrust, STRICT_POLICY, type SitePolicy } from './trust.js';

export interface ValidatedPath {
  root: string;
  files: number;
  documents: number;
  problems: Problem[];
  model?: SiteModel;
  /** The loaded files, for stages that need them (positions, digests). */
  loaded: Awaited<ReturnType<typeof loadSite>>;
}

/**
 * Load + validate a path, with positions for every problem. `usage` when the path is unusable.
 * `policy` is what the operator lets the site ask of bpa's machine (strict unless given).
 */
export async function validatePath(
  path: string,
  limits: LoadLimits = DEFAULT_LIMITS,
  policy: SitePolicy = STRICT_POLICY,
): Promise<ValidatedPath | { usage: string }> {
  try {
    await stat(path);
  } catch (err: unknown) {
    const code = (err as { code?: string }).code;
    return {
      usage:
        code === 'ENOENT'
          ? `${path}: no such file or directory`
          : `${path}: cannot read (${code ?? String(err)})`,
    };
  }
  const loaded = await loadSite(path, limits);
  const result = validateSite(loaded);
  const trust = checkSiteTrust(result.model?.site, policy);
  const problems = sortProblems(locateProblems(loaded.files, [...result.problems, ...trust]));
  return {
    root: loaded.root,
    files: loaded.files.length,
    documents: loaded.documents.length,
    problems,
    model: result.model,
    loaded,
  };
}
