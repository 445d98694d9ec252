import { closeSync, constants, fstatSync, openSync, readSync, readdirSync } from 'node:fs';
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isUtf8 } from 'node:buffer';
import type { Ignore } from 'ignore';
import { error, warning, type Problem } from '../util/problem.js';
import { blobId, type SiteCache } from './cache.js';
import type { LoadLimits } from './limits.js';

/** A site file read from disk, checked for size, encoding and location. */
export interface SiteFile {
  /** Path relative to the site root, `/`-separated. */
  path: string;
  text: string;
}

export interface ReadResult {
  /** Absolute site root: the directory given, or the directory of the file given. */
  root: string;
  files: SiteFile[];
  problems: Problem[];
}

/** YAML files, and SOPS files in its JSON format (`*.sops.json`): JSON is YAML too. */
const YAML_FILE = /\.(?:ya?ml|sops\.json)$/i;
/** Written by bpa itself; never input. */
const STATUS_DIR = 'status';

/**
 * Reads every YAML file under `path` (a directory, walked recursively, or one file), applying
 * the root's `.bpaignore` (gitignore syntax) and skipping `status/`. Problems with single
 * files are collected; only an unreadable `path` itself throws. With a cache (`bpa serve`), a
 * file whose content id is cached is taken from it (load/cache.ts). `onFile` gets each file as
 * soon as it is read, and gives back the file to keep: loadSite parses it there, so the text
 * read is dropped before the next file is read, not kept alive with all the others.
 */
export async function readSite(
  path: string,
  limits: LoadLimits,
  cache?: SiteCache,
  onFile?: (file: SiteFile) => SiteFile,
): Promise<ReadResult> {
  const given = resolve(path);
  const info = await stat(given); // throws ENOENT etc.: a usage error for the caller
  const root = info.isDirectory() ? given : dirname(given);
  const realRoot = await realpath(root);
  const problems: Problem[] = [];
  const files: SiteFile[] = [];
  if (!info.isDirectory()) {
    const one = await readOne(given, basename(given), realRoot, limits, cache);
    if ('path' in one) files.push(onFile ? onFile(one) : one);
    else problems.push(one);
    cache?.retain(new Set(files.map((f) => f.path)));
    return { root, files, problems };
  }
  const ignorer = await loadIgnore(root, problems);
  const paths: string[] = [];
  await walk(root, '', realRoot, ignorer, paths, problems, new Set([realRoot]), limits);
  paths.sort();
  // Many small files: synchronous reads are several times faster than a round trip through
  // the thread pool per call (stat, open, read, close), and a site is read at once anyway.
  // Joined as text: the root is absolute and normalized, and path.join per file adds up.
  for (const rel of paths) {
    const r = readOneSync(`${root}/${rel}`, rel, limits, cache);
    if (!('path' in r)) problems.push(r);
    else files.push(onFile ? onFile(r) : r);
  }
  cache?.retain(new Set(files.map((f) => f.path)));
  return { root, files, problems };
}

/** The root's `.bpaignore`, or undefined when there is none (nothing to match each path against). */
async function loadIgnore(root: string, problems: Problem[]): Promise<Ignore | undefined> {
  let patterns = '';
  try {
    patterns = await readFile(join(root, '.bpaignore'), 'utf8');
  } catch (err: unknown) {
    if (isErrno(err, 'ENOENT')) return undefined;
    problems.push(
      error('READ_ERROR', `cannot read .bpaignore: ${errText(err)}`, {
        file: '.bpaignore',
        line: 1,
        column: 1,
      }),
    );
  }
  // The matcher is loaded only for a site that has a .bpaignore.
  const { default: ignore } = await import('ignore');
  return ignore().add(patterns);
}

async function walk(
  dir: string,
  relDir: string,
  realRoot: string,
  ignorer: Ignore | undefined,
  out: string[],
  problems: Problem[],
  seenDirs: Set<string>,
  limits: LoadLimits,
): Promise<void> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true }); // see readOneSync: sync is faster here
  } catch (err: unknown) {
    problems.push(
      error('READ_ERROR', `cannot read directory: ${errText(err)}`, {
        file: relDir || '.',
        line: 1,
        column: 1,
      }),
    );
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
    const abs = `${dir}/${entry.name}`;
    if (entry.name === '.git') continue;
    if (!relDir && entry.name === STATUS_DIR) {
      // bpa's reports go there; something else in its place is the site's, and stays.
      if (!entry.isDirectory()) {
        problems.push(
          warning(
            'STATUS_NOT_DIRECTORY',
            `"${STATUS_DIR}" is ${entry.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}, where bpa writes its reports (${STATUS_DIR}/); bpa leaves it alone and writes no report until it is renamed or removed`,
            { file: rel, line: 1, column: 1 },
          ),
        );
      }
      continue;
    }
    let isDir = entry.isDirectory();
    if (entry.isSymbolicLink()) {
      const target = await insideRoot(abs, realRoot);
      if (target === undefined) {
        if (YAML_FILE.test(entry.name) || (await isDirectory(abs))) {
          problems.push(
            error('SYMLINK_ESCAPE', 'symbolic link points outside the site directory', {
              file: rel,
              line: 1,
              column: 1,
            }),
          );
        }
        continue;
      }
      isDir = await isDirectory(target);
      if (isDir) {
        if (seenDirs.has(target)) continue; // a loop
        seenDirs.add(target);
      }
    }
    if (ignorer?.ignores(isDir ? `${rel}/` : rel)) continue;
    if (isDir) {
      await walk(abs, rel, realRoot, ignorer, out, problems, seenDirs, limits);
    } else if (YAML_FILE.test(entry.name)) {
      if (out.length >= limits.maxFiles) {
        problems.push(
          error('TOO_MANY_FILES', `more than ${limits.maxFiles} YAML files`, {
            file: rel,
            line: 1,
            column: 1,
          }),
        );
        return;
      }
      out.push(rel);
    }
  }
}

