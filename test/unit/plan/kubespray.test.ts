import assert from 'node:assert/strict';
import { formatPlan } from '../../../src/cli/output/plan.js';
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
  hostsIni
    .split('\n[etcd]\n')[1]
    ?.split('\n\n')[0]
    ?.split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[0] ?? '') ?? [];

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

describe('plan: PodSubnet', () => {
  const withSubnet = (podSubnet?: string): ClusterModel => ({
    ...masters(1),
    nodes: [
      node('master-1', ['master'], { mac: mac(1) }),
      node('worker-1', ['worker'], { mac: mac(2) }),
    ],
    podSubnet,
  });
  const running = (podSubnet?: string | null): AppliedState =>
    appliedFrom([
      applied(
        'east',
        [
          {
            name: 'master-1',
            roles: ['master'],
            host: 'metal3/node-1',
            mac: mac(1),
            ip: '198.18.0.10',
          },
          {
            name: 'worker-1',
            roles: ['worker'],
            host: 'metal3/node-2',
            mac: mac(2),
            ip: '198.18.0.11',
          },
        ],
        podSubnet === undefined ? {} : { podSubnet },
      ),
    ]);

  for (const flavour of ['kud', 'kubespray'] as const) {
    it(`${flavour}: a new cluster's PodSubnet is in the plan, its hosts.ini and its hash`, () => {
      const p = plan([withSubnet('10.244.64.0/18')], emptyState(), { flavour });
      const c = p.clusters[0];
      assert.equal(c?.podSubnet, '10.244.64.0/18');
      assert.equal(c?.podSubnetChange, undefined);
      const group = flavour === 'kud' ? 'k8s-cluster' : 'k8s_cluster';
      assert.match(
        c?.hostsIni ?? '',
        new RegExp(`\\n\\[${group}:vars\\]\\nkube_pods_subnet=10\\.244\\.64\\.0/18\\n`),
      );
      const other = plan([withSubnet('10.250.0.0/16')], emptyState(), { flavour });
      assert.notEqual(p.hash, other.hash);
      const none = plan([withSubnet(undefined)], emptyState(), { flavour });
      assert.equal(none.clusters[0]?.podSubnet, undefined);
      assert.doesNotMatch(none.clusters[0]?.hostsIni ?? '', /kube_pods_subnet/);
      assert.notEqual(p.hash, none.hash);
    });
  }

  it('a running cluster: the same PodSubnet is no change', () => {
    const p = plan([withSubnet('10.244.64.0/18')], running('10.244.64.0/18'));
    assert.deepEqual(p.clusters[0]?.actions, []);
    assert.equal(p.clusters[0]?.podSubnetChange, undefined);
    assert.deepEqual(p.clusters[0]?.notes, []);
    assert.match(formatPlan(p), /\nNo changes: 1 cluster;/);
  });

  const changes: Array<[string, string | null, string | undefined, RegExp]> = [
    [
      'changed',
      '10.244.64.0/18',
      '10.250.0.0/16',
      /PodSubnet 10\.250\.0\.0\/16 differs from 10\.244\.64\.0\/18, which the cluster was provisioned with: a pod network cannot change on a running cluster, so bpa keeps 10\.244\.64\.0\/18; set PodSubnet back to 10\.244\.64\.0\/18, or rebuild the cluster/,
    ],
    [
      'added to a cluster provisioned without one',
      null,
      '10.250.0.0/16',
      /PodSubnet 10\.250\.0\.0\/16 differs from the installer's default \(no PodSubnet\).*remove PodSubnet, or rebuild/,
    ],
    [
      'removed',
      '10.244.64.0/18',
      undefined,
      /PodSubnet \(removed\) differs from 10\.244\.64\.0\/18/,
    ],
  ];
  for (const [what, was, now, note] of changes) {
    it(`a running cluster whose PodSubnet is ${what}: a note, the running value kept, never "No changes"`, () => {
      const p = plan([withSubnet(now)], running(was));
      const c = p.clusters[0];
      assert.deepEqual(c?.actions, []);
      assert.deepEqual(c?.podSubnetChange, { from: was ?? undefined, to: now });
      assert.equal(c?.podSubnet, was ?? undefined);
      assert.match(c?.notes.join('\n') ?? '', note);
      if (was)
        assert.match(
          c?.hostsIni ?? '',
          new RegExp(`kube_pods_subnet=${was.replace(/\./g, '\\.')}`),
        );
      else assert.doesNotMatch(c?.hostsIni ?? '', /kube_pods_subnet/);
      const text = formatPlan(p);
      assert.doesNotMatch(text, /No changes/);
      assert.match(
        text,
        /cluster east \(differs from the site: the pod subnet cannot change in place\)/,
      );
      assert.match(
        text,
        /\nNothing bpa can apply, but 1 cluster differs from the site \(see the notes\)/,
      );
    });
  }

  it('a cluster applied before bpa recorded pod subnets: the site value, no change claimed', () => {
    const c = plan([withSubnet('10.250.0.0/16')], running(undefined)).clusters[0];
    assert.equal(c?.podSubnet, '10.250.0.0/16');
    assert.equal(c?.podSubnetChange, undefined);
  });

  it('the text plan shows the pod subnet and the etcd members', () => {
    const text = formatPlan(plan([withSubnet('10.244.64.0/18')]));
    assert.match(text, /\n {2}pod subnet 10\.244\.64\.0\/18\n/);
    assert.match(text, /\n {2}etcd master-1\n/);
  });
});
