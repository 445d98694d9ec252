import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeNodeOps } from '../../../src/apply/rollout/kube-nodes.js';
import { BpaError } from '../../../src/util/errors.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import type { ReconcileSummary } from '../../../src/reconcile/summary.js';
import type { ViewAction } from '../../../src/reconcile/view.js';
import { silentLogger } from '../../../src/util/log.js';
import {
  readyNode,
  startFakeKube,
  type FakeKube,
  type KubeObject,
} from '../../fakes/kube-api-server.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith, hostIp, writeSite, type SiteSpec } from '../../fakes/site.js';

/**
 * Rolling package changes: the real engine, journal and KubeNodeOps, driving the protocol fake
 * of the application cluster's API through the real client (Nodes, Pods with owners,
 * DaemonSet and mirror pods, PodDisruptionBudgets answering 429, Eviction, cordon/uncordon),
 * with the package side on in-memory nodes.
 */
describe('rolling node changes (cordon, drain, change, health, uncordon)', function () {
  this.timeout(30_000);
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let kube: FakeKube;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;
  let source: FakeSiteSource;
  let inFlight: number;
  let maxInFlight: number;
  let changed: string[][];
  let rolling: boolean;

  const names = ['master-1', 'worker-1', 'worker-2', 'worker-3'];
  const rollout = (extra: string[] = []): string[] => [
    '  rollout:',
    '    maxUnavailable: 2',
    "    drain: { timeout: '1s' }",
    "    healthCheck: { timeout: '1s' }",
    ...extra,
  ];
  const v1: SiteSpec = {
    nodes: [
      { name: 'master-1', roles: ['master'], host: 0 },
      { name: 'worker-1', roles: ['worker'], host: 1 },
      { name: 'worker-2', roles: ['worker'], host: 2 },
      { name: 'worker-3', roles: ['worker'], host: 3 },
    ],
    masterSoftware: ['jq=1.6-2.1ubuntu3'],
    workerSoftware: ['curl=7.88.1-10'],
    clusterSpec: rollout(),
  };
  const v2: SiteSpec = { ...v1, masterSoftware: ['jq=1.7.1-3'], workerSoftware: ['curl=8.5.0-2'] };

  const reconciler = (): Reconciler =>
    new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports: {
        ...ports,
        nodes: new KubeNodeOps({
          kubeconfig: () => readFile(kube.kubeconfigPath, 'utf8'),
          log: silentLogger(),
          pollMs: 20,
        }),
      },
    });

  const pod = (
    name: string,
    on: string,
    extra: Partial<KubeObject['metadata']> = {},
  ): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps', ...extra },
    spec: { nodeName: on, containers: [{ name: 'c', image: 'busybox' }] },
    status: { phase: 'Running' },
  });
  const pdb = (allowed: number): KubeObject => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'apps' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
    status: { disruptionsAllowed: allowed },
  });
  const cordoned = (name: string): boolean =>
    (kube.get('v1', 'Node', undefined, name)?.spec as { unschedulable?: boolean })
      ?.unschedulable === true;
  const podNames = (): string[] => kube.list('v1', 'Pod').map((p) => p.metadata.name ?? '');

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-rollout-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    kube = await startFakeKube();
    for (const n of names) kube.put(readyNode(n));
    // Owners exist, as in a cluster: the garbage collector deletes pods whose owner is gone.
    const owner = (
      kind: string,
      name: string,
    ): { apiVersion: string; kind: string; name: string; uid: string; controller: boolean } => {
      const o = kube.put({
        apiVersion: 'apps/v1',
        kind,
        metadata: { name, namespace: 'apps' },
        spec: {},
      });
      return { apiVersion: 'apps/v1', kind, name, uid: o.metadata.uid ?? '', controller: true };
    };
    const rs = owner('ReplicaSet', 'web-5d8');
    const ds = owner('DaemonSet', 'node-exporter');
    kube.put(pod('web-1', 'worker-1', { labels: { app: 'web' }, ownerReferences: [rs] }));
    kube.put(pod('api-1', 'worker-2', { labels: { app: 'api' }, ownerReferences: [rs] }));
    for (const n of names) kube.put(pod(`node-exporter-${n}`, n, { ownerReferences: [ds] }));
    kube.put(
      pod('kube-apiserver-master-1', 'master-1', {
        namespace: 'kube-system',
        annotations: { 'kubernetes.io/config.mirror': 'abc' },
      }),
    );
    kube.put(pdb(2));
    nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'], curl: ['7.88.1-10', '8.5.0-2'] });
    ports = fakePorts(nodes);
    inFlight = 0;
    maxInFlight = 0;
    changed = [];
    rolling = false;
    const apply = ports.packages.apply.bind(ports.packages);
    ports.packages.apply = async (cluster, list, changes, mode) => {
      inFlight += list.length;
      maxInFlight = Math.max(maxInFlight, inFlight);
      changed.push(list.map((n) => n.name));
      // Whoever is changed now is cordoned, and drained of its evictable pods.
      if (rolling)
        for (const n of list) assert.ok(cordoned(n.name), `${n.name} is cordoned while it changes`);
      await new Promise((r) => setTimeout(r, 30));
      inFlight -= list.length;
      return apply(cluster, list, changes, mode);
    };
    source = new FakeSiteSource(siteDir);
    await writeSite(siteDir, v1);
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    changed = [];
    maxInFlight = 0;
    rolling = true;
  });
  afterEach(async () => {
    await kube.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('a new cluster is not drained: the installer has not made Kubernetes yet', () => {
    assert.equal(
      kube.requests.filter((r) => r.path.startsWith('/api/v1/nodes')).length,
      0,
      'no call to the cluster API while provisioning',
    );
  });

  it('upgrades node by node: masters alone first, then at most maxUnavailable workers, each drained and uncordoned', async () => {
    await writeSite(siteDir, v2);
    const r = await reconciler().reconcile('webhook');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.deepEqual(changed[0], ['master-1'], 'the master first, alone');
    assert.ok(maxInFlight <= 2, `never more than 2 nodes at once (saw ${maxInFlight})`);
    assert.deepEqual(changed.flat().sort(), names);
    for (const n of names) assert.equal(cordoned(n), false, `${n} uncordoned`);
    assert.equal(nodes.packagesOf(hostIp(3)).get('curl'), '8.5.0-2');
    // Evicted: the app pods (the budget allowed them); kept: DaemonSet and mirror pods.
    const left = podNames();
    assert.ok(!left.includes('web-1') && !left.includes('api-1'), left.join(','));
    for (const n of names) assert.ok(left.includes(`node-exporter-${n}`));
    assert.ok(left.includes('kube-apiserver-master-1'));
    const evictions = kube.requests.filter(
      (x) => x.method === 'POST' && x.path.endsWith('/eviction'),
    );
    assert.deepEqual(evictions.map((e) => e.path).sort(), [
      '/api/v1/namespaces/apps/pods/api-1/eviction',
      '/api/v1/namespaces/apps/pods/web-1/eviction',
    ]);
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
  });

  it('a PodDisruptionBudget that never allows eviction: the drain times out, the node stays cordoned, the rollout halts, nothing else is touched; fixed, it resumes without repeating finished nodes', async () => {
    kube.put(pdb(0));
    await writeSite(siteDir, v2);
    const r = await reconciler().reconcile('webhook');
    assert.equal(r.result, 'failed');
    const report = source.clusterReport('east');
    assert.equal(report?.status.phase, 'Degraded');
    const ready = report?.status.conditions.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'RolloutHalted');
    assert.equal(ready?.message, 'upgrade-packages failed at step node:worker-1: ROLLOUT_HALTED');
    // Why, on the page (not in git).
    assert.match(
      failedAction(r)?.error?.message ?? '',
      /halted at worker-1 .*drain timed out after 1s.*apps\/web-1.*disruption budget/,
    );
    assert.equal(cordoned('worker-1'), true, 'the node whose drain failed stays cordoned');
    assert.deepEqual(report?.status.rollout, {
      action: 'upgrade-packages',
      nodes: [
        { name: 'master-1', state: 'done' },
        { name: 'worker-1', state: 'failed' },
        { name: 'worker-2', state: 'done' },
        { name: 'worker-3', state: 'pending' },
      ],
    });
    assert.deepEqual(
      r.clusters.find((c) => c.name === 'east')?.rollout,
      { done: 2, failed: 1, pending: 1 },
      'what bpa_rollout_nodes exports',
    );
    assert.equal(nodes.packagesOf(hostIp(1)).get('curl'), '7.88.1-10', 'and is not changed');
    // Its batch-mate finished; the next batch never started.
    assert.deepEqual(changed, [['master-1'], ['worker-2']]);
    assert.equal(cordoned('worker-3'), false);
    assert.equal(nodes.packagesOf(hostIp(3)).get('curl'), '7.88.1-10');
    assert.ok(podNames().includes('web-1'));

    // The budget allows it again: the next reconcile resumes at worker-1.
    kube.put(pdb(1));
    changed = [];
    const again = await reconciler().reconcile('retry');
    assert.equal(again.result, 'applied', JSON.stringify(again.error));
    assert.deepEqual(
      changed.flat().sort(),
      ['worker-1', 'worker-3'],
      'finished nodes are not upgraded again',
    );
    for (const n of names) assert.equal(cordoned(n), false);
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
  });

  it('a node that is not Ready after its change stays cordoned and halts the rollout', async () => {
    const apply = ports.packages.apply.bind(ports.packages);
    ports.packages.apply = async (cluster, list, changes, mode) => {
      const out = await apply(cluster, list, changes, mode);
      if (list.some((n) => n.name === 'master-1'))
        kube.updateStatus('v1', 'Node', undefined, 'master-1', {
          conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }],
        });
      return out;
    };
    await writeSite(siteDir, v2);
    const r = await reconciler().reconcile('webhook');
    assert.equal(r.result, 'failed');
    assert.equal(cordoned('master-1'), true);
    assert.deepEqual(changed, [['master-1']], 'no worker touched');
    assert.match(
      source.clusterReport('east')?.status.conditions.find((c) => c.type === 'Ready')?.message ??
        '',
      /failed at step node:master-1: ROLLOUT_HALTED$/,
    );
    assert.match(
      failedAction(r)?.error?.message ?? '',
      /master-1: node master-1: not Ready within 1s after the change: Ready is False \(KubeletNotReady\)/,
    );
    // Healthy again: the next run checks it, uncordons it, and goes on without changing it again.
    kube.updateStatus('v1', 'Node', undefined, 'master-1', {
      conditions: [{ type: 'Ready', status: 'True' }],
    });
    changed = [];
    const again = await reconciler().reconcile('retry');
    assert.equal(again.result, 'applied', JSON.stringify(again.error));
    assert.ok(!changed.flat().includes('master-1'), 'master-1 was not upgraded twice');
    assert.equal(cordoned('master-1'), false);
  });

  it('stopped in the middle of a drain: the resumed run neither repeats finished nodes nor uncordons a node whose change has not finished', async () => {
    kube.put(pdb(0)); // worker-1's drain waits on its budget …
    await writeSite(siteDir, v2);
    const stop = new AbortController();
    const running = reconciler().reconcile('webhook', stop.signal);
    // … until bpa is stopped in the middle of it.
    for (let i = 0; i < 200 && !kube.requests.some((x) => x.path.endsWith('/web-1/eviction')); i++)
      await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    const stopped = await running;
    assert.equal(stopped.result, 'interrupted');
    assert.equal(cordoned('worker-1'), true, 'left cordoned: its change has not happened');
    const journal = JSON.parse(
      await readFile(join(stateDir, 'clusters', 'east', 'journal.json'), 'utf8'),
    ) as {
      steps: Array<{ step: string; status: string; data?: { phase?: string } }>;
    };
    const w1 = journal.steps.find((s) => s.step === 'node:worker-1');
    assert.equal(w1?.status, 'running');
    assert.equal(w1?.data?.phase, 'cordoned');
    assert.equal(journal.steps.find((s) => s.step === 'node:master-1')?.status, 'done');

    kube.put(pdb(1));
    changed = [];
    const resumed = await reconciler().reconcile('startup');
    assert.equal(resumed.result, 'applied', JSON.stringify(resumed.error));
    assert.ok(!changed.flat().includes('master-1'), 'the finished master is not upgraded again');
    assert.ok(changed.flat().includes('worker-1'));
    for (const n of names) assert.equal(cordoned(n), false);
  });

  describe("the installer's Kubernetes upgrade (upgrade-cluster)", () => {
    // What each upgrade run saw: its nodes, and which nodes of the cluster were cordoned.
    let upgrades: Array<{ nodes: string[]; cordoned: string[] }>;
    let failOn: string | undefined;
    beforeEach(() => {
      upgrades = [];
      failOn = undefined;
      const run = ports.installer.run.bind(ports.installer);
      ports.installer.run = async (path, req, step) => {
        if (path === 'upgrade') {
          upgrades.push({ nodes: [...req.nodes], cordoned: names.filter(cordoned) });
          if (req.nodes.includes(failOn ?? ''))
            throw new BpaError(
              'INSTALLER_FAILED',
              `installer upgrade for cluster ${req.cluster} exited 2: kubeadm upgrade failed`,
              'transient',
            );
        }
        return run(path, req, step);
      };
    });

    it('runs the upgrade path node by node (its own --limit), masters first, each cordoned and drained, then Ready and uncordoned', async () => {
      await writeSite(siteDir, { ...v1, kubernetesVersion: 'v1.27.10' });
      const r = await reconciler().reconcile('webhook');
      assert.equal(r.result, 'applied', JSON.stringify(r.error));
      assert.deepEqual(upgrades[0], { nodes: ['master-1'], cordoned: ['master-1'] });
      for (const u of upgrades) {
        assert.equal(u.nodes.length, 1, 'one node per run');
        assert.ok(u.cordoned.includes(u.nodes[0] ?? ''), `${u.nodes[0]} cordoned while upgraded`);
        assert.ok(u.cordoned.length <= 2, `at most maxUnavailable cordoned (${u.cordoned})`);
      }
      assert.deepEqual(upgrades.map((u) => u.nodes[0]).sort(), names);
      for (const n of names) assert.equal(cordoned(n), false, `${n} uncordoned`);
      assert.ok(!podNames().includes('web-1'), 'drained before its upgrade');
      // Each run its own Job name, when the installer runs as a Job.
      const ids = ports.installer.runs.filter((x) => x.path === 'upgrade').map((x) => x.req.workId);
      assert.equal(new Set(ids).size, 4);
      const journal = JSON.parse(
        await readFile(join(stateDir, 'clusters', 'east', 'journal.json'), 'utf8'),
      ) as { steps: Array<{ action: string; step: string; status: string }> };
      assert.deepEqual(
        journal.steps
          .filter((s) => s.action === 'upgrade-cluster')
          .map((s) => `${s.step}:${s.status}`)
          .sort(),
        [
          'inventory:done',
          'node:master-1:done',
          'node:worker-1:done',
          'node:worker-2:done',
          'node:worker-3:done',
          'record:done',
          'ssh-access:done',
        ],
      );
      assert.deepEqual(source.clusterReport('east')?.status.rollout, {
        action: 'upgrade-cluster',
        nodes: names.map((name) => ({ name, state: 'done' })),
      });
    });

    it('a node whose upgrade fails stays cordoned and halts the rollout; the next run upgrades only the nodes not finished', async () => {
      failOn = 'worker-1';
      await writeSite(siteDir, { ...v1, kubernetesVersion: 'v1.27.10' });
      const r = await reconciler().reconcile('webhook');
      assert.equal(r.result, 'failed');
      const ready = source.clusterReport('east')?.status.conditions.find((c) => c.type === 'Ready');
      assert.equal(ready?.reason, 'RolloutHalted');
      assert.equal(ready?.message, 'upgrade-cluster failed at step node:worker-1: ROLLOUT_HALTED');
      assert.match(
        failedAction(r)?.error?.message ?? '',
        /halted at worker-1 .*kubeadm upgrade failed/,
      );
      assert.equal(cordoned('worker-1'), true, 'stays cordoned');
      assert.equal(cordoned('worker-3'), false, 'the next batch never started');
      assert.ok(!upgrades.some((u) => u.nodes[0] === 'worker-3'));

      failOn = undefined;
      upgrades = [];
      const again = await reconciler().reconcile('retry');
      assert.equal(again.result, 'applied', JSON.stringify(again.error));
      assert.deepEqual(
        upgrades.map((u) => u.nodes[0]),
        ['worker-1', 'worker-3'],
        'master-1 and worker-2 are not upgraded again',
      );
      for (const n of names) assert.equal(cordoned(n), false);
      assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
    });
  });
});

/** The failed action of the last run's plan, as the page shows it. */
function failedAction(summary: ReconcileSummary): ViewAction | undefined {
  return summary.view?.plan?.clusters.flatMap((c) => c.actions).find((a) => a.state === 'failed');
}
