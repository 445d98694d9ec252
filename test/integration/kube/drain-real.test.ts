// Rolling node changes (cordon, drain, uncordon) against a real Kubernetes 1.20 API server,
// the oldest application-cluster version bpa supports: the Eviction API version bpa discovers
// (policy/v1beta1 only), PodDisruptionBudgets whose status kube-controller-manager's
// disruption controller computes, and evicted pods that stay Terminating until a kubelet
// confirms. There is no kubelet: the test plays its part, removing a Terminating pod (DELETE
// with grace 0) some time after the eviction, or never. The policy/v1 path (1.22 and newer)
// is tested on the fake (test/unit/apply/rollout-eviction.test.ts); a 1.20 server cannot
// show it, but its answer to a policy/v1 Eviction is compared with the fake's here.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { KubeNodeOps } from '../../../src/apply/rollout/kube-nodes.js';
import { BpaError } from '../../../src/util/errors.js';
import { createLogger } from '../../../src/util/log.js';
import type { RolloutSettings } from '../../../src/validate/model.js';
import { startFakeKube, type KubeObject } from '../../fakes/kube-api-server.js';
import { useRealKube, type KubeTestEnv } from '../../k8s/envtest.js';

interface Pod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
  };
  spec: { nodeName?: string };
  status?: Record<string, unknown>;
}

interface Pdb {
  metadata: { generation: number };
  status?: { observedGeneration?: number; disruptionsAllowed?: number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitUntil(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

async function must<T>(env: KubeTestEnv, method: string, p: string, body?: unknown): Promise<T> {
  const r = await env.admin<T>(method, p, body);
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * The kubelet's part for the given nodes: a pod that turns Terminating (evicted) is removed
 * `delayMs` later with grace 0, as a kubelet does once its containers stopped. Records when.
 */
class FakeKubelet {
  readonly removed: { pod: string; at: number; grace?: number }[] = [];
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly env: KubeTestEnv,
    private readonly nodes: Set<string>,
    private readonly delayMs: number,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const seen = new Map<string, number>();
    while (!this.stopped) {
      const list = await must<{ items: Pod[] }>(
        this.env,
        'GET',
        `/api/v1/namespaces/${this.env.namespace}/pods`,
      );
      for (const pod of list.items) {
        if (!pod.metadata.deletionTimestamp || !this.nodes.has(pod.spec.nodeName ?? '')) continue;
        const since = seen.get(pod.metadata.uid) ?? Date.now();
        seen.set(pod.metadata.uid, since);
        if (Date.now() - since < this.delayMs) continue;
        const r = await this.env.admin(
          'DELETE',
          `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
          { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 },
        );
        if (r.status === 200)
          this.removed.push({
            pod: pod.metadata.name,
            at: Date.now(),
            grace: pod.metadata.deletionGracePeriodSeconds,
          });
      }
      await sleep(100);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

describe('rolling node changes on a real Kubernetes 1.20 API server (cordon, drain, uncordon)', function () {
  this.timeout(120_000);
  // Before useRealKube's own `after` (hooks run in the order given), which removes the namespace.
  after(async () => {
    // The pods (bound to nodes no kubelet runs) go at once with grace 0, then their nodes.
    const ns = kube.env.namespace;
    const list = await kube.env.admin<{ items: Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`);
    for (const p of list.status === 200 ? list.body.items : [])
      await kube.env.admin('DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
      });
    for (const n of nodes.splice(0)) await kube.env.admin('DELETE', `/api/v1/nodes/${n}`);
  });
  const kube = useRealKube({ name: 'drain', controllerManager: true });
  const kubelets: FakeKubelet[] = [];
  const nodes: string[] = [];
  const logs: Record<string, unknown>[] = [];

  const drain = (timeoutMs: number): RolloutSettings['drain'] => ({
    enabled: true,
    timeoutMs,
    ignoreDaemonSets: true,
    deleteEmptyDirData: false,
  });

  /** KubeNodeOps as the rollout makes it, given the cluster admin's kubeconfig (admin.conf). */
  const ops = (): KubeNodeOps => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb): void {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    });
    return new KubeNodeOps({
      kubeconfig: () => readFile(kube.env.server.adminKubeconfigPath, 'utf8'),
      log: createLogger('debug', sink),
      pollMs: 100,
    });
  };

