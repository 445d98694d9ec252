import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_LIMITS,
  SiteCache,
  blobId,
  loadSite,
  type CheckedOutFile,
  type LoadedSite,
} from '../../../src/load/index.js';

const EXAMPLE = fileURLToPath(new URL('../../../sites/example', import.meta.url));
const FILES = [
  'site.yaml',
  'clusters/cluster-east/software.yaml',
  'clusters/cluster-east/cluster.yaml',
  'clusters/cluster-east/provisioning.yaml',
  'clusters/cluster-west/software.yaml',
  'clusters/cluster-west/cluster.yaml',
  'clusters/cluster-west/provisioning.yaml',
  'inventory/hosts.yaml',
];

/** What a source that checked the files out would say of them: blob id and stat. */
async function checkedOut(dir: string): Promise<Map<string, CheckedOutFile>> {
  const out = new Map<string, CheckedOutFile>();
  for (const path of FILES) {
    const abs = join(dir, path);
    const st = await stat(abs).catch(() => undefined);
    if (!st) continue;
    const oid = blobId(await readFile(abs));
    out.set(path, { oid, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
  }
  return out;
}

/** A load as it is compared: everything the stages after it read. */
const seen = (s: LoadedSite): unknown => ({
  root: s.root,
  files: s.files,
  documents: s.documents,
  problems: s.problems,
  incomplete: s.incomplete,
});

describe('load cache (bpa serve: unchanged files are not read or parsed again)', () => {
  let tmp: string;
  let site: string;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-load-cache-'));
    site = join(tmp, 'site');
    await cp(EXAMPLE, site, { recursive: true });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('git blob ids: the same id for the same bytes as git computes', () => {
    // `printf 'hello\n' | git hash-object --stdin`
    assert.equal(blobId(Buffer.from('hello\n')), 'ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('without ids from the source: every file read and hashed, only a changed one parsed', async () => {
    const cache = new SiteCache();
    const first = await loadSite(site, DEFAULT_LIMITS, cache);
    assert.deepEqual(cache.counts, { read: FILES.length, reused: 0, parsed: FILES.length });
    assert.deepEqual(seen(first), seen(await loadSite(site)));

    const p = join(site, 'clusters/cluster-east/provisioning.yaml');
    await writeFile(p, (await readFile(p, 'utf8')).replace('cpu: 24', 'cpu: 16'));
    const warm = await loadSite(site, DEFAULT_LIMITS, cache);
    assert.deepEqual(cache.counts, { read: FILES.length, reused: FILES.length - 1, parsed: 1 });
    assert.deepEqual(seen(warm), seen(await loadSite(site)));
    // Unchanged files hand back the very documents of the run before.
    const hosts = (s: LoadedSite) => s.documents.find((d) => d.file === 'inventory/hosts.yaml');
    assert.equal(hosts(warm), hosts(first));
  });

  it('with the checkout ids: unchanged files are not even read', async () => {
    const cache = new SiteCache();
    await loadSite(site, DEFAULT_LIMITS, cache, await checkedOut(site));
    const p = join(site, 'inventory/hosts.yaml');
    await writeFile(p, (await readFile(p, 'utf8')).replace('node-01', 'node-01a'));
    const warm = await loadSite(site, DEFAULT_LIMITS, cache, await checkedOut(site));
    assert.deepEqual(cache.counts, { read: 1, reused: FILES.length - 1, parsed: 1 });
    assert.deepEqual(seen(warm), seen(await loadSite(site)));
  });

  it('a file changed on disk behind the checkout (its stat differs) is read, not trusted', async () => {
    const cache = new SiteCache();
    const ids = await checkedOut(site);
    await loadSite(site, DEFAULT_LIMITS, cache, ids);
    const p = join(site, 'site.yaml');
    const text = await readFile(p, 'utf8');
    // Same size, other bytes: only the stat (mtime) tells.
    await writeFile(p, text.replace('edge-lab-1', 'edge-lab-2'));
    const warm = await loadSite(site, DEFAULT_LIMITS, cache, ids);
    assert.equal(cache.counts.read, 1);
    assert.equal(cache.counts.parsed, 1);
    assert.deepEqual(seen(warm), seen(await loadSite(site)));
  });

  it('broken files, new and removed files give what a cold load gives; memory follows the site', async () => {
    const cache = new SiteCache();
    await loadSite(site, DEFAULT_LIMITS, cache);
    assert.equal(cache.size, FILES.length);
    const steps: Array<() => Promise<void>> = [
      () => writeFile(join(site, 'clusters/cluster-west/cluster.yaml'), 'a: [1,\n'),
      () => writeFile(join(site, 'extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\n'),
      () => writeFile(join(site, 'binary.yaml'), Buffer.from([0x61, 0, 0x62])),
      () => rm(join(site, 'clusters/cluster-east'), { recursive: true }),
      () => cp(join(EXAMPLE, 'clusters'), join(site, 'clusters'), { recursive: true }),
    ];
    for (const step of steps) {
      await step();
      const warm = await loadSite(site, DEFAULT_LIMITS, cache);
      const cold = await loadSite(site);
      assert.deepEqual(seen(warm), seen(cold));
      // Only files read without a problem are held.
      assert.equal(cache.size, cold.files.length);
    }
    assert.equal(cache.size, FILES.length + 1);
  });

  it('other limits: everything parsed again under them', async () => {
    const cache = new SiteCache();
    await loadSite(site, DEFAULT_LIMITS, cache);
    const limits = { ...DEFAULT_LIMITS, maxDepth: 3 };
    const warm = await loadSite(site, limits, cache);
    assert.equal(cache.counts.parsed, FILES.length);
    assert.deepEqual(seen(warm), seen(await loadSite(site, limits)));
    assert.ok(warm.problems.some((p) => p.code === 'YAML_TOO_DEEP'));
  });
});
