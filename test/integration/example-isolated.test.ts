import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, bpa } from './apply/harness.js';
import { interfaces, requireLoopbackOnly } from '../netns/loopback-only.js';

/** How a TCP connection to `host:port` ends: its error code, or 'connected'. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/**
 * What the loopback-only namespace guarantees the tests that act on sites/example (or on its
 * inventory): bpa sends nothing anywhere, whatever the site names.
 */
describe('sites/example in a loopback-only network namespace', function () {
  this.timeout(60_000);
  requireLoopbackOnly();
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-example-isolated-'));
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('has lo alone: the example and lab addresses are unreachable at once, not timed out', async () => {
    assert.deepEqual(interfaces(), ['lo']);
    for (const host of ['192.0.2.11', '198.18.0.11', '198.19.255.1', '10.0.0.1'])
      assert.equal(await tryConnect(host, 22), 'ENETUNREACH', host);
  });

  it('bpa reconcile --once sites/example reaches none of its hosts and runs no installer', async () => {
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
    const state = join(tmp, 'state');
    const started = Date.now();
    const r = await bpa(['reconcile', '--once', site, '--state', state]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const unreachable = [
      ...r.stdout.matchAll(/\((192\.0\.2\.\d+):22\): cannot connect: network unreachable/g),
    ];
    assert.deepEqual([...new Set(unreachable.map((m) => m[1]))].sort(), [
      '192.0.2.11',
      '192.0.2.12',
      '192.0.2.13',
      '192.0.2.14',
      '192.0.2.15',
      '192.0.2.16',
      '192.0.2.17',
    ]);
    assert.doesNotMatch(r.stdout, /installer/i);
    assert.ok(Date.now() - started < 30_000, 'no connection waited for a timeout');
  });
});
