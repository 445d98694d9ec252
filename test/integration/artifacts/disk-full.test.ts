import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe, TOKEN, type ServeProcess } from './serve-process.js';

const sha = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** bpa serve with its artifact store on a small tmpfs: a disk that really fills up. */
describe('bpa serve: an upload to a full artifact volume', function () {
  this.timeout(60_000);
  let dir = '';
  let store = '';
  let mounted = false;
  let srv: ServeProcess | undefined;

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'bpa-disk-full-'));
    store = join(dir, 'state', 'artifacts');
    await mkdir(store, { recursive: true });
    const why =
      process.getuid?.() !== 0
        ? 'mounting a tmpfs needs root'
        : spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', store], {
            encoding: 'utf8',
          }).stderr.trim() || undefined;
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
    mounted = true;
    srv = await startServe(dir);
  });
  after(async () => {
    await srv?.stop();
    if (mounted) {
      const r = spawnSync('umount', [store], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`umount ${store}: ${r.stderr}`);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers 507 saying what ran out and where, logs it without a stack, keeps nothing', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const r = await fetch(`${srv!.url}/api/v1/artifacts/images/big.img`, {
      method: 'PUT',
      body: data,
      headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha(data) },
    });
    const body = (await r.json()) as { error: string; message: string };
    assert.equal(r.status, 507, JSON.stringify(body));
    assert.equal(body.error, 'insufficient_storage');
    assert.equal(
      body.message,
      `no space left on the device of the artifact store ${store} (ENOSPC) while storing images/big.img; nothing was stored: free space there or give the state volume more`,
    );
    assert.deepEqual(await readdir(join(store, 'tmp')), []);
    assert.deepEqual(await readdir(join(store, 'blobs', 'sha256')), []);
    assert.equal((await fetch(`${srv!.url}/artifacts/images/big.img`)).status, 404);
    const logged = srv!
      .log()
      .split('\n')
      .filter((l) => l.includes('ENOSPC'));
    assert.equal(logged.length, 1, srv!.log());
    assert.match(logged[0] ?? '', /"level":"?(error|50)"?/);
    assert.doesNotMatch(srv!.log(), /\n\s+at |internal error|request failed/);
  });
});
