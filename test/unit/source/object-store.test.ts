import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { ObjectStore, encodeEntry, storedZlib } from '../../../src/source/object-store.js';

const blobOid = (data: Buffer): string =>
  createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');

describe('object store: entries written with stored zlib blocks', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-object-store-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('zlib reads back every size, across block boundaries', () => {
    for (const n of [0, 1, 100, 5552, 5553, 65534, 65535, 65536, 131071, 131072, 200_000]) {
      const data = randomBytes(n);
      assert.deepEqual(inflateSync(storedZlib(data)), data, `${n} bytes`);
    }
    const ones = Buffer.alloc(300_000, 0xff); // the largest sums Adler-32 must reduce
    assert.deepEqual(inflateSync(storedZlib(ones)), ones);
  });

  it('git verifies the pack and reads every object from it; bpa copies them out', async () => {
    const dir = join(tmp, 'repo');
    execFileSync('git', ['init', '-q', dir]);
    const blobs = [Buffer.alloc(0), Buffer.from('kind: Host\n'), randomBytes(70_000)];
    const store = new ObjectStore(dir);
    await store.writePack(blobs.map((b) => ({ oid: blobOid(b), raw: encodeEntry('blob', b) })));
    const pack = execFileSync('sh', ['-c', `ls ${join(dir, '.git/objects/pack')}/*.idx`])
      .toString()
      .trim();
    execFileSync('git', ['verify-pack', pack]);
    for (const [i, b] of blobs.entries()) {
      const oid = blobOid(b);
      assert.deepEqual(execFileSync('git', ['-C', dir, 'cat-file', 'blob', oid]), b);
      const out = join(tmp, `out-${i}`);
      await store.copyTo(oid, out, 0o644);
      assert.deepEqual(await readFile(out), b);
    }
  });
});
