import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDeb } from '../../lab/apt-repo.js';
import { run } from '../../lab/exec.js';
import { startServe, TOKEN, type ServeProcess } from './serve-process.js';

const sha = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * A package whose own control file carries the fields only an archive writes (where its file
 * is and what it hashes to), with wrong values, in the spellings dpkg accepts.
 */
async function buildLyingDeb(dir: string, name: string): Promise<string> {
  const tree = join(dir, `tree-${name}`);
  await mkdir(join(tree, 'DEBIAN'), { recursive: true });
  await mkdir(join(tree, 'usr', 'share', name), { recursive: true });
  await writeFile(join(tree, 'usr', 'share', name, 'file'), `${name}\n`);
  const zeros = (n: number): string => '0'.repeat(n);
  await writeFile(
    join(tree, 'DEBIAN', 'control'),
    [
      `Package: ${name}`,
      'Version: 1.0-1',
      'Architecture: all',
      'Maintainer: bpa test <test@bpa.invalid>',
      'Filename: pool/somewhere-else.deb',
      'Size: 99',
      `MD5sum: ${zeros(32)}`,
      `sha1: ${zeros(40)}`,
      `SHA256: ${zeros(64)}`,
      `SHA512: ${zeros(128)}`,
      `Description-md5: ${zeros(32)}`,
      'Description: a package that claims its own index fields',
      ' with a long description.',
      '',
    ].join('\n'),
  );
  const out = join(dir, `${name}_1.0-1_all.deb`);
  await run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', tree, out]);
  return out;
}

/** apt-get and apt-cache of this machine, with their state, cache and sources in `root` only. */
function apt(root: string): (tool: string, ...args: string[]) => Promise<string> {
  const opts = [
    `Dir::State=${join(root, 'state')}`,
    `Dir::State::status=${join(root, 'status')}`,
    `Dir::Cache=${join(root, 'cache')}`,
    `Dir::Etc::sourcelist=${join(root, 'sources.list')}`,
    'Dir::Etc::sourceparts=-',
    'Dir::Etc::preferencesparts=-',
    'APT::Sandbox::User=root',
    // Lists kept as fetched, not recompressed, so the test reads what apt read.
    'Acquire::GzipIndexes=false',
    'Debug::NoLocking=1',
  ].flatMap((o) => ['-o', o]);
  return async (tool, ...args) => (await run(tool, [...opts, ...args])).stdout;
}

