import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import {
  ApiException,
  ApiextensionsV1Api,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  Watch,
  loadYaml,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { startFakeKube, type FakeKube, type KubeObject } from '../../fakes/kube-api-server.js';
import { kubeConfigFor } from '../../fakes/kubeconfig.js';

const NS = 'bpa-test';

/** Awaits a rejected client call and checks the HTTP code and the Status reason it carried. */
async function expectApiError(call: Promise<unknown>, code: number, reason: string): Promise<void> {
  try {
    await call;
  } catch (err: unknown) {
    assert.ok(err instanceof ApiException, `expected ApiException, got ${String(err)}`);
    assert.equal(err.code, code);
    // The generated client drops the body of a 401 before it reaches the exception.
    if (code === 401) return;
    const status = JSON.parse(String(err.body)) as Record<string, unknown>;
    assert.equal(status.kind, 'Status');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, reason);
    assert.equal(status.code, code);
    return;
  }
  assert.fail(`expected HTTP ${code} ${reason}`);
}

interface SeenEvent {
  type: string;
  object: KubeObject;
}

/** Collects watch events and lets a test wait (bounded) for one that satisfies a predicate. */
class EventLog {
  readonly events: SeenEvent[] = [];
  private waiters: Array<() => void> = [];

  push = (type: string, object: unknown): void => {
    this.events.push({ type, object: object as KubeObject });
    for (const w of this.waiters) w();
  };

  async waitFor(pred: (e: SeenEvent) => boolean, ms = 5000): Promise<SeenEvent> {
    const found = (): SeenEvent | undefined => this.events.find(pred);
    const hit = found();
    if (hit) return hit;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`no matching watch event in ${ms} ms: ${JSON.stringify(this.events)}`));
      }, ms);
      const check = (): void => {
        const e = found();
        if (!e) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve(e);
      };
      this.waiters.push(check);
    });
  }
}

function bmh(name: string, namespace: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name, namespace, labels },
    spec: { online: true, bootMACAddress: '52:54:00:00:00:01' },
  };
}

