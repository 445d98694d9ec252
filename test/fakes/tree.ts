import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Every file under `dir` as `prefix/relative/path` → content: a site ready for a git server's createRepo. */
export async function readTree(dir: string, prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    out[`${prefix}/${relative(dir, path)}`] = await readFile(path, 'utf8');
  }
  return out;
}
