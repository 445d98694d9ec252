import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { IN_MEMORY_MAX, PackScan } from '../../../src/source/pack-scan.js';

const run = promisify(execFile);

/** Packs made by native git, with deltas of both kinds, small and large, read by PackScan. */
describe('PackScan against packs written by git pack-objects', function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  const a = randomBytes(3 << 20);
  const b = Buffer.from(a);
  b.write('an edit in the middle', 1 << 20);
  const yaml = Array.from({ length: 300 }, (_, i) => `key${i}: value ${i}\n`).join('');

  const git = async (args: string[], input?: string): Promise<string> => {
    if (input === undefined)
      return (await run('git', ['-C', repo, ...args], { maxBuffer: 1 << 26 })).stdout;
    return new Promise((resolve, reject) => {
      const child = execFile('git', ['-C', repo, ...args], { maxBuffer: 1 << 26 }, (err, out) =>
        err ? reject(err) : resolve(out),
      );
      child.stdin?.end(input);
    });
  };

  /** `git pack-objects` of everything into a file; ofs-deltas or ref-deltas. */
  const pack = async (name: string, ofs: boolean): Promise<string> => {
    const file = join(tmp, name);
    const args = ['-C', repo, 'pack-objects', '--stdout', '--revs', '--window=10', '--depth=50'];
    if (ofs) args.push('--delta-base-offset');
    const child = spawn('git', args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
    });
    child.stdin.end('HEAD\n');
    // The file is complete only once the write stream has finished, not when git exits.
    await Promise.all([pipeline(child.stdout, createWriteStream(file)), exited]);
    return file;
  };

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-pack-scan-'));
    repo = join(tmp, 'repo');
    await run('git', ['init', '-q', '-b', 'main', repo]);
    await writeFile(join(repo, 'a.bin'), a);
    await writeFile(join(repo, 'b.bin'), b);
    await writeFile(join(repo, 'one.yaml'), yaml);
    await writeFile(join(repo, 'two.yaml'), `${yaml}extra: 1\n`);
    await git(['add', '-A']);
    await git(['-c', 'user.name=T', '-c', 'user.email=t@example.org', 'commit', '-q', '-m', 'one']);
    await writeFile(join(repo, 'one.yaml'), `${yaml}changed: 2\n`);
    await git(['-c', 'user.name=T', '-c', 'user.email=t@example.org', 'commit', '-qam', 'two']);
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  for (const ofs of [true, false]) {
    const kind = ofs ? 6 : 7;
    it(`identifies every object and resolves ${ofs ? 'ofs' : 'ref'}-deltas, small and large`, async () => {
      const scan = await PackScan.open(await pack(`p-${kind}.pack`, ofs));
      try {
        const expected = (await git(['rev-list', '--objects', '--all']))
          .split('\n')
          .filter(Boolean)
          .map((l) => l.slice(0, 40))
          .sort();
        assert.deepEqual([...scan.byOid.keys()].sort(), expected);
        const deltas = scan.entries.filter((e) => e.kind === kind);
        assert.ok(deltas.length > 0, 'the pack holds deltas');
        assert.ok(
          deltas.some((e) => (e.objectSize ?? 0) > IN_MEMORY_MAX),
          'one delta makes a large object (resolved through files)',
        );
        for (const [name, content] of [
          ['a.bin', a],
          ['b.bin', b],
          ['two.yaml', Buffer.from(`${yaml}extra: 1\n`)],
        ] as const) {
          const oid = (await git(['rev-parse', `HEAD:${name}`])).trim();
          const c = await scan.content(scan.byOid.get(oid)!);
          const got = c.data ?? (await readFile(c.file!));
          assert.ok(got.equals(content), `${name} as stored`);
        }
      } finally {
        await scan.close();
      }
    });
  }

  it('refuses a pack whose compressed data is damaged', async () => {
    const file = await pack('bad.pack', true);
    const bytes = await readFile(file);
    // Past the header and the first entries' headers: inside some entry's zlib data.
    for (let i = 200; i < 260; i++) bytes[i] = (bytes[i] ?? 0) ^ 0xff;
    await writeFile(file, bytes);
    await assert.rejects(PackScan.open(file));
  });
});