describe('fake Kubernetes API server (through @kubernetes/client-node)', () => {
  let fake: FakeKube;
  let kc: KubeConfig;

  beforeEach(async () => {
    fake = await startFakeKube();
    kc = new KubeConfig();
    kc.loadFromFile(fake.kubeconfigPath);
  });

  afterEach(async () => {
    await fake.stop();
  });

  it('creates, reads, replaces, rejects a stale replace and deletes a Secret', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'bmc' }, stringData: { password: 'hunter2' } },
    });
    assert.equal(created.metadata?.namespace, NS);
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    assert.ok(created.metadata?.creationTimestamp instanceof Date);
    // stringData is folded into base64 data, as the real server does.
    assert.deepEqual(created.data, { password: Buffer.from('hunter2').toString('base64') });
    assert.equal(created.type, 'Opaque');

    const read = await core.readNamespacedSecret({ name: 'bmc', namespace: NS });
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

    const replaced = await core.replaceNamespacedSecret({
      name: 'bmc',
      namespace: NS,
      body: { ...read, data: { password: Buffer.from('new').toString('base64') } },
    });
    assert.ok(Number(replaced.metadata?.resourceVersion) > Number(read.metadata?.resourceVersion));
    assert.equal(replaced.metadata?.uid, created.metadata?.uid);

    // `read` still carries the old resourceVersion.
    await expectApiError(
      core.replaceNamespacedSecret({ name: 'bmc', namespace: NS, body: read }),
      409,
      'Conflict',
    );
    await expectApiError(
      core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'bmc' } } }),
      409,
      'AlreadyExists',
    );

    const status = await core.deleteNamespacedSecret({ name: 'bmc', namespace: NS });
    assert.equal(status.status, 'Success');
    assert.equal(fake.get('v1', 'Secret', NS, 'bmc'), undefined);
    await expectApiError(
      core.readNamespacedSecret({ name: 'bmc', namespace: NS }),
      404,
      'NotFound',
    );
    await expectApiError(
      core.deleteNamespacedSecret({ name: 'bmc', namespace: NS }),
      404,
      'NotFound',
    );
    await expectApiError(
      core.replaceNamespacedSecret({
        name: 'bmc',
        namespace: NS,
        body: { metadata: { name: 'bmc' } },
      }),
      404,
      'NotFound',
    );
  });

  it('rejects Secret data that is not base64', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await expectApiError(
      core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name: 'raw' }, data: { password: 'not base64!' } },
      }),
      400,
      'BadRequest',
    );
  });

  it('stores ConfigMaps and supports merge patch, JSON patch and label selectors', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: {
        metadata: { name: 'edge-configmap', labels: { cluster: 'edge' } },
        data: { MASTER_n1: '10.0.0.1' },
      },
    });
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'other', labels: { cluster: 'core' } }, data: {} },
    });

    const merged = await core.patchNamespacedConfigMap(
      { name: 'edge-configmap', namespace: NS, body: { data: { WORKER_n2: '10.0.0.2' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.data, { MASTER_n1: '10.0.0.1', WORKER_n2: '10.0.0.2' });

    // JSON patch is the client's default patch content type.
    const jsonPatched = await core.patchNamespacedConfigMap({
      name: 'edge-configmap',
      namespace: NS,
      body: [
        { op: 'replace', path: '/data/MASTER_n1', value: '10.0.0.9' },
        { op: 'add', path: '/metadata/labels/site', value: 'lab' },
      ],
    });
    assert.equal(jsonPatched.data?.MASTER_n1, '10.0.0.9');
    assert.equal(jsonPatched.metadata?.labels?.site, 'lab');

    const edge = await core.listNamespacedConfigMap({
      namespace: NS,
      labelSelector: 'cluster=edge',
    });
    assert.deepEqual(
      edge.items.map((c) => c.metadata?.name),
      ['edge-configmap'],
    );
    const notEdge = await core.listNamespacedConfigMap({
      namespace: NS,
      labelSelector: 'cluster!=edge',
    });
    assert.deepEqual(
      notEdge.items.map((c) => c.metadata?.name),
      ['other'],
    );
    const withSite = await core.listNamespacedConfigMap({
      namespace: NS,
      labelSelector: 'site,cluster',
    });
    assert.deepEqual(
      withSite.items.map((c) => c.metadata?.name),
      ['edge-configmap'],
    );
    const byName = await core.listConfigMapForAllNamespaces({
      fieldSelector: 'metadata.name=other',
    });
    assert.deepEqual(
      byName.items.map((c) => c.metadata?.name),
      ['other'],
    );

    const stored = fake.get('v1', 'ConfigMap', NS, 'edge-configmap');
    assert.equal(stored?.metadata.resourceVersion, jsonPatched.metadata?.resourceVersion);
  });

  it('refuses to page a list (paging is tested on the real kube-apiserver)', async () => {
    for (const name of ['host-b', 'host-a', 'host-c']) fake.put(bmh(name, 'metal3'));
    const custom = kc.makeApiClient(CustomObjectsApi);
    const list = (q: { limit?: number; _continue?: string }): Promise<unknown> =>
      custom.listNamespacedCustomObject({
        group: 'metal3.io',
        version: 'v1alpha1',
        namespace: 'metal3',
        plural: 'baremetalhosts',
        ...q,
      });
    const whole = (await list({ limit: 500 })) as { items: KubeObject[]; metadata: object };
    assert.deepEqual(
      whole.items.map((h) => h.metadata.name),
      ['host-a', 'host-b', 'host-c'],
    );
    assert.equal('continue' in whole.metadata, false);
    await assert.rejects(list({ limit: 2 }), /501|does not page/);
    await assert.rejects(list({ _continue: 'x' }), /501|does not page/);
  });

  it('serves HardwareData by name and reports unknown names as NotFound', async () => {
    fake.put({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HardwareData',
      metadata: { name: 'host-a', namespace: 'metal3' },
      spec: { hardware: { cpu: { count: 16 }, ramMebibytes: 65536 } },
    });
    const custom = kc.makeApiClient(CustomObjectsApi);
    const hw = (await custom.getNamespacedCustomObject({
      group: 'metal3.io',
      version: 'v1alpha1',
      namespace: 'metal3',
      plural: 'hardwaredata',
      name: 'host-a',
    })) as KubeObject & { spec: { hardware: { cpu: { count: number } } } };
    assert.equal(hw.spec.hardware.cpu.count, 16);
    await expectApiError(
      custom.getNamespacedCustomObject({
        group: 'metal3.io',
        version: 'v1alpha1',
        namespace: 'metal3',
        plural: 'hardwaredata',
        name: 'missing',
      }),
      404,
      'NotFound',
    );
  });

  it('surfaces injected 403 and 500 faults as ApiException with the right code', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    fake.fail(
      { method: 'GET', pathPrefix: `/api/v1/namespaces/${NS}/secrets`, times: 1 },
      { code: 403, message: 'secrets is forbidden: test says no' },
    );
    fake.fail(
      { pathPrefix: '/apis/metal3.io/', times: 2 },
      { code: 500, message: 'etcdserver: request timed out' },
    );

    await expectApiError(core.listNamespacedSecret({ namespace: NS }), 403, 'Forbidden');
    // times: 1 — the next identical call goes through.
    const ok = await core.listNamespacedSecret({ namespace: NS });
    assert.deepEqual(ok.items, []);

    const listBmh = (): Promise<unknown> =>
      custom.listNamespacedCustomObject({
        group: 'metal3.io',
        version: 'v1alpha1',
        namespace: 'metal3',
        plural: 'baremetalhosts',
      });
    await expectApiError(listBmh(), 500, 'InternalError');
    await expectApiError(listBmh(), 500, 'InternalError');
    await listBmh();
  });

  it('delivers a Job status change to a watcher as MODIFIED', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    const job = await batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: { name: 'install-edge', labels: { 'bpa/cluster': 'edge' } },
        spec: {
          template: {
            spec: { restartPolicy: 'Never', containers: [{ name: 'kud', image: 'kud:1' }] },
          },
        },
        status: { succeeded: 5 },
      },
    });
    // Status is owned by the status subresource: a create cannot set it.
    assert.equal(job.status?.succeeded, undefined);

    const log = new EventLog();
    let doneErr: unknown = 'not called';
    const watch = new Watch(kc);
    const controller = await watch.watch(
      `/apis/batch/v1/namespaces/${NS}/jobs`,
      {
        resourceVersion: job.metadata?.resourceVersion,
        fieldSelector: 'metadata.name=install-edge',
      },
      log.push,
      (err: unknown) => {
        doneErr = err;
      },
    );
    assert.equal(fake.openWatches(), 1);

    fake.updateStatus('batch/v1', 'Job', NS, 'install-edge', { active: 1 });
    fake.updateStatus('batch/v1', 'Job', NS, 'install-edge', {
      succeeded: 1,
      conditions: [{ type: 'Complete', status: 'True' }],
    });
    const done = await log.waitFor(
      (e) =>
        e.type === 'MODIFIED' &&
        (e.object.status as { succeeded?: number } | undefined)?.succeeded === 1,
    );
    assert.equal(done.object.metadata.name, 'install-edge');
    assert.deepEqual(
      log.events.map((e) => e.type),
      ['MODIFIED', 'MODIFIED'],
    );

    // A replace of the main resource keeps the status the controller wrote.
    const current = await batch.readNamespacedJob({ name: 'install-edge', namespace: NS });
    const replaced = await batch.replaceNamespacedJob({
      name: 'install-edge',
      namespace: NS,
      body: { ...current, status: {} },
    });
    assert.equal(replaced.status?.succeeded, 1);

    controller.abort();
    await waitUntil(() => fake.openWatches() === 0);
    assert.notEqual(doneErr, 'not called');
  });

  it('replays history from a resourceVersion and answers a too-old one with an ERROR 410', async () => {
    await fake.stop();
    fake = await startFakeKube({ historyLimit: 3 });
    kc = fake.kubeConfig(NS);
    const core = kc.makeApiClient(CoreV1Api);
    const first = await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'c0' } },
    });
    for (let i = 1; i <= 4; i++) {
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: `c${i}` } },
      });
    }

    const fresh = new EventLog();
    const watch = new Watch(kc);
    const c1 = await watch.watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: String(Number(fake.resourceVersion()) - 2) },
      fresh.push,
      () => undefined,
    );
    await fresh.waitFor((e) => e.object.metadata.name === 'c4');
    assert.deepEqual(
      fresh.events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED c3', 'ADDED c4'],
    );
    c1.abort();

    const stale = new EventLog();
    let closed = false;
    await watch.watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      { resourceVersion: first.metadata?.resourceVersion },
      stale.push,
      () => {
        closed = true;
      },
    );
    const err = await stale.waitFor((e) => e.type === 'ERROR');
    assert.equal((err.object as unknown as { code: number }).code, 410);
    await waitUntil(() => closed);
  });

  it('feeds a client informer: list, then watch from the list resourceVersion', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    const informer = makeInformer(kc, `/apis/batch/v1/namespaces/${NS}/jobs`, () =>
      batch.listNamespacedJob({ namespace: NS }),
    );
    const seen: string[] = [];
    informer.on('add', (j) => seen.push(`add ${j.metadata?.name}`));
    informer.on('update', (j) => seen.push(`update ${j.metadata?.name} ${j.status?.failed}`));
    informer.on('delete', (j) => seen.push(`delete ${j.metadata?.name}`));
    await informer.start();
    try {
      await batch.createNamespacedJob({
        namespace: NS,
        body: { metadata: { name: 'j1' }, spec: { template: {} } },
      });
      fake.updateStatus('batch/v1', 'Job', NS, 'j1', { failed: 2 });
      await batch.deleteNamespacedJob({ name: 'j1', namespace: NS });
      await waitUntil(() => seen.includes('delete j1'));
      // A Job deleted without a policy is orphaned (batch/v1's default): the `orphan`
      // finalizer is an update, then the garbage collector lifts it and the Job goes.
      assert.deepEqual(seen, ['add j1', 'update j1 2', 'update j1 2', 'delete j1']);
      const watchReq = fake.requests.find((r) => r.query.watch === 'true');
      assert.ok(watchReq?.query.resourceVersion, 'the informer watches from a resourceVersion');
    } finally {
      await informer.stop();
    }
  });

  it('closes open watches on stop() so nothing hangs', async () => {
    const log = new EventLog();
    let doneCalled = false;
    await new Watch(kc).watch(`/apis/batch/v1/namespaces/${NS}/jobs`, {}, log.push, () => {
      doneCalled = true;
    });
    assert.equal(fake.openWatches(), 1);
    await fake.stop();
    await waitUntil(() => doneCalled);
  });

  it('refuses a Lease replace with a stale resourceVersion (leader election)', async () => {
    const coord = kc.makeApiClient(CoordinationV1Api);
    const lease = await coord.createNamespacedLease({
      namespace: NS,
      body: {
        metadata: { name: 'bpa-leader' },
        spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 },
      },
    });
    const renewed = await coord.replaceNamespacedLease({
      name: 'bpa-leader',
      namespace: NS,
      body: { ...lease, spec: { ...lease.spec, renewTime: new Date('2024-01-01T00:00:10Z') } },
    });
    assert.notEqual(renewed.metadata?.resourceVersion, lease.metadata?.resourceVersion);

    // A second candidate that read the lease before the renewal loses the race.
    await expectApiError(
      coord.replaceNamespacedLease({
        name: 'bpa-leader',
        namespace: NS,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: 'pod-b' } },
      }),
      409,
      'Conflict',
    );
    assert.equal(
      (
        fake.get('coordination.k8s.io/v1', 'Lease', NS, 'bpa-leader')?.spec as {
          holderIdentity: string;
        }
      ).holderIdentity,
      'pod-a',
    );
  });

  it('returns pod log text set by the test', async () => {
    fake.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'install-edge-x7k2p',
        namespace: NS,
        labels: { 'job-name': 'install-edge' },
      },
      spec: { nodeName: 'node-1', containers: [{ name: 'kud', image: 'kud:1' }] },
    });
    fake.setPodLog(NS, 'install-edge-x7k2p', 'TASK [kubespray]\nok: [n1]\nPLAY RECAP\n');
    const core = kc.makeApiClient(CoreV1Api);
    const text = await core.readNamespacedPodLog({ name: 'install-edge-x7k2p', namespace: NS });
    assert.equal(text, 'TASK [kubespray]\nok: [n1]\nPLAY RECAP\n');
    const tail = await core.readNamespacedPodLog({
      name: 'install-edge-x7k2p',
      namespace: NS,
      tailLines: 1,
    });
    assert.equal(tail, 'PLAY RECAP\n');
    await expectApiError(
      core.readNamespacedPodLog({ name: 'gone', namespace: NS }),
      404,
      'NotFound',
    );
  });

  it('requires the bearer token from its kubeconfig', async () => {
    const wrong = kubeConfigFor({ server: fake.url, token: 'wrong' }).makeApiClient(CoreV1Api);
    await expectApiError(wrong.listNamespacedSecret({ namespace: NS }), 401, 'Unauthorized');
    const right = fake.kubeConfig().makeApiClient(CoreV1Api);
    assert.deepEqual((await right.listNamespacedSecret({ namespace: NS })).items, []);
  });

  it('serves cluster-scoped namespaces and discovery documents', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await core.createNamespace({ body: { metadata: { name: 'site-a' } } });
    assert.equal(ns.metadata?.namespace, undefined);
    assert.equal(ns.status?.phase, 'Active');
    const names = (await core.listNamespace()).items.map((n) => n.metadata?.name);
    assert.deepEqual(names, ['site-a']);
    const resources = await core.getAPIResources();
    assert.ok(resources.resources.some((r) => r.name === 'secrets' && r.namespaced));
  });

  it('delays responses by latencyMs and removes its kubeconfig on stop', async () => {
    fake.setLatency(150);
    const core = kc.makeApiClient(CoreV1Api);
    const started = Date.now();
    await core.listNamespacedSecret({ namespace: NS });
    assert.ok(Date.now() - started >= 140);
    const file = fake.kubeconfigPath;
    assert.ok(existsSync(file));
    await fake.stop();
    assert.ok(!existsSync(file));
  });
});

