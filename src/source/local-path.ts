import { stat } from 'node:fs/promises';
import { StalledError } from '../util/errors.js';

/**
 * The source of `bpa validate|plan|apply PATH`: a site directory or one YAML file on this
 * machine. Throws PATH_NOT_FOUND or PATH_UNREADABLE when the path itself is unusable.
 */
export async function checkSitePath(path: string): Promise<void> {
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
}