/** Reads a file given directly: a symlink must be checked here (the walk checks the others). */
async function readOne(
  abs: string,
  rel: string,
  realRoot: string,
  limits: LoadLimits,
  cache: SiteCache | undefined,
): Promise<SiteFile | Problem> {
  const link = await lstat(abs).catch(() => undefined);
  if (link?.isSymbolicLink() && (await insideRoot(abs, realRoot)) === undefined) {
    return error('SYMLINK_ESCAPE', 'symbolic link points outside the site directory', {
      file: rel,
      line: 1,
      column: 1,
    });
  }
  return readOneSync(abs, rel, limits, cache);
}

/** Reads one file found by the walk (its links already checked there). */
function readOneSync(
  abs: string,
  rel: string,
  limits: LoadLimits,
  cache?: SiteCache,
): SiteFile | Problem {
  const where = { file: rel, line: 1, column: 1 };
  let fd: number | undefined;
  try {
    // One descriptor for the checks and the read: the system calls readFileSync makes, and
    // no second lookup of the path (a site of 11,000 files spent ~30 ms in those).
    // Non-blocking: a FIFO named *.yaml is refused below, not waited on.
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = fstatSync(fd);
    if (!info.isFile()) return error('READ_ERROR', 'not a regular file', where);
    if (info.size > limits.maxFileBytes) {
      return error(
        'FILE_TOO_LARGE',
        `file is ${info.size} bytes; the limit is ${limits.maxFileBytes} bytes`,
        where,
      );
    }
    // The file the source checked out, unchanged since: known by its id without reading it.
    const checkedOut = cache?.idFromStat(rel, info);
    const known = checkedOut === undefined ? undefined : cache?.reuse(rel, checkedOut);
    if (known) return known;
    const bytes = readWhole(fd, info.size, limits.maxFileBytes);
    // Checked again: a file may grow between stat and read.
    if (bytes.length > limits.maxFileBytes) {
      return error('FILE_TOO_LARGE', `file is larger than ${limits.maxFileBytes} bytes`, where);
    }
    let id: string | undefined;
    if (cache) {
      cache.wasRead();
      id = checkedOut ?? blobId(bytes);
      const same = cache.reuse(rel, id);
      if (same) return same;
    }
    const decoded = decode(bytes);
    if ('problem' in decoded)
      return error(decoded.problem.code, decoded.problem.message, {
        file: rel,
        ...decoded.problem.at,
      });
    const file = { path: rel, text: decoded.text };
    if (cache && id !== undefined) cache.remember(id, file);
    return file;
  } catch (err: unknown) {
    return error('READ_ERROR', `cannot read file: ${errText(err)}`, where);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * An open regular file's bytes: `size` (its fstat) of them, or one past `limit` for a larger
 * file, which the caller refuses. Like readFileSync, it stops at the size it was told, without
 * a read to find the end (one system call per file less on sites of many small files); a file
 * that says it is empty (some file systems do for files with content) is read to its end.
 */
function readWhole(fd: number, size: number, limit: number): Buffer {
  if (size === 0) return readToEnd(fd, limit);
  const want = Math.min(size, limit + 1);
  const buf = Buffer.allocUnsafe(want);
  let length = 0;
  while (length < want) {
    const n = readSync(fd, buf, length, want - length, null);
    if (n === 0) break; // shorter than its stat said: it shrank
    length += n;
  }
  return buf.subarray(0, length);
}

/** Reads until the end, or until one byte past `limit`. */
function readToEnd(fd: number, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let length = 0;
  while (length <= limit) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    length += n;
  }
  return Buffer.concat(chunks, length).subarray(0, Math.min(length, limit + 1));
}

type Decoded =
  | { text: string }
  | { problem: { code: string; message: string; at: { line: number; column: number } } };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Strict UTF-8 decoding; binary files (NUL bytes) and invalid sequences are reported. */
export function decode(bytes: Uint8Array): Decoded {
  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    return {
      problem: {
        code: 'BINARY_FILE',
        message: 'file holds NUL bytes: not a text file',
        at: lineOf(bytes, nul),
      },
    };
  }
  if (!isUtf8(bytes)) {
    const bad = firstInvalidUtf8(bytes);
    return {
      problem: { code: 'NOT_UTF8', message: 'file is not valid UTF-8', at: lineOf(bytes, bad) },
    };
  }
  // Validated and decoded in native code (a TextDecoder call per file cost more on a site of
  // many small files); a leading byte order mark is dropped, as the decoder did.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}

function lineOf(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i] ?? 0;
    const len =
      b < 0x80
        ? 1
        : b >= 0xc2 && b < 0xe0
          ? 2
          : b >= 0xe0 && b < 0xf0
            ? 3
            : b >= 0xf0 && b < 0xf5
              ? 4
              : 0;
    if (len === 0) return i;
    if (len > 1) {
      try {
        utf8.decode(bytes.subarray(i, i + len));
      } catch {
        return i;
      }
    }
    i += len;
  }
  return 0;
}

/** The real path of `abs` if it lies inside the real root, else undefined. */
async function insideRoot(abs: string, realRoot: string): Promise<string | undefined> {
  let target: string;
  try {
    target = await realpath(abs);
  } catch {
    return undefined; // a dangling link
  }
  const rel = relative(realRoot, target);
  if (rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !rel.includes(':')))
    return target;
  return undefined;
}

async function isDirectory(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isDirectory();
  } catch {
    return false;
  }
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

function errText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
}