async function waitUntil(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('fake Kubernetes API server: behaviour of a real kube-apiserver', () => {
  let fake: FakeKube;
  let kc: KubeConfig;

  beforeEach(async () => {
    // A garbage collector that takes a moment, so the state between DELETE and its
    // consequences can be seen.
    fake = await startFakeKube({ gcDelayMs: 100 });
    kc = fake.kubeConfig(NS);
  });

  afterEach(async () => {
    await fake.stop();
  });

  /** A Job with one pod of its own, as the Job controller leaves them. */
  async function jobWithPod(): Promise<{ uid: string; pod: string }> {
    const batch = kc.makeApiClient(BatchV1Api);
    const job = await batch.createNamespacedJob({
      namespace: NS,
      body: { metadata: { name: 'j1' }, spec: { template: {} } },
    });
    const uid = job.metadata?.uid ?? '';
    fake.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'j1-abcde',
        namespace: NS,
        labels: { 'job-name': 'j1' },
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'Job', name: 'j1', uid, controller: true },
        ],
      },
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] },
    });
    return { uid, pod: 'j1-abcde' };
  }

  const pod = (name: string): KubeObject | undefined => fake.get('v1', 'Pod', NS, name);
  const job = (): KubeObject | undefined => fake.get('batch/v1', 'Job', NS, 'j1');

  it('orphans the pods of a Job deleted without a policy (batch/v1 default)', async () => {
    const { pod: podName } = await jobWithPod();
    const batch = kc.makeApiClient(BatchV1Api);
    await batch.deleteNamespacedJob({ name: 'j1', namespace: NS });
    const marked = job();
    assert.deepEqual(marked?.metadata.finalizers, ['orphan'], 'the Job waits for the collector');
    assert.ok(marked?.metadata.deletionTimestamp);
    await waitUntil(() => job() === undefined);
    const left = pod(podName);
    assert.ok(left, 'the pod survives its Job');
    assert.equal(left.metadata.ownerReferences, undefined, 'and no longer names it as owner');
  });

  it('reads DeleteOptions from the body and ignores query parameters when there is one', async () => {
    const { uid, pod: podName } = await jobWithPod();
    const batch = kc.makeApiClient(BatchV1Api);
    // The client sends propagationPolicy as a query parameter and the body as the body.
    await batch.deleteNamespacedJob({
      name: 'j1',
      namespace: NS,
      propagationPolicy: 'Background',
      body: { preconditions: { uid } },
    });
    const sent = fake.requests.find((r) => r.method === 'DELETE');
    assert.equal(sent?.query.propagationPolicy, 'Background');
    await waitUntil(() => job() === undefined);
    assert.ok(pod(podName), 'the query parameter was ignored: the pod was orphaned');
  });

  it('cascades in the background when the body asks for it, and without a body from the query', async () => {
    const first = await jobWithPod();
    const batch = kc.makeApiClient(BatchV1Api);
    await batch.deleteNamespacedJob({
      name: 'j1',
      namespace: NS,
      body: { propagationPolicy: 'Background', preconditions: { uid: first.uid } },
    });
    assert.equal(job(), undefined, 'the Job goes at once');
    await waitUntil(() => pod(first.pod) === undefined);

    const second = await jobWithPod();
    await batch.deleteNamespacedJob({ name: 'j1', namespace: NS, propagationPolicy: 'Background' });
    assert.equal(job(), undefined);
    await waitUntil(() => pod(second.pod) === undefined);
  });

  it('keeps a Foreground-deleted Job until its pods are gone', async () => {
    const { pod: podName } = await jobWithPod();
    const batch = kc.makeApiClient(BatchV1Api);
    await batch.deleteNamespacedJob({
      name: 'j1',
      namespace: NS,
      body: { propagationPolicy: 'Foreground' },
    });
    assert.deepEqual(job()?.metadata.finalizers, ['foregroundDeletion']);
    assert.ok(pod(podName), 'the pod is still there');
    await waitUntil(() => job() === undefined);
    assert.equal(pod(podName), undefined);
  });

  it('refuses an unknown policy and a policy beside orphanDependents', async () => {
    await jobWithPod();
    const batch = kc.makeApiClient(BatchV1Api);
    await expectApiError(
      batch.deleteNamespacedJob({ name: 'j1', namespace: NS, body: { propagationPolicy: 'All' } }),
      422,
      'Invalid',
    );
    await expectApiError(
      batch.deleteNamespacedJob({
        name: 'j1',
        namespace: NS,
        body: { propagationPolicy: 'Orphan', orphanDependents: true },
      }),
      422,
      'Invalid',
    );
    assert.ok(job(), 'nothing was deleted');
  });

  it('answers 204 without a Content-Type for the log of a pod that has no node', async () => {
    fake.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pending', namespace: NS },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    const res = await fetch(`${fake.url}/api/v1/namespaces/${NS}/pods/pending/log`, {
      headers: { authorization: `Bearer ${fake.token}` },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('content-type'), null);
    assert.equal(await res.text(), '');
    // What the generated client makes of it: it cannot parse a body without a Content-Type.
    const core = kc.makeApiClient(CoreV1Api);
    await assert.rejects(
      core.readNamespacedPodLog({ name: 'pending', namespace: NS }),
      /Cannot parse content/,
    );
    await expectApiError(
      core.readNamespacedPodLog({ name: 'pending', namespace: NS, container: 'nope' }),
      400,
      'BadRequest',
    );
  });

  it('lists a namespace that does not exist as empty, while reading it is 404', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedSecret({ namespace: 'nowhere' });
    assert.deepEqual(list.items, []);
    const hosts = await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: 'metal3.io',
      version: 'v1alpha1',
      plural: 'baremetalhosts',
      namespace: 'nowhere',
    });
    assert.deepEqual((hosts as { items: unknown[] }).items, []);
    await expectApiError(core.readNamespace({ name: 'nowhere' }), 404, 'NotFound');
  });
});