/** The real apt-get of this machine reads bpa serve's apt repository over loopback. */
describe('bpa serve apt repository read by this machine’s apt-get', function () {
  this.timeout(120_000);
  let dir = '';
  let srv: ServeProcess;

  before(async function () {
    for (const tool of ['apt-get', 'dpkg-deb', 'dpkg-scanpackages']) {
      try {
        await run('sh', ['-c', `command -v ${tool}`]);
      } catch {
        console.log(`    skipped: ${tool} is not installed`);
        this.skip();
      }
    }
    dir = await mkdtemp(join(tmpdir(), 'bpa-apt-get-'));
    srv = await startServe(dir);
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const put = async (name: string, data: Buffer): Promise<number> =>
    (
      await fetch(`${srv.url}/api/v1/artifacts/packages/${name}`, {
        method: 'PUT',
        body: data,
        headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha(data) },
      })
    ).status;

  it('a package’s own Filename, Size and hash fields never reach the index: one stanza, bpa’s values', async () => {
    const debs = join(dir, 'debs');
    await mkdir(debs);
    const file = await buildLyingDeb(debs, 'liar');
    const data = await readFile(file);
    const name = 'liar_1.0-1_all.deb';
    assert.equal(await put(name, data), 201);

    const packages = await (await fetch(`${srv.url}/artifacts/apt/Packages`)).text();
    const fields = packages
      .split('\n')
      .filter((l) => /^[^\s#]/.test(l))
      .map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
    for (const field of ['package', 'filename', 'size', 'md5sum', 'sha256', 'description'])
      assert.equal(fields.filter((f) => f === field).length, 1, `${field} in\n${packages}`);
    for (const field of ['sha1', 'sha512', 'description-md5'])
      assert.equal(fields.includes(field), false, `${field} in\n${packages}`);

    // What dpkg-scanpackages says of the same file: the same size and hashes.
    const scanned = (await run('dpkg-scanpackages', ['-m', debs])).stdout;
    for (const field of ['Size', 'MD5sum', 'SHA256']) {
      const ours = new RegExp(`^${field}: (.*)$`, 'm').exec(packages)?.[1];
      const theirs = new RegExp(`^${field}: (.*)$`, 'm').exec(scanned)?.[1];
      assert.ok(ours, field);
      assert.equal(ours, theirs, field);
    }
    assert.match(packages, new RegExp(`^Filename: pool/${name}$`, 'm'));

    // The index apt-get update fetches and keeps: one stanza, with bpa's SHA256.
    const root = join(dir, 'apt');
    await mkdir(join(root, 'state', 'lists', 'partial'), { recursive: true });
    await mkdir(join(root, 'cache', 'archives', 'partial'), { recursive: true });
    await writeFile(join(root, 'status'), '');
    await writeFile(join(root, 'sources.list'), `deb [trusted=yes] ${srv.url}/artifacts/apt/ ./\n`);
    const aptGet = apt(root);
    await aptGet('apt-get', 'update');
    const lists = await readdir(join(root, 'state', 'lists'));
    const list = lists.find((f) => f.endsWith('_Packages'));
    assert.ok(list, lists.join(' '));
    const fetched = await readFile(join(root, 'state', 'lists', list), 'utf8');
    assert.equal(fetched.trimEnd().split(/\n\n+/).length, 1, fetched);
    const shown = await aptGet('apt-cache', 'show', 'liar');
    assert.equal(shown.trimEnd().split(/\n\n+/).length, 1, shown);
    assert.match(shown, new RegExp(`^SHA256: ${sha(data)}$`, 'm'));
    assert.match(shown, new RegExp(`^Size: ${data.length}$`, 'm'));
    // And apt downloads it: its checks of size and hash pass against the pool file.
    await aptGet('apt-get', 'install', '--download-only', '-y', 'liar');
    const got = await readFile(join(root, 'cache', 'archives', name));
    assert.equal(sha(got), sha(data));
  });

  it('a package whose stored file is a symbolic link leaves the index, and comes back when uploaded again', async () => {
    const debs = join(dir, 'debs-link');
    await mkdir(debs);
    const a = await readFile(await buildDeb(debs, { name: 'linked-a', version: '1.0-1' }));
    const b = await readFile(await buildDeb(debs, { name: 'linked-b', version: '1.0-1' }));
    const other = await buildDeb(join(dir, 'elsewhere'), { name: 'other', version: '6.6-6' });
    assert.equal(await put('linked-a_1.0-1_all.deb', a), 201);
    const packages = async (): Promise<string> =>
      (await fetch(`${srv.url}/artifacts/apt/Packages`)).text();
    assert.match(await packages(), /^Package: linked-a$/m);
    // A blob replaced by hand with a link to another package elsewhere on the machine.
    const blob = join(dir, 'state', 'artifacts', 'blobs', 'sha256', sha(a));
    await unlink(blob);
    await symlink(other, blob);
    assert.equal(await put('linked-b_1.0-1_all.deb', b), 201);
    const index = await packages();
    assert.match(index, /^Package: linked-b$/m);
    assert.doesNotMatch(index, /linked-a|other/);
    assert.equal((await fetch(`${srv.url}/artifacts/apt/pool/linked-a_1.0-1_all.deb`)).status, 404);
    // The same content uploaded again replaces the link and is indexed again.
    assert.equal(await put('linked-a_1.0-1_all.deb', a), 200);
    assert.match(await packages(), /^Package: linked-a$/m);
    const pool = await fetch(`${srv.url}/artifacts/apt/pool/linked-a_1.0-1_all.deb`);
    assert.equal(sha(Buffer.from(await pool.arrayBuffer())), sha(a));
  });
});
