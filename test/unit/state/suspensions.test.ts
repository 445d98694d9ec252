import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gateCluster } from '../../../src/plan/gate.js';
import type { ClusterPlan } from '../../../src/plan/types.js';
import { readSuspensions, writeSuspensions } from '../../../src/state/suspensions.js';

describe('state/suspensions', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-suspensions-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // A cluster may be named like a property every plain object has ("constructor"): it must
  // not read as suspended, with or without a file.
  it('a cluster named constructor is not taken for suspended', async () => {
    const plan = (): ClusterPlan =>
      ({ cluster: 'constructor', actions: [] }) as unknown as ClusterPlan;
    for (const write of [false, true]) {
      if (write) await writeSuspensions(dir, { east: { since: '2026-01-01T00:00:00.000Z' } });
      const suspended = await readSuspensions(dir);
      assert.equal(suspended['constructor'], undefined, `file written: ${write}`);
      assert.equal(suspended['east'] !== undefined, write);
      const p = plan();
      gateCluster(p, undefined, { suspended });
      assert.equal(p.gate, undefined, `file written: ${write}`);
    }
  });

  it('keeps what it reads: a suspension by name and the whole site', async () => {
    await writeSuspensions(dir, {
      '*': { since: '2026-01-01T00:00:00.000Z', reason: 'storm' },
      east: { since: '2026-01-02T00:00:00.000Z' },
    });
    assert.deepEqual(
      { ...(await readSuspensions(dir)) },
      {
        '*': { since: '2026-01-01T00:00:00.000Z', reason: 'storm' },
        east: { since: '2026-01-02T00:00:00.000Z' },
      },
    );
  });
});
