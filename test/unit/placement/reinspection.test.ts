import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { planSite, type Plan } from '../../../src/plan/index.js';
import { buildReports, type ClusterStatusDoc } from '../../../src/report/status.js';
import type { SiteModel } from '../../../src/validate/model.js';
import { applied, appliedFrom, cluster, host, leasesFor, node } from '../plan/plan-fixture.js';

/**
 * A host inspected again reports other hardware: the node placed on it no longer passes its
 * required terms. It stays (a warning, the cluster Degraded with the reason); the plan with
 * --prune shows it moved to a host that passes.
 */
describe('placement terms: re-inspection', () => {
  const nvme = { storage: [{ name: '/dev/nvme0n1', type: 'NVME', sizeBytes: 3.84e12 }] };
  // node-1 carried the NVMe disk when the node was placed; inspected again, it has an HDD only.
  const hosts = [
    host(1, { hardware: { storage: [{ name: '/dev/sda', type: 'HDD', sizeBytes: 4e12 }] } }),
    host(2, { hardware: nvme }),
    host(3, { hardware: nvme }),
  ];
  const east = cluster('east', [
    node('master-1', ['master'], { mac: '52:54:00:00:00:03' }),
    node('worker-1', ['worker'], {
      hardware: { storage: [{ type: 'NVME', sizeBytes: { min: 1.9e12 }, count: 1 }] },
    }),
  ]);
  const model: SiteModel = { clusters: [east], inventory: [] };
  const state = appliedFrom([
    applied(
      'east',
      [
        {
          name: 'master-1',
          roles: ['master'],
          host: 'metal3/node-3',
          mac: '52:54:00:00:00:03',
          ip: '198.18.0.12',
        },
        {
          name: 'worker-1',
          roles: ['worker'],
          host: 'metal3/node-1',
          mac: '52:54:00:00:00:01',
          ip: '198.18.0.10',
        },
      ],
      { plugins: [] },
    ),
  ]);
  const plan = (prune: boolean): Plan =>
    planSite({ model, hosts, leases: leasesFor(hosts), applied: state, prune, flavour: 'kud' });

  it('without --prune: the node stays, with a warning naming what the host fails', () => {
    const p = plan(false);
    assert.deepEqual(
      p.problems.map((x) => `${x.severity} ${x.code} ${x.pointer}: ${x.message}`),
      [
        'warning HOST_NO_LONGER_QUALIFIES /spec/workers/0/worker-1: cluster east: node worker-1 stays on metal3/node-1, which no longer passes its required terms (storage[0]: has 0 matching of 1 disk, needs 1 with type NVME, sizeBytes >=1900G); bpa does not move a running node by itself: with --prune it would be replaced on metal3/node-2',
      ],
    );
    const c = p.clusters[0];
    assert.deepEqual(
      c?.actions.map((a) => a.kind),
      [],
    );
    assert.equal(c?.nodes.find((n) => n.name === 'worker-1')?.host, 'metal3/node-1');
  });

  it('the cluster report is Degraded with the reason', () => {
    const files = buildReports({
      revision: 'a'.repeat(40),
      model,
      plan: plan(false),
      applied: state,
      previous: new Map(),
      now: '2026-11-28T00:00:00Z',
    });
    const doc = parse(files.get('status/east.yaml') ?? '') as ClusterStatusDoc;
    assert.equal(doc.status.phase, 'Degraded');
    const ready = doc.status.conditions.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'HostNoLongerQualifies');
    assert.match(
      ready?.message ?? '',
      /^node worker-1 stays on metal3\/node-1, which no longer passes/,
    );
  });

  it('with --prune: the plan moves it to a host that passes (remove and add)', () => {
    const p = plan(true);
    assert.deepEqual(p.problems, []);
    const c = p.clusters[0];
    assert.deepEqual(
      c?.actions.map((a) => a.kind),
      ['add-nodes', 'remove-nodes'],
    );
    assert.equal(
      c?.nodes.find((n) => n.name === 'worker-1' && n.change === 'add')?.host,
      'metal3/node-2',
    );
    assert.ok(
      c?.notes.some((n) =>
        n.startsWith(
          'node worker-1 is replaced: host metal3/node-1 → metal3/node-2 (moved from metal3/node-1 (storage[0]: has 0 matching of 1 disk',
        ),
      ),
      JSON.stringify(c?.notes),
    );
  });

  it('says when pruning would leave the node without a host', () => {
    const few = [hosts[0] as (typeof hosts)[number], hosts[2] as (typeof hosts)[number]];
    const p = planSite({
      model,
      hosts: few,
      leases: leasesFor(few),
      applied: state,
      prune: false,
      flavour: 'kud',
    });
    assert.match(
      p.problems[0]?.message ?? '',
      /with --prune it could not be placed \(worker-1: was on metal3\/node-1 \(storage\[0\]: has 0 matching of 1 disk, needs 1 with type NVME, sizeBytes >=1900G\); needs storage\[0\] 1 with type NVME, sizeBytes >=1900G; 1 host passes, all taken by east\/master-1/,
    );
  });
});
