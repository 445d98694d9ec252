// Operator mode: the finalizer bpa.akraino.org/cluster and deletionPolicy, on a real
// kube-apiserver as bpa's service account (deploy/rbac.yaml), with the real reconciler, planner
// and engine over in-memory nodes (test/fakes/ports.ts).
import assert from 'node:assert/strict';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { parse } from 'yaml';
import type { SiteStatusDoc } from '../../../src/report/status.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishNodeConfigMap, storeKubeconfigSecret } from '../../../src/apply/k8s/publish.js';
import { CLUSTER_FINALIZER } from '../../../src/reconcile/deletion.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { KubernetesSource } from '../../../src/source/kubernetes-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { configWith, hostMac, writeSite } from '../../fakes/site.js';
import { waitFor } from '../apply/harness.js';
import { useRealKube } from '../../k8s/envtest.js';
import { createObjectsOf } from '../../k8s/kube-objects.js';

const API = '/apis/bpa.akraino.org/v1alpha1';

describe('operator mode: deleting a cluster (real kube-apiserver)', function () {
  this.timeout(120_000);
  const kube = useRealKube({ name: 'opdel' });
  let tmp = '';
  const sources: KubernetesSource[] = [];
  after(async () => {
    for (const s of sources) await s.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** The namespace emptied of the test before's objects, finalizers and all. */
  async function clean(ns: string): Promise<void> {
    for (const s of sources.splice(0)) await s.stop();
    for (const plural of ['sites', 'clusters', 'provisionings', 'softwares']) {
      const list = await kube.env.admin<{
        items: Array<{ metadata: { name: string; finalizers?: string[] } }>;
      }>('GET', `${API}/namespaces/${ns}/${plural}`);
      for (const o of list.body.items) {
        const p = `${API}/namespaces/${ns}/${plural}/${o.metadata.name}`;
        if (o.metadata.finalizers?.length)
          await kube.env.admin('PUT', p, { ...o, metadata: { ...o.metadata, finalizers: [] } });
        await kube.env.admin('DELETE', p);
      }
    }
  }

  /** Two clusters (east on hosts 0-1, west on host 2) applied in the namespace; a reconciler over them. */
  async function setUp(name: string, prune: boolean, policy?: 'Orphan' | 'Delete') {
    tmp ||= await mkdtemp(join(tmpdir(), 'bpa-opdel-'));
    await clean(kube.env.namespace);
    const dir = join(tmp, name);
    const ns = `${kube.env.namespace}`;
    const east = `${name}-east`;
    const west = `${name}-west`;
    await writeSite(join(dir, 'east'), {
      cluster: east,
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
      ],
      workerSoftware: ['curl'],
      ...(policy ? { clusterSpec: [`  deletionPolicy: ${policy}`] } : {}),
      siteSpec: ['  prune: false'],
    });
    await writeSite(join(dir, 'west'), {
      cluster: west,
      nodes: [{ name: 'master-1', roles: ['master'], host: 2 }],
      extraCluster: true,
    });
    const site = `${name}-site`;
    await createObjectsOf(kube.env, join(dir, 'east', 'cluster.yaml'));
    await createObjectsOf(kube.env, join(dir, 'west', 'cluster.yaml'));
    await kube.env.admin('POST', `${API}/namespaces/${ns}/sites`, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Site',
      metadata: { name: site },
      spec: {},
    });
    const stateDir = join(dir, 'state');
    const source = new KubernetesSource({
      kubeConfig: kube.env.bpaKubeConfig(),
      namespaces: [ns],
      stateDir,
      log: silentLogger(),
    });
    sources.push(source);
    await source.start();
    const nodes = new FakeNodes({ curl: ['7.81.0-1'], jq: ['1.6-2.1ubuntu3'] });
    const ports = fakePorts(nodes);
    const reconciler = new Reconciler({
      source,
      configFor: configWith({
        stateDir,
        inventoryDir: join(dir, 'east', 'inventory'),
        bootstrapKubeconfig: kube.env.bpaKubeconfigPath,
        namespace: ns,
        prune,
      }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
    });
    return { ns, east, west, site, stateDir, reconciler, ports, source };
  }

  const get = async (ns: string, plural: string, name: string) =>
    kube.env.admin<{ metadata: { finalizers?: string[]; deletionTimestamp?: string } }>(
      'GET',
      `${API}/namespaces/${ns}/${plural}/${name}`,
    );

  /** Deletes the cluster's three objects, as kubectl delete -f of its directory does. */
  async function deleteCluster(ns: string, cluster: string, source: KubernetesSource) {
    for (const [plural, name] of [
      ['clusters', cluster],
      ['provisionings', `${cluster}-provisioning`],
      ['softwares', `${cluster}-software`],
    ] as const)
      await kube.env.admin('DELETE', `${API}/namespaces/${ns}/${plural}/${name}`);
    // The watch brings the deletion to bpa.
    await waitFor('the deletion seen by the watch', async () => {
      await source.sync();
      return source.siteObjects().some((o) => o.name === cluster && o.deletionTimestamp)
        ? true
        : undefined;
    });
  }

  const stateOf = (stateDir: string, cluster: string) =>
    access(join(stateDir, 'clusters', cluster, 'applied.json')).then(
      () => true,
      () => false,
    );

  it('puts the finalizer on a Cluster once it is provisioned; deletionPolicy Orphan (the default) forgets the cluster, leaves its nodes and Secret, and lets the object go', async () => {
    const t = await setUp('orphan', true);
    const first = await t.reconciler.reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    for (const c of [t.east, t.west])
      assert.deepEqual((await get(t.ns, 'clusters', c)).body.metadata.finalizers, [
        CLUSTER_FINALIZER,
      ]);
    // Only the object that stands for the cluster carries it.
    assert.equal(
      (await get(t.ns, 'provisionings', `${t.east}-provisioning`)).body.metadata.finalizers,
      undefined,
    );
    await storeKubeconfigSecret(kube.env.bpaKubeConfig(), t.ns, t.east, 'kubeconfig');
    const installs = t.ports.installer.runs.length;

    await deleteCluster(t.ns, t.east, t.source);
    // Held by the finalizer until bpa has settled it.
    assert.ok((await get(t.ns, 'clusters', t.east)).body.metadata.deletionTimestamp);
    const second = await t.reconciler.reconcile('kubernetes');
    assert.notEqual(second.result, 'failed', JSON.stringify(second.error));
    assert.equal((await get(t.ns, 'clusters', t.east)).status, 404);
    assert.equal(await stateOf(t.stateDir, t.east), false, 'the applied state is forgotten');
    assert.equal(await stateOf(t.stateDir, t.west), true, 'the other cluster is untouched');
    // Nothing was removed, even with pruning allowed; the Secret stays.
    assert.equal(
      t.ports.installer.runs.slice(installs).filter((r) => r.path === 'remove').length,
      0,
    );
    const secret = await kube.env.admin(
      'GET',
      `/api/v1/namespaces/${t.ns}/secrets/${t.east}-kubeconfig`,
    );
    assert.equal(secret.status, 200);
  });

  it('deletionPolicy Delete removes the cluster (pruning allowed: its nodes reset by remove-cluster), deletes the Secret and ConfigMap, then lets the object go', async () => {
    const t = await setUp('del', true, 'Delete');
    assert.equal((await t.reconciler.reconcile('startup')).result, 'applied');
    await storeKubeconfigSecret(kube.env.bpaKubeConfig(), t.ns, t.east, 'kubeconfig');
    await publishNodeConfigMap(kube.env.bpaKubeConfig(), t.ns, t.east, [
      { name: 'master-1', ip: '198.18.7.11', roles: ['master'] },
    ]);
    const installs = t.ports.installer.runs.length;
    await deleteCluster(t.ns, t.east, t.source);
    const r = await t.reconciler.reconcile('kubernetes');
    assert.notEqual(r.result, 'failed', JSON.stringify(r.error));
    const removed = t.ports.installer.runs.slice(installs).filter((x) => x.path === 'reset');
    assert.equal(removed.length, 1, JSON.stringify(t.ports.installer.runs.slice(installs)));
    assert.equal((await get(t.ns, 'clusters', t.east)).status, 404);
    for (const p of [`secrets/${t.east}-kubeconfig`, `configmaps/${t.east}-configmap`])
      assert.equal((await kube.env.admin('GET', `/api/v1/namespaces/${t.ns}/${p}`)).status, 404);
    assert.equal(await stateOf(t.stateDir, t.east), false);
  });

  it('deletionPolicy Delete without pruning: nothing is removed and the finalizer stays (removing it by hand orphans the cluster)', async () => {
    const t = await setUp('noprune', false, 'Delete');
    assert.equal((await t.reconciler.reconcile('startup')).result, 'applied');
    const installs = t.ports.installer.runs.length;
    await deleteCluster(t.ns, t.east, t.source);
    await t.reconciler.reconcile('kubernetes');
    assert.equal(t.ports.installer.runs.slice(installs).length, 0);
    const held = await get(t.ns, 'clusters', t.east);
    assert.equal(held.status, 200);
    assert.deepEqual(held.body.metadata.finalizers, [CLUSTER_FINALIZER]);
    assert.equal(await stateOf(t.stateDir, t.east), true);
  });

  it('a removal that fails holds the deletion (Stalled with its reason, never lost); removing the finalizer by hand orphans the cluster: forgotten, its nodes never removed', async () => {
    const t = await setUp('hand', true, 'Delete');
    assert.equal((await t.reconciler.reconcile('startup')).result, 'applied');
    t.ports.installer.next({ kind: 'fail', output: 'the nodes cannot be reached' });
    const installs = t.ports.installer.runs.length;
    await deleteCluster(t.ns, t.east, t.source);
    const failed = await t.reconciler.reconcile('kubernetes');
    assert.equal(failed.result, 'failed');
    assert.equal(failed.error?.code, 'APPLY_FAILED');
    const held = await get(t.ns, 'clusters', t.east);
    assert.deepEqual(held.body.metadata.finalizers, [CLUSTER_FINALIZER]);
    // Stalled, with the reason: the failed removal (kstatus: the object is Terminating).
    const conditions = (held.body as { status?: { conditions?: Array<Record<string, string>> } })
      .status?.conditions;
    const stalled = conditions?.find((c) => c['type'] === 'Stalled');
    assert.equal(stalled?.['status'], 'True', JSON.stringify(conditions));
    assert.equal(stalled?.['reason'], 'INSTALLER_FAILED');
    assert.match(
      stalled?.['message'] ?? '',
      /the deletion is held: remove-cluster failed \(INSTALLER_FAILED\): .*the nodes cannot be reached/,
    );
    assert.equal(conditions?.find((c) => c['type'] === 'Ready')?.['status'], 'False');
    // docs/gitops.md: the finalizer removed by hand.
    const p = `${API}/namespaces/${t.ns}/clusters/${t.east}`;
    await kube.env.admin('PUT', p, {
      ...(held.body as object),
      metadata: { ...held.body.metadata, finalizers: [] },
    });
    await waitFor('the Cluster gone from the watch', async () => {
      await t.source.sync();
      return t.source.siteObjects().some((o) => o.name === t.east) ? undefined : true;
    });
    const removals = t.ports.installer.runs.length;
    const after = await t.reconciler.reconcile('kubernetes');
    assert.notEqual(after.result, 'failed', JSON.stringify(after.error));
    assert.equal(t.ports.installer.runs.length, removals, 'no removal after the hand');
    assert.equal(removals - installs, 1, 'the one failed removal');
    assert.equal(await stateOf(t.stateDir, t.east), false);
    assert.equal(await stateOf(t.stateDir, t.west), true);
  });

  it('an object bpa cannot validate blocks only its own cluster: the others are planned and applied, it stays as it was', async () => {
    const t = await setUp('block', true);
    assert.equal((await t.reconciler.reconcile('startup')).result, 'applied');
    const installs = t.ports.installer.runs.length;
    // west's master claims east's master's MAC (host 0): west's object has the error.
    const westProv = `${API}/namespaces/${t.ns}/provisionings/${t.west}-provisioning`;
    const wp = (await kube.env.admin('GET', westProv)).body as Record<string, unknown>;
    const put = await kube.env.admin('PUT', westProv, {
      ...wp,
      spec: { masters: [{ 'master-1': { 'mac-address': hostMac(0) } }] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    // east changes at the same time: a worker package added.
    const eastSoft = `${API}/namespaces/${t.ns}/softwares/${t.east}-software`;
    const es = (await kube.env.admin('GET', eastSoft)).body as Record<string, unknown>;
    const eastPut = await kube.env.admin('PUT', eastSoft, {
      ...es,
      spec: { masterSoftware: [], workerSoftware: ['curl', 'jq'] },
    });
    const generation = (r: { body: unknown }): number | undefined =>
      (r.body as { metadata?: { generation?: number } }).metadata?.generation;
    await waitFor('the changes seen by the watch', async () => {
      await t.source.sync();
      const objs = t.source.siteObjects();
      const w = objs.find((o) => o.name === `${t.west}-provisioning`);
      const e = objs.find((o) => o.name === `${t.east}-software`);
      return w?.generation === generation(put) && e?.generation === generation(eastPut)
        ? true
        : undefined;
    });
    const r = await t.reconciler.reconcile('kubernetes');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    // east's change went on; nothing was done to west (not removed, though pruning is allowed).
    assert.ok(
      t.ports.packages.calls.some((c) => c.changes.some((p) => p.name === 'jq')),
      JSON.stringify(t.ports.packages.calls),
    );
    assert.equal(t.ports.installer.runs.slice(installs).length, 0);
    assert.equal(await stateOf(t.stateDir, t.west), true);
    const site = parse(
      await readFile(join(t.stateDir, 'kubernetes', 'site', 'status', 'site.yaml'), 'utf8'),
    ) as SiteStatusDoc;
    assert.deepEqual(
      site.status.clusters.find((c) => c.name === t.west),
      { name: t.west, phase: 'Rejected' },
    );
    assert.equal(site.status.errors?.[0]?.object, `Provisioning/${t.west}-provisioning`);
    assert.equal(site.status.errors?.[0]?.field, 'spec.masters[0].master-1.mac-address');
  });
});
