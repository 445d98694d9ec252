import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Installer logs live in the state directory, `<stateDir>/clusters/<cluster>/logs/<file>`, and
 * are named everywhere else by an id, `<cluster>/<file>`: a report in git says where a log is
 * without the state directory's path, and the status page reads it back by its id alone.
 */

/** An RFC 1123 name (cluster names are validated as such): never `.` or `..`, no slash. */
const CLUSTER = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)*$/;
/** A plain file name as the installers write them: `provision-<time>.log`. */
const FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,250}\.log$/;

/** The id of the log `file` of `cluster`. */
export function logId(cluster: string, file: string): string {
  return `${cluster}/${file}`;
}

/** The log file an id names, or undefined when it is not an id (a path, `..`, a slash more). */
export function logPath(stateDir: string, id: string): string | undefined {
  const parts = id.split('/');
  if (parts.length !== 2) return undefined;
  const [cluster = '', file = ''] = parts;
  if (cluster.length > 253 || !CLUSTER.test(cluster) || !FILE.test(file)) return undefined;
  return join(stateDir, 'clusters', cluster, 'logs', file);
}

/**
 * The end of a log (its last `maxBytes`, from a line start), or undefined when there is no
 * such log. A symbolic link is not followed: only a file bpa wrote is read.
 */
export async function readLogTail(
  stateDir: string,
  id: string,
  maxBytes = 2 * 1024 * 1024,
): Promise<{ text: string; truncated: boolean } | undefined> {
  const path = logPath(stateDir, id);
  if (path === undefined) return undefined;
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const start = Math.max(0, info.size - maxBytes);
    const length = info.size - start;
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    let text = buffer.subarray(0, bytesRead).toString('utf8');
    // A cut line (or a cut character) at the start is left out.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    return { text, truncated: start > 0 };
  } finally {
    await handle.close();
  }
}
