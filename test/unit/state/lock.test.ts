import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateLock } from '../../../src/state/lock.js';
import { BpaError } from '../../../src/util/errors.js';

describe('state lock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is exclusive between holders, and free again after release', async () => {
    const a = new StateLock(dir);
    const b = new StateLock(dir);
    await a.acquire();
    await assert.rejects(
      b.acquire(),
      (e: unknown) => e instanceof BpaError && e.code === 'STATE_LOCKED' && e.retry === 'waiting',
    );
    await a.verify();
    await a.release();
    await b.acquire();
    await assert.rejects(a.verify(), /taken by another process/);
    await b.release();
  });

  it('takes over a lock whose owner process is gone', async () => {
    await writeFile(
      join(dir, 'apply.lock'),
      JSON.stringify({
        pid: 2 ** 22 + 12345,
        started: '1',
        host: (await import('node:os')).hostname(),
        token: 'dead',
        since: '2026-01-01T00:00:00Z',
      }),
    );
    const l = new StateLock(dir);
    await l.acquire();
    await l.verify();
    await l.release();
  });

  it('a lock from another host waits while it is refreshed, and is taken over once stale', async () => {
    const path = join(dir, 'apply.lock');
    await writeFile(
      path,
      JSON.stringify({
        pid: 1,
        started: '1',
        host: 'old-pod-xyz',
        token: 't',
        since: '2026-01-01T00:00:00Z',
      }),
    );
    await assert.rejects(
      new StateLock(dir).acquire(),
      (e: unknown) =>
        e instanceof BpaError && e.code === 'STATE_LOCKED' && /old-pod-xyz/.test(e.message),
    );
    const old = new Date(Date.now() - 5 * 60_000);
    await utimes(path, old, old);
    const l = new StateLock(dir);
    await l.acquire();
    await l.release();
  });
});