  /** A Node by the API, Ready as a kubelet would report it. Unique: Nodes are cluster-wide. */
  const node = async (name: string): Promise<string> => {
    const full = `${kube.env.namespace}-${name}`;
    await must(kube.env, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: full },
    });
    nodes.push(full);
    // Read, set, write; again on a conflict (kube-controller-manager's ttl controller
    // annotates a new Node meanwhile).
    for (;;) {
      const n = await must<KubeObject>(kube.env, 'GET', `/api/v1/nodes/${full}`);
      const now = new Date().toISOString();
      n.status = {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      };
      const r = await kube.env.admin('PUT', `/api/v1/nodes/${full}/status`, n);
      if (r.status === 200) break;
      if (r.status !== 409)
        throw new Error(`PUT node status: ${r.status} ${JSON.stringify(r.body)}`);
    }
    return full;
  };

  /** A pod bound to `nodeName`, Running and Ready (the status a kubelet would write). */
  const pod = async (name: string, nodeName: string, app: string): Promise<void> => {
    const ns = kube.env.namespace;
    await must(kube.env, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app } },
      spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
    });
    const p = await must<Pod>(kube.env, 'GET', `/api/v1/namespaces/${ns}/pods/${name}`);
    const now = new Date().toISOString();
    p.status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
      startTime: now,
    };
    await must(kube.env, 'PUT', `/api/v1/namespaces/${ns}/pods/${name}/status`, p);
  };

  /** A policy/v1beta1 PodDisruptionBudget; resolves once the disruption controller computed it. */
  const pdb = async (app: string, minAvailable: number, allowed: number): Promise<void> => {
    const ns = kube.env.namespace;
    await must(kube.env, 'POST', `/apis/policy/v1beta1/namespaces/${ns}/poddisruptionbudgets`, {
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      metadata: { name: app },
      spec: { minAvailable, selector: { matchLabels: { app } } },
    });
    await pdbAllows(app, allowed);
  };

  const pdbAllows = (app: string, allowed: number): Promise<void> =>
    waitUntil(`PodDisruptionBudget ${app} allows ${allowed} disruption(s)`, async () => {
      const p = await must<Pdb>(
        kube.env,
        'GET',
        `/apis/policy/v1beta1/namespaces/${kube.env.namespace}/poddisruptionbudgets/${app}`,
      );
      return (
        p.status?.observedGeneration === p.metadata.generation &&
        p.status.disruptionsAllowed === allowed
      );
    });

  const readPod = async (name: string): Promise<Pod | undefined> => {
    const r = await kube.env.admin<Pod>(
      'GET',
      `/api/v1/namespaces/${kube.env.namespace}/pods/${name}`,
    );
    return r.status === 200 ? r.body : undefined;
  };

  const unschedulable = async (name: string): Promise<unknown> =>
    (await must<{ spec: { unschedulable?: boolean } }>(kube.env, 'GET', `/api/v1/nodes/${name}`))
      .spec.unschedulable;

  const kubelet = (delayMs: number, ...on: string[]): FakeKubelet => {
    const k = new FakeKubelet(kube.env, new Set(on), delayMs);
    kubelets.push(k);
    return k;
  };

  afterEach(async () => {
    await Promise.all(kubelets.splice(0).map((k) => k.stop()));
    logs.length = 0;
  });

  it('cordons, drains with the policy/v1beta1 Eviction it discovers, waits until the evicted pod is gone, uncordons', async () => {
    const a = await node('a');
    const b = await node('b');
    await pod('web-a', a, 'web');
    await pod('web-b', b, 'web');
    await pdb('web', 1, 1);
    const nodeOps = ops();

    await nodeOps.cordon('east', a);
    assert.equal(await unschedulable(a), true, 'cordoned: spec.unschedulable');

    const k = kubelet(1500, a);
    await nodeOps.drain('east', a, drain(30_000));
    const drained = Date.now();
    assert.deepEqual(
      logs.filter((l) => l['msg'] === 'eviction API discovered').map((l) => l['apiVersion']),
      ['policy/v1beta1'],
    );
    // The eviction was graceful (the pod's 30 s default), so the pod stayed Terminating until
    // the kubelet's part removed it: bpa waited for that, not for the eviction's answer.
    const [removed] = k.removed;
    assert.equal(removed?.pod, 'web-a');
    assert.equal(removed.grace, 30);
    assert.ok(removed.at <= drained, 'the drain ended after the pod was gone');
    assert.equal(await readPod('web-a'), undefined);
    assert.ok((await readPod('web-b'))?.metadata.deletionTimestamp === undefined, 'other node');

    await nodeOps.uncordon('east', a);
    // The server leaves out a false spec.unschedulable.
    assert.equal(await unschedulable(a), undefined, 'uncordoned');
    await nodeOps.waitReady('east', a, 5_000);
  });

  it('an eviction the PodDisruptionBudget refuses (429): retried until the timeout, then DRAIN_FAILED; evicted once a replacement makes room', async () => {
    const a = await node('c');
    const b = await node('d');
    await pod('db-a', a, 'db');
    await pod('db-b', b, 'db');
    await pdb('db', 2, 0);
    const nodeOps = ops();
    kubelet(300, a);

    await assert.rejects(nodeOps.drain('east', a, drain(2_000)), (err: unknown) => {
      assert.ok(err instanceof BpaError, String(err));
      assert.equal(err.code, 'DRAIN_FAILED');
      assert.match(
        err.message,
        new RegExp(
          `^node ${a}: drain timed out after 2s; 1 pod\\(s\\) not evicted, last refusal: ${kube.env.namespace}/db-a: Cannot evict pod as it would violate the pod's disruption budget\\.`,
        ),
      );
      return true;
    });
    assert.equal((await readPod('db-a'))?.metadata.deletionTimestamp, undefined, 'not evicted');
    const refused = await kube.env.admin(
      'POST',
      `/api/v1/namespaces/${kube.env.namespace}/pods/db-a/eviction`,
      {
        apiVersion: 'policy/v1beta1',
        kind: 'Eviction',
        metadata: { name: 'db-a', namespace: kube.env.namespace },
      },
    );
    // What bpa's retry reads: 429 TooManyRequests, the budget's numbers in its cause.
    assert.deepEqual(refused, {
      status: 429,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: "Cannot evict pod as it would violate the pod's disruption budget.",
        reason: 'TooManyRequests',
        details: {
          causes: [
            {
              reason: 'DisruptionBudget',
              message: 'The disruption budget db needs 2 healthy pods and has 2 currently',
            },
          ],
        },
        code: 429,
      },
    });

    // A replacement (as its ReplicaSet would start one) on the other node: the disruption
    // controller allows one disruption, and the drain, still retrying, evicts.
    const draining = nodeOps.drain('east', a, drain(30_000));
    await sleep(500);
    assert.equal((await readPod('db-a'))?.metadata.deletionTimestamp, undefined, 'still refused');
    await pod('db-b2', b, 'db');
    await draining;
    assert.equal(await readPod('db-a'), undefined);
    assert.ok(await readPod('db-b2'));
  });

  it('evicted pods that never go (no kubelet confirms): DRAIN_FAILED after the timeout naming them, the pods left Terminating', async () => {
    const a = await node('e');
    await pod('stuck-1', a, 'stuck');
    await pod('stuck-2', a, 'stuck');
    const nodeOps = ops();
    const ns = kube.env.namespace;
    const started = Date.now();
    await assert.rejects(nodeOps.drain('east', a, drain(2_000)), (err: unknown) => {
      assert.ok(err instanceof BpaError, String(err));
      assert.equal(err.code, 'DRAIN_FAILED');
      assert.equal(
        err.message,
        `node ${a}: drain timed out after 2s waiting for ${ns}/stuck-1, ${ns}/stuck-2 to terminate`,
      );
      return true;
    });
    assert.ok(Date.now() - started >= 2_000, 'waited the whole timeout');
    for (const name of ['stuck-1', 'stuck-2']) {
      const p = await readPod(name);
      assert.ok(p?.metadata.deletionTimestamp, `${name} evicted, still Terminating`);
      assert.equal(p.metadata.deletionGracePeriodSeconds, 30, 'bpa did not force it');
    }
    // Once the kubelet's part is done, the next drain finds the node empty.
    kubelet(0, a);
    await waitUntil('the pods are gone', async () => !(await readPod('stuck-2')));
    await nodeOps.drain('east', a, drain(5_000));
  });

  it('a drain again while a pod it evicted is still Terminating and its PodDisruptionBudget allows no more: waits for it, evicts nothing again', async () => {
    const a = await node('g');
    const b = await node('h');
    await pod('again-a', a, 'again');
    await pod('again-b', b, 'again');
    await pdb('again', 1, 1);
    const nodeOps = ops();
    await assert.rejects(nodeOps.drain('east', a, drain(1_000)), /to terminate$/);
    // again-a counts no more as healthy: the budget allows nothing until it is replaced.
    await pdbAllows('again', 0);
    // Still Terminating through the next drain: it times out waiting for the pod, not refused.
    await assert.rejects(nodeOps.drain('east', a, drain(1_500)), (err: unknown) => {
      assert.ok(err instanceof BpaError, String(err));
      assert.equal(
        err.message,
        `node ${a}: drain timed out after 2s waiting for ${kube.env.namespace}/again-a to terminate`,
      );
      return true;
    });
    const k = kubelet(2_500, a);
    await nodeOps.drain('east', a, drain(30_000));
    assert.deepEqual(
      k.removed.map((r) => r.pod),
      ['again-a'],
    );
    assert.equal(await readPod('again-a'), undefined);
  });

  it("answers a policy/v1 Eviction with 400 BadRequest, and the fake's policyVersion 'v1beta1' answers exactly the same", async () => {
    const a = await node('f');
    await pod('v1-probe', a, 'probe');
    const ns = kube.env.namespace;
    const eviction = {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'v1-probe', namespace: ns },
    };
    const real = await kube.env.admin(
      'POST',
      `/api/v1/namespaces/${ns}/pods/v1-probe/eviction`,
      eviction,
    );
    assert.equal(real.status, 400);
    assert.deepEqual(real.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Eviction in version "v1" cannot be handled as a Eviction: no kind "Eviction" is registered for version "policy/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
      reason: 'BadRequest',
      code: 400,
    });
    assert.equal((await readPod('v1-probe'))?.metadata.deletionTimestamp, undefined);

    const fake = await startFakeKube({ policyVersion: 'v1beta1' });
    try {
      fake.put({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'v1-probe', namespace: ns },
        spec: { nodeName: a, containers: [{ name: 'c', image: 'busybox' }] },
        status: { phase: 'Running' },
      });
      const res = await fetch(`${fake.url}/api/v1/namespaces/${ns}/pods/v1-probe/eviction`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(eviction),
      });
      assert.equal(res.status, real.status);
      assert.deepEqual(await res.json(), real.body);
    } finally {
      await fake.stop();
    }
  });
});
