import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inputDigest, syncRepo } from '../../../src/source/git.js';
import type { BpaError } from '../../../src/util/errors.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

const run = promisify(execFile);
const FIXTURE = fileURLToPath(new URL('./fixtures/sync-peak.ts', import.meta.url));

const SITE = {
  'sites/edge/site.yaml': 'kind: Site\nname: edge\n',
  'sites/edge/clusters/east.yaml': 'kind: Cluster\nname: east\n',
  'README.md': '# site repo\n',
};

/** git's id of a blob with this content. */
const blobId = (data: Buffer | string): string =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(data)}\0`)
    .update(data)
    .digest('hex');

/** Whether native git finds the object in the cache's store. */
async function stored(dir: string, oid: string): Promise<boolean> {
  try {
    await run('git', ['-C', dir, 'cat-file', '-e', oid]);
    return true;
  } catch {
    return false;
  }
}

async function duBytes(path: string): Promise<number> {
  const { stdout } = await run('du', ['-sb', path]);
  return Number(stdout.split('\t')[0]);
}

/** Every pack of the cache passes native git's own verification (checksums, CRCs, offsets). */
async function verifyPacks(dir: string): Promise<number> {
  const packDir = join(dir, '.git', 'objects', 'pack');
  const idx = (await readdir(packDir)).filter((n) => n.endsWith('.idx'));
  for (const name of idx) await run('git', ['verify-pack', join(packDir, name)]);
  return idx.length;
}

describe('syncRepo keeps only the site path: memory and disk follow the site, not the repository', function () {
  this.timeout(240_000);
  let server: GitServer;
  let tmp: string;
  let url: string;
  let n = 0;
  const wc = (): string => join(tmp, `wc-${++n}`);

  beforeEach(async () => {
    server = await startGitServer();
    tmp = await mkdtemp(join(tmpdir(), 'bpa-site-only-'));
    url = await server.createRepo('site', { files: SITE });
  });
  afterEach(async () => {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('stores and checks out the site path alone; a large file elsewhere is neither kept nor checked out', async () => {
    const big = randomBytes(8 << 20);
    await server.commitAs(
      'site',
      { 'assets/firmware.bin': big, 'assets/notes.txt': 'not the site\n' },
      'assets',
    );
    const dir = wc();
    const { revision } = await syncRepo({ url, ref: 'main', dir, path: 'sites/edge' });
    assert.deepEqual((await readdir(dir)).sort(), ['.git', 'sites']);
    assert.deepEqual(await readdir(join(dir, 'sites')), ['edge']);
    assert.equal(
      await readFile(join(dir, 'sites/edge/site.yaml'), 'utf8'),
      SITE['sites/edge/site.yaml'],
    );
    assert.equal(await stored(dir, blobId(SITE['sites/edge/clusters/east.yaml'])), true);
    assert.equal(
      await stored(dir, blobId(big)),
      false,
      'the large blob outside the site is not kept',
    );
    assert.equal(await stored(dir, blobId('not the site\n')), false);
    assert.equal(await stored(dir, revision.commit), true);
    assert.ok((await duBytes(join(dir, '.git'))) < 1 << 20, 'the cache holds the site, not 8 MB');
    assert.ok((await verifyPacks(dir)) >= 1);
    // Trees are all kept: the digest and status commits need them.
    assert.match(await inputDigest(dir, revision.commit, 'sites/edge'), /^[0-9a-f]{64}$/);
  });

  it('checks out large and delta-compressed files inside the site exactly, and its packs verify', async () => {
    const a = randomBytes(3 << 20);
    const b = Buffer.from(a);
    b.write('a small edit in the middle', 1 << 20);
    const yaml = Array.from({ length: 200 }, (_, i) => `key${i}: value ${i}\n`).join('');
    await server.commitAs(
      'site',
      {
        'sites/edge/images/a.bin': a,
        'sites/edge/images/b.bin': b,
        'sites/edge/one.yaml': yaml,
        'sites/edge/two.yaml': `${yaml}extra: 1\n`,
      },
      'images',
    );
    // The server packs b as a delta of a (and two.yaml of one.yaml): check it does.
    const packs = await server.git('site', ['repack', '-a', '-d', '-q']).then(async () => {
      const dir = join(server.root, 'site.git', 'objects', 'pack');
      const idx = (await readdir(dir)).find((x) => x.endsWith('.idx')) ?? '';
      return server.git('site', ['verify-pack', '-v', join(dir, idx)]);
    });
    assert.match(
      packs,
      new RegExp(
        `${blobId(b)} blob +\\d+ \\d+ \\d+ 1 ${blobId(a)}|${blobId(a)} blob +\\d+ \\d+ \\d+ 1 ${blobId(b)}`,
      ),
    );

    const dir = wc();
    await syncRepo({ url, ref: 'main', dir, path: 'sites/edge' });
    assert.ok((await readFile(join(dir, 'sites/edge/images/a.bin'))).equals(a));
    assert.ok((await readFile(join(dir, 'sites/edge/images/b.bin'))).equals(b));
    assert.equal(await readFile(join(dir, 'sites/edge/two.yaml'), 'utf8'), `${yaml}extra: 1\n`);
    assert.equal(await verifyPacks(dir), 2, 'one pack of small objects, one of large blobs');
    // A later commit that leaves them alone rewrites nothing.
    const before = (await stat(join(dir, 'sites/edge/images/a.bin'))).mtimeMs;
    await server.commitAs('site', { 'sites/edge/site.yaml': 'kind: Site\nname: edge2\n' }, 'edit');
    await syncRepo({ url, ref: 'main', dir, path: 'sites/edge' });
    assert.equal((await stat(join(dir, 'sites/edge/images/a.bin'))).mtimeMs, before);
    assert.equal(
      await readFile(join(dir, 'sites/edge/site.yaml'), 'utf8'),
      'kind: Site\nname: edge2\n',
    );
  });

  it('a file copied into the site from elsewhere arrives, though the incremental pack leaves it out', async () => {
    const template = 'kind: Cluster\nname: from-template\n';
    await server.commitAs('site', { 'templates/cluster.yaml': template }, 'template');
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir, path: 'sites/edge', depth: 10 });
    assert.equal(await stored(dir, blobId(template)), false);
    await server.commitAs(
      'site',
      { 'sites/edge/clusters/west.yaml': template },
      'use the template',
    );
    // With reachability bitmaps the server leaves out exactly what the common commit holds.
    await server.git('site', ['repack', '-a', '-d', '-b', '-q']);
    server.requests.length = 0;
    await syncRepo({ url, ref: 'main', dir, path: 'sites/edge', depth: 10 });
    assert.equal(await readFile(join(dir, 'sites/edge/clusters/west.yaml'), 'utf8'), template);
    // The first pack (with the checked-out commit as common ground) lacked it: a second POST.
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 2);
  });

  it('a cache made for another site path is cloned again for the new one', async () => {
    await server.commitAs('site', { 'sites/core/site.yaml': 'kind: Site\nname: core\n' }, 'core');
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir, path: 'sites/edge' });
    const { changed } = await syncRepo({ url, ref: 'main', dir, path: 'sites/core' });
    assert.equal(changed, true);
    assert.deepEqual(await readdir(join(dir, 'sites')), ['core']);
    assert.equal(
      await readFile(join(dir, 'sites/core/site.yaml'), 'utf8'),
      'kind: Site\nname: core\n',
    );
  });

  it('a server that fails or hangs while sending the pack: GIT_UNAVAILABLE (transient), and the next sync works', async () => {
    const dir = wc();
    const code = async (p: Promise<unknown>): Promise<string> =>
      p.then(
        () => 'ok',
        (err: unknown) => `${(err as BpaError).code} ${(err as BpaError).retry}`,
      );
    server.intercept({ method: 'POST', path: '/git-upload-pack' }, () => ({
      status: 502,
      body: 'bad gateway',
    }));
    assert.equal(await code(syncRepo({ url, ref: 'main', dir })), 'GIT_UNAVAILABLE transient');
    server.intercept(
      { method: 'POST', path: '/git-upload-pack' },
      () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    );
    assert.equal(
      await code(syncRepo({ url, ref: 'main', dir, timeoutMs: 300 })),
      'GIT_UNAVAILABLE transient',
    );
    const { revision } = await syncRepo({ url, ref: 'main', dir });
    assert.equal(revision.commit, (await server.log('site', 'main'))[0]?.sha);
    assert.equal(await readFile(join(dir, 'README.md'), 'utf8'), SITE['README.md']);
  });

  it('peak memory stays below the size of a 128 MB file outside the site, or of a 128 MB YAML file in it (reported, not read)', async () => {
    const peak = async (path: string): Promise<{ peakMiB: number; problems: string[] }> => {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', FIXTURE, url, wc(), path],
        { maxBuffer: 1 << 20 },
      );
      return JSON.parse(stdout) as { peakMiB: number; problems: string[] };
    };
    const base = await peak('sites/edge');
    assert.deepEqual(base.problems, []);
    await server.commitAs('site', { 'assets/disk.img': randomBytes(128 << 20) }, 'disk image');
    const outside = await peak('sites/edge');
    const yaml = Buffer.from(`# ${randomBytes(96 << 20).toString('base64')}\n`);
    await server.commitAs(
      'site',
      { 'assets/disk.img': null, 'sites/edge/huge.yaml': yaml },
      'huge yaml instead',
    );
    const inside = await peak('sites/edge');
    assert.deepEqual(inside.problems, ['FILE_TOO_LARGE']);
    // Holding the file even once would cross the line; before bpa kept only the site, these
    // syncs peaked about five times the file above the base. What remains is Node.js's
    // short-lived network buffers, freed at the garbage collector's pace (40-120 MiB here).
    const growth = (m: { peakMiB: number }): number => m.peakMiB - base.peakMiB;
    const mib = (m: { peakMiB: number }): string => m.peakMiB.toFixed(0);
    console.log(
      `      peak RSS: ${mib(base)} MiB without, ${mib(outside)} MiB with the file outside, ${mib(inside)} MiB with the YAML inside`,
    );
    assert.ok(growth(outside) < 128, `outside: peak ${mib(outside)} MiB vs ${mib(base)} MiB`);
    assert.ok(growth(inside) < 128, `inside: peak ${mib(inside)} MiB vs ${mib(base)} MiB`);
  });
});
