/**
 * The files of a site at a commit, from git objects alone: commit → root tree → the site
 * path's tree → every blob below it. Used to decide which blobs of a fetched pack to keep and
 * which files a checkout writes.
 */

export interface GitObject {
  type: string;
  data: Buffer;
}

/** Reads an object by id; undefined when it is not available. */
export type ObjectReader = (oid: string) => Promise<GitObject | undefined>;

export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
}

export interface SiteFile {
  /** Repository-relative path. */
  path: string;
  oid: string;
  /** 100644, 100755 or 120000 (a symbolic link). */
  mode: string;
}

export class MissingObjectError extends Error {
  override readonly name = 'MissingObjectError';
  constructor(readonly oid: string) {
    super(`object ${oid} is not in the local repository`);
  }
}

/** git's binary tree format: `<mode> <name>\0<20-byte id>` repeated. */
export function parseTree(data: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    const nul = data.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > data.length) throw new Error('corrupt tree object');
    const name = data.toString('utf8', space + 1, nul);
    // A crafted tree could name a path outside the working copy, or git's own directory.
    if (
      name === '' ||
      name === '.' ||
      name === '..' ||
      name.includes('/') ||
      name.toLowerCase() === '.git'
    ) {
      throw new Error(
        `a tree holds an entry named ${JSON.stringify(name)}, which bpa refuses to check out`,
      );
    }
    out.push({
      mode: data.toString('latin1', pos, space).padStart(6, '0'),
      name,
      oid: data.toString('hex', nul + 1, nul + 21),
    });
    pos = nul + 21;
  }
  return out;
}

/** The commit a commit or (chain of) annotated tag(s) names. */
export async function commitOf(read: ObjectReader, oid: string): Promise<string> {
  let current = oid;
  for (let hops = 0; hops < 10; hops++) {
    const obj = await must(read, current);
    if (obj.type !== 'tag') return current;
    current = header(obj.data, 'object') ?? '';
  }
  return current;
}

/** The root tree of a commit. */
export async function treeOf(read: ObjectReader, commit: string): Promise<string> {
  const obj = await must(read, commit);
  const tree = obj.type === 'commit' ? header(obj.data, 'tree') : undefined;
  if (!tree) throw new Error(`${commit} is not a commit`);
  return tree;
}

/**
 * Every file under `sitePath` ('' for the whole repository) at `commit`; empty when the path
 * is not a directory there. Submodules are skipped (there is nothing of them to check out).
 */
export async function siteFiles(
  read: ObjectReader,
  commit: string,
  sitePath: string,
): Promise<SiteFile[]> {
  let tree: string | undefined = await treeOf(read, await commitOf(read, commit));
  for (const part of sitePath ? sitePath.split('/') : []) {
    const entries = parseTree((await must(read, tree)).data);
    const hit = entries.find((e) => e.name === part && e.mode === '040000');
    if (!hit) return [];
    tree = hit.oid;
  }
  const out: SiteFile[] = [];
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const e of parseTree((await must(read, oid)).data)) {
      const path = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.mode === '040000') await walk(e.oid, path);
      else if (e.mode === '100644' || e.mode === '100755' || e.mode === '120000')
        out.push({ path, oid: e.oid, mode: e.mode });
    }
  };
  await walk(tree, sitePath);
  return out;
}

async function must(read: ObjectReader, oid: string): Promise<GitObject> {
  const obj = await read(oid);
  if (!obj) throw new MissingObjectError(oid);
  return obj;
}

function header(data: Buffer, name: string): string | undefined {
  const end = data.indexOf('\n\n');
  const head = data.toString('utf8', 0, end < 0 ? data.length : end);
  for (const line of head.split('\n')) {
    if (line.startsWith(`${name} `)) return line.slice(name.length + 1);
  }
  return undefined;
}