describe('fake Kubernetes API server: custom resources checked against their CRD', () => {
  let fake: FakeKube;
  let kc: KubeConfig;
  let api: CustomObjectsApi;
  const GROUP = 'example.bpa.test';
  const widget = (spec: unknown, name = 'w1'): Record<string, unknown> => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'Widget',
    metadata: { name },
    spec,
  });
  const create = (body: Record<string, unknown>, fieldValidation?: string): Promise<unknown> =>
    api.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: NS,
      plural: 'widgets',
      body,
      fieldValidation,
    });

  beforeEach(async () => {
    fake = await startFakeKube();
    kc = fake.kubeConfig(NS);
    api = kc.makeApiClient(CustomObjectsApi);
    // Through the client's own YAML loader, which maps `enum` and the x-kubernetes-*
    // keywords onto its typed model, as a user of the library would apply a CRD file.
    const crd = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                required: ['spec'],
                properties: {
                  spec: {
                    type: 'object',
                    required: ['size'],
                    properties: {
                      size: { type: 'integer', minimum: 1 },
                      color: { type: 'string', enum: ['red', 'blue'] },
                      tags: {
                        type: 'array',
                        'x-kubernetes-list-type': 'set',
                        items: { type: 'string', pattern: '^[a-z]+$' },
                      },
                      parts: {
                        type: 'array',
                        items: {
                          type: 'object',
                          minProperties: 1,
                          maxProperties: 1,
                          additionalProperties: {
                            type: 'object',
                            nullable: true,
                            properties: { count: { type: 'integer' } },
                          },
                        },
                      },
                      note: { type: 'object', properties: { text: { type: 'string' } } },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    });
    await kc
      .makeApiClient(ApiextensionsV1Api)
      .createCustomResourceDefinition({ body: loadYaml<V1CustomResourceDefinition>(crd) });
  });

  afterEach(async () => {
    await fake.stop();
  });

  const stored = (name = 'w1'): KubeObject | undefined =>
    fake.get(`${GROUP}/v1`, 'Widget', NS, name);

  it('serves the kind of a CRD once it is created, and reports it Established', async () => {
    await create(widget({ size: 1 }));
    assert.equal((stored()?.spec as { size: number }).size, 1);
    const crd = fake.get(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      undefined,
      `widgets.${GROUP}`,
    );
    const conditions = (crd?.status as { conditions: Array<{ type: string; status: string }> })
      .conditions;
    assert.ok(conditions.some((c) => c.type === 'Established' && c.status === 'True'));
  });

  it('prunes unknown fields, and refuses them with fieldValidation=Strict', async () => {
    await create(widget({ size: 1, extra: 'x', note: { text: 'a', more: 1 } }));
    assert.deepEqual(stored()?.spec, { size: 1, note: { text: 'a' } });
    try {
      await create(widget({ size: 1, extra: 'x' }, 'w2'), 'Strict');
      assert.fail('Strict accepted an unknown field');
    } catch (err: unknown) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 400);
      assert.match(String(err.body), /strict decoding error: unknown field \\"spec.extra\\"/);
    }
    assert.equal(stored('w2'), undefined);
  });

  it('keeps a null the schema allows and drops one it does not', async () => {
    await create(widget({ size: 1, parts: [{ a: null }], note: null, color: null }));
    assert.deepEqual(stored()?.spec, { size: 1, parts: [{ a: null }] });
  });

  const refused: Array<[string, unknown, RegExp]> = [
    ['a missing required field', {}, /spec\.size: Required value/],
    ['a wrong type', { size: 'big' }, /spec\.size in body must be of type integer: \\"string\\"/],
    [
      'a value below the minimum',
      { size: 0 },
      /spec\.size in body should be greater than or equal to 1/,
    ],
    [
      'a value outside the enum',
      { size: 1, color: 'green' },
      /spec\.color: Unsupported value: \\"green\\"/,
    ],
    ['a pattern mismatch', { size: 1, tags: ['A'] }, /spec\.tags\[0\] in body should match/],
    [
      'a duplicate in a set',
      { size: 1, tags: ['a', 'a'] },
      /spec\.tags\[1\]: Duplicate value: \\"a\\"/,
    ],
    [
      'an empty entry (minProperties)',
      { size: 1, parts: [{}] },
      /spec\.parts\[0\] in body should have at least 1 properties/,
    ],
    [
      'two keys in an entry (maxProperties)',
      { size: 1, parts: [{ a: {}, b: {} }] },
      /spec\.parts\[0\] in body should have at most 1 properties/,
    ],
    [
      'a null list item',
      { size: 1, parts: [null] },
      /spec\.parts\[0\] in body must be of type object: \\"null\\"/,
    ],
  ];
  for (const [title, spec, message] of refused) {
    it(`refuses ${title} with 422 Invalid naming the field`, async () => {
      try {
        await create(widget(spec));
        assert.fail('the server accepted it');
      } catch (err: unknown) {
        assert.ok(err instanceof ApiException, String(err));
        assert.equal(err.code, 422);
        const status = JSON.parse(String(err.body)) as { reason: string; message: string };
        assert.equal(status.reason, 'Invalid');
        assert.match(status.message, /^Widget\.example\.bpa\.test "w1" is invalid: /);
        assert.match(JSON.stringify(status.message), message);
      }
      assert.equal(stored(), undefined);
    });
  }

  it('checks the result of a patch, and a spec without the required object', async () => {
    await create(widget({ size: 2 }));
    await expectApiError(
      api.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: 'v1',
          namespace: NS,
          plural: 'widgets',
          name: 'w1',
          body: { spec: { size: -1 } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      422,
      'Invalid',
    );
    assert.equal((stored()?.spec as { size: number }).size, 2);
    await expectApiError(
      create({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w3' } }),
      422,
      'Invalid',
    );
  });
});

describe('fake kube: pods/eviction and PodDisruptionBudgets', () => {
  let kube: FakeKube;
  let core: CoreV1Api;
  const evict = (name: string) =>
    core.createNamespacedPodEviction({
      name,
      namespace: NS,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } },
    });
  const pod = (name: string, app: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  });
  const pdb = (name: string, app: string, allowed: number): KubeObject => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: NS },
    spec: { minAvailable: 1, selector: { matchLabels: { app } } },
    status: { disruptionsAllowed: allowed },
  });

  beforeEach(async () => {
    kube = await startFakeKube();
    core = kube.kubeConfig().makeApiClient(CoreV1Api);
  });
  afterEach(async () => {
    await kube.stop();
  });

  it('deletes a pod no budget covers, and 404s a pod that is not there', async () => {
    kube.put(pod('a', 'free'));
    await evict('a');
    assert.equal(kube.get('v1', 'Pod', NS, 'a'), undefined);
    await expectApiError(evict('a'), 404, 'NotFound');
  });

  it('answers 429 TooManyRequests while the budget allows no disruption, and counts down the ones it allows', async () => {
    kube.put(pod('w1', 'web'));
    kube.put(pod('w2', 'web'));
    kube.put(pdb('web', 'web', 1));
    await evict('w1');
    assert.equal(
      (
        kube.get('policy/v1', 'PodDisruptionBudget', NS, 'web')?.status as {
          disruptionsAllowed: number;
        }
      ).disruptionsAllowed,
      0,
    );
    await expectApiError(evict('w2'), 429, 'TooManyRequests');
    assert.ok(kube.get('v1', 'Pod', NS, 'w2'), 'the refused pod stays');
  });

  it('refuses a pod under two budgets with 500, as the real eviction handler does', async () => {
    kube.put(pod('x', 'web'));
    kube.put(pdb('one', 'web', 5));
    kube.put(pdb('two', 'web', 5));
    await expectApiError(evict('x'), 500, 'InternalError');
  });

  it('cordons a node with a JSON patch', async () => {
    kube.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {} });
    await core.patchNode({
      name: 'n1',
      body: [{ op: 'add', path: '/spec/unschedulable', value: true }],
    });
    assert.equal(
      (kube.get('v1', 'Node', undefined, 'n1')?.spec as { unschedulable?: boolean }).unschedulable,
      true,
    );
  });
});

