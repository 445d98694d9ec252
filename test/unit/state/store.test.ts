import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore } from '../../../src/state/store.js';
import { BpaError } from '../../../src/util/errors.js';

describe('state store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-state-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is empty on a first run (no directory)', async () => {
    const state = await new StateStore(join(dir, 'missing')).readApplied();
    assert.equal(state.clusters.size, 0);
  });

  it('writes atomically and reads back; no temp files are left', async () => {
    const store = new StateStore(dir);
    const a = {
      cluster: 'east',
      appliedAt: '2026-11-22T00:00:00Z',
      nodes: [
        {
          name: 'm1',
          roles: ['master' as const],
          host: 'metal3/node-1',
          mac: '52:54:00:00:00:01',
          ip: '198.18.0.1',
        },
      ],
      plugins: ['emco'],
      packages: { master: [{ name: 'jq', version: '1.6-2' }], worker: [] },
    };
    await store.writeCluster(a);
    await store.writeCluster({ ...a, plugins: ['emco', 'multus'] });
    const state = await store.readApplied();
    assert.deepEqual(state.clusters.get('east')?.plugins, ['emco', 'multus']);
    assert.deepEqual(await readdir(join(dir, 'clusters', 'east')), ['applied.json']);
    assert.match(
      await readFile(join(dir, 'clusters', 'east', 'applied.json'), 'utf8'),
      /"cluster": "east"/,
    );
  });

  it('reports a corrupt file clearly instead of planning from nothing', async () => {
    await mkdir(join(dir, 'clusters', 'east'), { recursive: true });
    await writeFile(join(dir, 'clusters', 'east', 'applied.json'), '{"cluster": "ea');
    await assert.rejects(
      new StateStore(dir).readApplied(),
      (err: unknown) =>
        err instanceof BpaError &&
        err.code === 'STATE_CORRUPT' &&
        /applied\.json/.test(err.message),
    );
  });

  it('refuses cluster names that could leave the state directory', () => {
    assert.throws(() => new StateStore(dir).clusterDir('../etc'), /not a valid cluster name/);
  });
});
