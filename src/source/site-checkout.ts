/**
 * Checks out exactly the site path of a commit into the working copy, and nothing else: files
 * that differ are rewritten, files the commit does not have are removed (a person's edits, a
 * previous run's leftovers, the rest of the repository), large files are copied a chunk at a
 * time. A manifest of what was written (id and stat of each file) lets the next checkout skip
 * unchanged files without reading them, as git's index does.
 */
import { readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fs, { lstatSync, mkdirSync } from 'node:fs';
import git from 'isomorphic-git';
import { ObjectStore } from './object-store.js';
import { MissingObjectError, siteFiles, type SiteFile } from './site-tree.js';

const MANIFEST = 'bpa-checkout.json';

interface ManifestEntry {
  oid: string;
  mode: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

interface Manifest {
  files: Record<string, ManifestEntry>;
}

/**
 * Brings the working tree in `dir` to `sitePath` at `commit` and points HEAD at it (detached).
 * Throws MissingObjectError, before touching anything, when a file's blob is not stored.
 */
export async function checkoutSite(
  dir: string,
  commit: string,
  sitePath: string,
  cache: Record<string, unknown>,
): Promise<void> {
  const store = new ObjectStore(dir, cache);
  const files = await siteFiles(store.read, commit, sitePath);
  for (const f of files) if (!(await store.has(f.oid))) throw new MissingObjectError(f.oid);

  const wantedFiles = new Map(files.map((f) => [f.path, f]));
  const wantedDirs = new Set<string>();
  for (const f of files) {
    for (let d = dirname(f.path); d !== '.' && d !== ''; d = dirname(d)) wantedDirs.add(d);
  }
  for (let d = sitePath; d !== '.' && d !== ''; d = dirname(d)) wantedDirs.add(d);
  await prune(dir, '', wantedFiles, wantedDirs);

  const manifestPath = join(store.gitdir, MANIFEST);
  const previous = await readManifest(manifestPath);
  const next: Manifest = { files: {} };
  // Per file, synchronous calls: a site is thousands of small files, and a thread-pool round
  // trip per call cost more CPU than the calls themselves.
  const made = new Set<string>();
  for (const f of files) {
    const abs = join(dir, f.path);
    const known = previous.files[f.path];
    const st = lstatOrNot(abs);
    const same =
      known !== undefined &&
      st !== undefined &&
      known.oid === f.oid &&
      known.mode === f.mode &&
      known.size === st.size &&
      known.mtimeMs === st.mtimeMs &&
      known.ino === st.ino;
    if (!same) {
      if (st) await rm(abs, { recursive: true, force: true });
      const parent = dirname(abs);
      if (!made.has(parent)) {
        mkdirSync(parent, { recursive: true });
        made.add(parent);
      }
      await writeOne(store, f, abs);
    }
    const now = same ? st : lstatSync(abs);
    next.files[f.path] = {
      oid: f.oid,
      mode: f.mode,
      size: now.size,
      mtimeMs: now.mtimeMs,
      ino: now.ino,
    };
  }
  // Only a cache: a torn manifest reads as empty, and every file is written again.
  await writeFile(manifestPath, JSON.stringify(next));
  // isomorphic-git's index from an earlier checkout would describe files that are gone.
  await rm(join(store.gitdir, 'index'), { force: true });
  await git.writeRef({ fs, dir, ref: 'HEAD', value: commit, force: true });
}

function lstatOrNot(path: string): fs.Stats | undefined {
  try {
    // A file not there yet is the usual case of a first checkout: no error made and thrown.
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

async function writeOne(store: ObjectStore, f: SiteFile, abs: string): Promise<void> {
  if (f.mode === '120000') {
    const obj = await store.read(f.oid);
    if (!obj) throw new MissingObjectError(f.oid);
    await symlink(obj.data.toString('utf8'), abs);
  } else {
    await store.copyTo(f.oid, abs, f.mode === '100755' ? 0o755 : 0o644);
  }
}

/** Removes everything under `rel` that is neither a wanted file nor on the way to one. */
async function prune(
  dir: string,
  rel: string,
  files: Map<string, SiteFile>,
  dirs: Set<string>,
): Promise<void> {
  const entries = await readdir(join(dir, rel), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (path === '.git') continue;
    const abs = join(dir, path);
    if (entry.isDirectory() && dirs.has(path)) {
      await prune(dir, path, files, dirs);
      continue;
    }
    const want = files.get(path);
    const kindOk =
      want !== undefined && (want.mode === '120000' ? entry.isSymbolicLink() : entry.isFile());
    if (!kindOk) await rm(abs, { recursive: true, force: true });
  }
}

/**
 * The regular files of the last checkout under `sitePath`, by path relative to it, with their
 * blob ids and the stat taken when they were written (empty when there is no manifest).
 */
export async function checkedOutFiles(
  dir: string,
  sitePath: string,
): Promise<Map<string, { oid: string; size: number; mtimeMs: number; ino: number }>> {
  const { files } = await readManifest(join(dir, '.git', MANIFEST));
  const prefix = sitePath ? `${sitePath}/` : '';
  const out = new Map<string, { oid: string; size: number; mtimeMs: number; ino: number }>();
  for (const [path, e] of Object.entries(files)) {
    if (e.mode === '120000' || !path.startsWith(prefix)) continue;
    out.set(path.slice(prefix.length), {
      oid: e.oid,
      size: e.size,
      mtimeMs: e.mtimeMs,
      ino: e.ino,
    });
  }
  return out;
}

async function readManifest(path: string): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<Manifest>;
    return { files: parsed.files ?? {} };
  } catch {
    return { files: {} };
  }
}
