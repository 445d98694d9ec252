import { stat } from 'node:fs/promises';
import { loadSite, locateProblems, type LoadLimits, DEFAULT_LIMITS } from '../load/index.js';
import { StalledError } from '../util/errors.js';
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
 * Load + validate a path, with positions for every problem. Throws PATH_NOT_FOUND or
 * PATH_UNREADABLE when the path itself is unusable.
 * `policy` is what the operator lets the site ask of bpa's machine (strict unless given).
 */
export async function validatePath(
  path: string,
  limits: LoadLimits = DEFAULT_LIMITS,
  policy: SitePolicy = STRICT_POLICY,
): Promise<ValidatedPath> {
  try {
    await stat(path);
  } catch (err: unknown) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new StalledError(
        'PATH_NOT_FOUND',
        `${path}: no such file or directory; give an existing site directory or YAML file`,
      );
    throw new StalledError(
      'PATH_UNREADABLE',
      `${path}: cannot read it (${code ?? String(err)}); check its permissions`,
    );
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
