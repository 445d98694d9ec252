import assert from 'node:assert/strict';
import { planSite, type Plan, type PlanInput } from '../../../src/plan/index.js';
import { emptyState, type AppliedState } from '../../../src/state/applied.js';
import type { ClusterModel, SiteModel } from '../../../src/validate/model.js';
import { applied, appliedFrom, cluster, host, leasesFor, node } from './plan-fixture.js';

const hosts = [1, 2, 3, 4, 5, 6].map((n) => host(n));
const leases = leasesFor(hosts);
const mac = (n: number): string => `52:54:00:00:00:0${n}`;

function plan(
  clusters: ClusterModel[],
  state: AppliedState = emptyState(),
  over: Partial<PlanInput> = {},
): Plan {
  const model: SiteModel = { clusters, inventory: [] };
  return planSite({
    model,
    hosts,
    leases,
    applied: state,
    prune: false,
    flavour: 'kubespray',
    ...over,
  });
}

const etcdGroup = (hostsIni: string): string[] =>
  hostsIni.split('\n[etcd]\n')[1]?.split('\n\n')[0]?.split('\n').filter(Boolean) ?? [];

const masters = (n: number): ClusterModel =>
  cluster(
    'east',
    Array.from({ length: n }, (_, i) => node(`master-${i + 1}`, ['master'], { mac: mac(i + 1) })),
  );

describe('plan, Kubespray flavour: etcd', () => {
  const table: Array<[number, string[], boolean]> = [
    [1, ['master-1'], false],
    [2, ['master-1'], true],
    [3, ['master-1', 'master-2', 'master-3'], false],
    [4, ['master-1', 'master-2', 'master-3'], true],
  ];
  for (const [n, etcd, noted] of table) {
    it(`${n} masters: etcd ${etcd.join(', ')}, shown in the plan${noted ? ' with a note' : ''}`, () => {
      const c = plan([masters(n)]).clusters[0];
      assert.deepEqual(c?.etcd, etcd);
      assert.deepEqual(etcdGroup(c?.hostsIni ?? ''), etcd);
      const note = c?.notes.find((x) => x.startsWith('etcd runs on'));
      assert.equal(note !== undefined, noted, c?.notes.join('\n'));
      if (noted) assert.match(note ?? '', /is not an etcd member: Kubespray needs an odd number/);
    });
  }

  it('a master added to a running three-master cluster does not displace one that runs etcd', () => {
    const running = appliedFrom([
      applied(
        'east',
        [2, 3, 4].map((i) => ({
          name: `master-${i}`,
          roles: ['master' as const],
          host: `metal3/node-${i}`,
          mac: mac(i),
          ip: `198.18.0.${9 + i}`,
        })),
        { flavour: 'kubespray' },
      ),
    ]);
    // master-1 is new and listed first: it stays out of etcd, the running members stay in.
    const c = plan([masters(4)], running).clusters[0];
    assert.deepEqual(c?.etcd, ['master-2', 'master-3', 'master-4']);
    assert.deepEqual(etcdGroup(c?.hostsIni ?? ''), ['master-2', 'master-3', 'master-4']);
    assert.deepEqual(
      c?.actions.map((a) => `${a.kind}:${a.nodes.join(',')}`),
      ['add-nodes:master-1'],
    );
  });

  it('the KUD flavour keeps ICN layout: every master in etcd, no etcd field', () => {
    const c = plan([masters(2)], emptyState(), { flavour: 'kud' }).clusters[0];
    assert.equal(c?.etcd, undefined);
    assert.deepEqual(etcdGroup(c?.hostsIni ?? ''), ['master-1', 'master-2']);
  });
});