describe('fake kube: the Eviction API by Kubernetes version (policyVersion)', () => {
  let kube: FakeKube | undefined;
  afterEach(async () => {
    await kube?.stop();
    kube = undefined;
  });
  const get = async (k: FakeKube, path: string): Promise<{ code: number; body: unknown }> => {
    const res = await fetch(`${k.url}${path}`, { headers: { Authorization: `Bearer ${k.token}` } });
    return { code: res.status, body: await res.json() };
  };
  const evictionEntry = async (k: FakeKube): Promise<unknown> => {
    const list = (await get(k, '/api/v1')).body as { resources: Array<{ name: string }> };
    return list.resources.find((r) => r.name === 'pods/eviction');
  };
  const pod = (name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: 'web' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  });

  it('by default (1.22 and newer) lists pods/eviction as policy/v1 and prefers policy/v1', async () => {
    kube = await startFakeKube();
    assert.deepEqual(await evictionEntry(kube), {
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    const group = (await get(kube, '/apis/policy')).body as Record<string, unknown>;
    assert.deepEqual(group.preferredVersion, { groupVersion: 'policy/v1', version: 'v1' });
  });

  it('as 1.20: lists pods/eviction as policy/v1beta1, has no policy/v1, refuses a policy/v1 Eviction with the 400 kube-apiserver gives and takes a policy/v1beta1 one', async () => {
    kube = await startFakeKube({ policyVersion: 'v1beta1' });
    assert.equal(((await get(kube, '/version')).body as { minor: string }).minor, '20');
    assert.deepEqual(await evictionEntry(kube), {
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1beta1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    const groups = (await get(kube, '/apis')).body as {
      groups: Array<{ name: string; versions: unknown[]; preferredVersion: unknown }>;
    };
    const policy = groups.groups.find((g) => g.name === 'policy');
    assert.deepEqual(policy?.versions, [{ groupVersion: 'policy/v1beta1', version: 'v1beta1' }]);
    assert.deepEqual(policy?.preferredVersion, {
      groupVersion: 'policy/v1beta1',
      version: 'v1beta1',
    });
    assert.deepEqual(await get(kube, '/apis/policy/v1'), {
      code: 404,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server could not find the requested resource',
        reason: 'NotFound',
        details: {},
        code: 404,
      },
    });

    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    kube.put(pod('w1'));
    kube.put({
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: NS },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      status: { disruptionsAllowed: 0 },
    });
    const evict = (apiVersion: string): Promise<unknown> =>
      core.createNamespacedPodEviction({
        name: 'w1',
        namespace: NS,
        body: { apiVersion, kind: 'Eviction', metadata: { name: 'w1', namespace: NS } },
      });
    try {
      await evict('policy/v1');
      assert.fail('a policy/v1 Eviction is refused');
    } catch (err: unknown) {
      assert.ok(err instanceof ApiException, String(err));
      assert.equal(err.code, 400);
      assert.deepEqual(JSON.parse(String(err.body)), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'Eviction in version "v1" cannot be handled as a Eviction: no kind "Eviction" is registered for version "policy/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
        reason: 'BadRequest',
        code: 400,
      });
    }
    // The policy/v1beta1 budget is the one the eviction obeys.
    await expectApiError(evict('policy/v1beta1'), 429, 'TooManyRequests');
    kube.updateStatus('policy/v1beta1', 'PodDisruptionBudget', NS, 'web', {
      disruptionsAllowed: 1,
    });
    await evict('policy/v1beta1');
    assert.equal(kube.get('v1', 'Pod', NS, 'w1'), undefined);
  });

  it('without the Eviction API: no policy group, no pods/eviction, and a POST to it is 404', async () => {
    kube = await startFakeKube({ policyVersion: 'none' });
    assert.equal(await evictionEntry(kube), undefined);
    assert.equal((await get(kube, '/apis/policy')).code, 404);
    kube.put(pod('w1'));
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    await expectApiError(
      core.createNamespacedPodEviction({
        name: 'w1',
        namespace: NS,
        body: { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'w1' } },
      }),
      404,
      'NotFound',
    );
  });
});
