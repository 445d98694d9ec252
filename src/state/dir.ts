import { stat } from 'node:fs/promises';
import { StalledError } from '../util/errors.js';

/**
 * Refuses a state path that cannot be a directory (a file, a device such as /dev/null, a path
 * through a file) before anything is read from it or fetched into it: the operator's mistake,
 * said as such, rather than a system error halfway through a run. A directory that does not
 * exist yet is fine: bpa creates it when it first writes.
 */
export async function checkStateDir(dir: string): Promise<void> {
  const refuse = (why: string): never => {
    throw new StalledError(
      'STATE_DIR_INVALID',
      `the state directory ${dir} ${why}; give --state (BPA_STATE_DIR) a directory, or a path where bpa can create one`,
    );
  };
  let found: Awaited<ReturnType<typeof stat>>;
  try {
    found = await stat(dir);
  } catch (err: unknown) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR')
      return refuse('cannot be created: a part of its path is not a directory');
    if (code === 'EACCES') return refuse('cannot be reached: permission denied');
    throw err;
  }
  if (found.isDirectory()) return;
  refuse(
    `is not a directory but ${found.isFile() ? 'a file' : found.isCharacterDevice() || found.isBlockDevice() ? 'a device' : found.isFIFO() ? 'a pipe' : found.isSocket() ? 'a socket' : 'something else'}`,
  );
}
