// Operator mode's safety on a real kube-apiserver: two bpa instances in two namespaces of one
// cluster do not touch each other's objects, and leader election works in this mode too.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_FINALIZER } from '../../../src/reconcile/deletion.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { KubernetesSource } from '../../../src/source/kubernetes-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { configWith, writeSite } from '../../fakes/site.js';
import { kill, spawnBpa, waitFor } from '../apply/harness.js';
import { useRealKube, type KubeTestEnv } from '../../k8s/envtest.js';
import { createObjectsOf } from '../../k8s/kube-objects.js';

const API = '/apis/bpa.akraino.org/v1alpha1';

describe('operator mode: instances and replicas (real kube-apiserver)', function () {
  this.timeout(120_000);
  const a = useRealKube({ name: 'opsafe-a' });
  const b = useRealKube({ name: 'opsafe-b' });
  // The replicas' site: a Site and no cluster, so that a reconcile has nothing to apply.
  const c = useRealKube({ name: 'opsafe-c' });
  let tmp = '';
  const sources: KubernetesSource[] = [];
  const children: ChildProcess[] = [];
  after(async () => {
    for (const s of sources) await s.stop();
    for (const c of children) await kill(c);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** One bpa of a namespace: a cluster `<name>` there, reconciled over in-memory nodes. */
  async function instance(env: KubeTestEnv, name: string) {
    tmp ||= await mkdtemp(join(tmpdir(), 'bpa-opsafe-'));
    const dir = join(tmp, env.namespace);
    await writeSite(dir, {
      cluster: name,
      nodes: [{ name: 'master-1', roles: ['master'], host: 0 }],
    });
    await createObjectsOf(env, join(dir, 'cluster.yaml'));
    const stateDir = join(dir, 'state');
    const source = new KubernetesSource({
      kubeConfig: env.bpaKubeConfig(),
      namespaces: [env.namespace],
      stateDir,
      log: silentLogger(),
    });
    sources.push(source);
    await source.start();
    const reconciler = new Reconciler({
      source,
      configFor: configWith({
        stateDir,
        inventoryDir: join(dir, 'inventory'),
        bootstrapKubeconfig: env.bpaKubeconfigPath,
        namespace: env.namespace,
      }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports: fakePorts(new FakeNodes({})),
    });
    return { source, reconciler };
  }

  it("two instances in two namespaces: each plans and finalizes only its own namespace's objects, with the same cluster name", async () => {
    // The same cluster name in both: one site each, no clash.
    const one = await instance(a.env, 'edge');
    const two = await instance(b.env, 'edge');
    assert.equal((await one.reconciler.reconcile('startup')).result, 'applied');
    await one.source.sync();
    assert.ok(one.source.siteObjects().every((o) => o.namespace === a.env.namespace));
    assert.equal(one.source.siteObjects().length, 3);
    // bpa of namespace a put its finalizer on its own Cluster only.
    const other = await b.env.admin<{ metadata: { finalizers?: string[] } }>(
      'GET',
      `${API}/namespaces/${b.env.namespace}/clusters/edge`,
    );
    assert.equal(other.body.metadata.finalizers, undefined);
    const own = await a.env.admin<{ metadata: { finalizers?: string[] } }>(
      'GET',
      `${API}/namespaces/${a.env.namespace}/clusters/edge`,
    );
    assert.deepEqual(own.body.metadata.finalizers, [CLUSTER_FINALIZER]);
    // And b's bpa, cannot even read a's namespace (its Role is in its own).
    assert.equal((await two.reconciler.reconcile('startup')).result, 'applied');
    await two.source.sync();
    assert.ok(two.source.siteObjects().every((o) => o.namespace === b.env.namespace));
  });

  it('leader election: of two replicas in operator mode only the leader reconciles; the other stands by', async () => {
    tmp ||= await mkdtemp(join(tmpdir(), 'bpa-opsafe-'));
    await c.env.admin('POST', `${API}/namespaces/${c.env.namespace}/sites`, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Site',
      metadata: { name: 'replicas' },
      spec: {},
    });
    const urls: string[] = [];
    for (const i of [0, 1]) {
      const child = spawnBpa([
        'serve',
        '--source',
        'kubernetes',
        '--leader-elect',
        '--bootstrap-kubeconfig',
        c.env.bpaKubeconfigPath,
        '--bootstrap-namespace',
        c.env.namespace,
        '--state',
        join(tmp, `replica-${i}`),
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1h',
      ]);
      children.push(child);
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      urls.push(
        await waitFor(
          'the server URL',
          async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
          30_000,
        ),
      );
    }
    const states = await waitFor(
      'a leader and a standby',
      async () => {
        const s = await Promise.all(
          urls.map(
            async (u) => ((await (await fetch(`${u}/readyz`)).json()) as { status: string }).status,
          ),
        );
        return s.includes('ready') && s.includes('standby') ? s : undefined;
      },
      60_000,
      200,
    );
    const runs = async (u: string): Promise<number> => {
      const text = await (await fetch(`${u}/metrics`)).text();
      let n = 0;
      for (const m of text.matchAll(/^bpa_reconcile_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
      return n;
    };
    const standby = urls[states.indexOf('standby')] as string;
    const leader = urls[states.indexOf('ready')] as string;
    assert.ok((await runs(leader)) >= 1);
    // A change of an object reaches both; only the leader reconciles.
    const before = await runs(leader);
    await c.env.admin('POST', `${API}/namespaces/${c.env.namespace}/softwares`, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Software',
      metadata: { name: 'extra' },
      spec: { masterSoftware: ['curl'] },
    });
    await waitFor('the leader reconciling the change', async () =>
      (await runs(leader)) > before ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(await runs(standby), 0);
  });
});
