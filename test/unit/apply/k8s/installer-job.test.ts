import assert from 'node:assert/strict';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  buildJob,
  jobName,
  runInstallerJob,
  type InstallerJobSpec,
  type JobOutcome,
} from '../../../../src/apply/k8s/installer-job.js';
import { BpaError, StalledError, TransientError } from '../../../../src/util/errors.js';
import { startFakeKube, type FakeKube, type KubeObject } from '../../../fakes/kube-api-server.js';
import {
  JOB_SUCCEEDED as SUCCEEDED,
  JOB_TIMED_OUT as TIMED_OUT,
} from '../../../k8s/kube-objects.js';

const NS = 'bpa-system';
const HASH = '3f9a1c0b7d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a';
const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;

function jobSpec(over: Partial<InstallerJobSpec> = {}): InstallerJobSpec {
  return {
    namespace: NS,
    cluster: 'edge-01',
    planHash: HASH,
    step: 'provision-cluster',
    image: 'registry.example/kud:1.4',
    command: ['/opt/kud/installer', '--cluster', 'edge-01'],
    clusterDir: { persistentVolumeClaim: { claimName: 'bpa-state', subPath: 'clusters/edge-01' } },
    mountPath: '/opt/kud/multi-cluster/edge-01',
    sshKeySecret: 'bpa-ssh-key',
    timeoutSeconds: 3600,
    ...over,
  };
}

async function waitUntil<T>(probe: () => T | undefined | false, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Plays the Job controller, the scheduler and kubelet: a pod owned by the Job, on a node, with a log. */
function startPod(kube: FakeKube, job: KubeObject, suffix: string, log: string): string {
  const jobName = job.metadata.name ?? '';
  const podName = `${jobName}-${suffix}`;
  kube.put({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace: NS,
      labels: { 'job-name': jobName, 'controller-uid': job.metadata.uid ?? '' },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: jobName,
          uid: job.metadata.uid,
          controller: true,
        },
      ],
    },
    spec: {
      nodeName: 'node-1',
      containers: [{ name: 'installer', image: 'registry.example/kud:1.4' }],
    },
  });
  kube.setPodLog(NS, podName, log);
  return podName;
}

// Creating, adopting, re-running, refusing a foreign Job, detaching and a deleted Job run on a
// real kube-apiserver in test/integration/kube/installer-job.test.ts. Here, on the fake: what
// needs a kubelet (pod log contents, the log request's parameters), a garbage collector
// together with the exact DELETE body, or an injected fault (403/500 on create, 410 Gone, a
// watch that cannot open, a server gone away).
describe('installer Job (against the fake API server)', () => {
  let kube: FakeKube;
  let kc: KubeConfig;
  const name = jobName(jobSpec());

  beforeEach(async () => {
    kube = await startFakeKube();
    kc = kube.kubeConfig(NS);
  });

  afterEach(async () => {
    await kube.stop();
  });

  const posts = (): number =>
    kube.requests.filter((r) => r.method === 'POST' && r.path === JOBS).length;
  const stored = (): KubeObject | undefined => kube.get('batch/v1', 'Job', NS, name);

  it('names Jobs deterministically as DNS labels that keep the plan hash', () => {
    assert.equal(name, 'bpa-edge-01-provision-cluster-3f9a1c0b7d');
    assert.equal(jobName(jobSpec()), name);
    const long = jobName(
      jobSpec({
        cluster: 'a-very-long-cluster-name-for-a-remote-edge-site',
        step: 'install-plugins',
      }),
    );
    assert.ok(long.length <= 63, long);
    assert.match(long, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.ok(long.endsWith('-3f9a1c0b7d'), long);
    assert.notEqual(jobName(jobSpec({ planHash: 'ffff' + HASH.slice(4) })), name);
    assert.equal(
      jobName(jobSpec({ cluster: 'Edge_01' })),
      'bpa-edge-01-provision-cluster-3f9a1c0b7d',
    );
  });

  it('creates the Job with exactly the intended spec, then reports success with the pod log', async () => {
    const lines: string[] = [];
    const run = runInstallerJob(kc, jobSpec(), { pollMs: 50, onLog: (l) => lines.push(l) });
    const job = await waitUntil(stored);

    const labels = {
      'app.kubernetes.io/managed-by': 'bpa',
      'bpa.akraino.org/cluster': 'edge-01',
      'bpa.akraino.org/plan-hash': HASH.slice(0, 63),
      'bpa.akraino.org/step': 'provision-cluster',
    };
    assert.deepEqual(job.metadata.labels, labels);
    assert.equal(job.metadata.annotations?.['bpa.akraino.org/plan-hash'], HASH);
    const spec = job.spec as Record<string, unknown>;
    assert.equal(spec.backoffLimit, 0);
    assert.equal(spec.activeDeadlineSeconds, 3600);
    assert.equal(spec.ttlSecondsAfterFinished, 86400);
    assert.deepEqual(spec.template, {
      metadata: { labels },
      spec: {
        hostNetwork: true,
        dnsPolicy: 'ClusterFirstWithHostNet',
        restartPolicy: 'Never',
        automountServiceAccountToken: false,
        containers: [
          {
            name: 'installer',
            image: 'registry.example/kud:1.4',
            command: ['/opt/kud/installer', '--cluster', 'edge-01'],
            workingDir: '/opt/kud/multi-cluster/edge-01',
            volumeMounts: [
              {
                name: 'cluster-dir',
                mountPath: '/opt/kud/multi-cluster/edge-01',
                subPath: 'clusters/edge-01',
              },
              { name: 'ssh-key', mountPath: '/root/.ssh', readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: 'cluster-dir', persistentVolumeClaim: { claimName: 'bpa-state' } },
          { name: 'ssh-key', secret: { secretName: 'bpa-ssh-key', defaultMode: 0o400 } },
        ],
      },
    });

    startPod(kube, job, 'x7k2p', 'TASK [kubespray : preinstall]\nok: [node-1]\nPLAY RECAP\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, { active: 1 });
    kube.updateStatus('batch/v1', 'Job', NS, name, SUCCEEDED);
    const outcome = await run;

    assert.deepEqual(outcome, {
      succeeded: true,
      adopted: false,
      logs: 'TASK [kubespray : preinstall]\nok: [node-1]\nPLAY RECAP\n',
    } satisfies JobOutcome);
    assert.deepEqual(lines, ['TASK [kubespray : preinstall]', 'ok: [node-1]', 'PLAY RECAP']);
    assert.equal(posts(), 1);
    const watch = kube.requests.find((r) => r.path === JOBS && r.query.watch === 'true');
    assert.equal(watch?.query.fieldSelector, `metadata.name=${name}`);
    assert.ok(watch?.query.resourceVersion, 'the watch starts from the created resourceVersion');
    const logReq = kube.requests.find((r) => r.path.endsWith('/log'));
    assert.equal(logReq?.query.tailLines, '500');
    assert.equal(logReq?.query.container, 'installer');
    assert.equal(kube.openWatches(), 0);
  });

  it('mounts a hostPath cluster directory and the named service account when asked', () => {
    const job = buildJob(
      jobSpec({
        clusterDir: { hostPath: { path: '/var/lib/bpa/clusters/edge-01' } },
        serviceAccountName: 'kud',
      }),
    );
    const pod = job.spec?.template.spec;
    assert.deepEqual(pod?.volumes?.[0], {
      name: 'cluster-dir',
      hostPath: { path: '/var/lib/bpa/clusters/edge-01', type: 'Directory' },
    });
    assert.deepEqual(pod?.containers[0]?.volumeMounts?.[0], {
      name: 'cluster-dir',
      mountPath: '/opt/kud/multi-cluster/edge-01',
    });
    assert.equal(pod?.serviceAccountName, 'kud');
    assert.equal(pod?.automountServiceAccountToken, true);
  });

  it('reports a failure with the reason of the Failed condition and the log tail', async () => {
    const lines: string[] = [];
    const run = runInstallerJob(kc, jobSpec({ timeoutSeconds: 60 }), {
      pollMs: 50,
      onLog: (l) => lines.push(l),
    });
    const job = await waitUntil(stored);
    assert.equal((job.spec as { activeDeadlineSeconds: number }).activeDeadlineSeconds, 60);
    startPod(kube, job, 'q9z8w', 'TASK [kubespray : download]\nfatal: [node-2]: UNREACHABLE!\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, TIMED_OUT);
    const outcome = await run;
    assert.equal(outcome.succeeded, false);
    assert.equal(outcome.reason, 'DeadlineExceeded');
    assert.equal(outcome.message, 'Job was active longer than specified deadline');
    assert.match(outcome.logs, /fatal: \[node-2\]: UNREACHABLE!/);
    assert.equal(lines.at(-1), 'fatal: [node-2]: UNREACHABLE!');
  });

  it('masks installer variables a Job prints; a Secret it may not create stops with an RBAC hint', async () => {
    const VALUE = 'tok-4711-secret';
    const spec = jobSpec({ variables: { token: VALUE } });
    const lines: string[] = [];
    const run = runInstallerJob(kc, spec, { pollMs: 50, onLog: (l) => lines.push(l) });
    const job = await waitUntil(stored);
    startPod(kube, job, 'v1v1v', `token is ${VALUE}\nok\n`);
    kube.updateStatus('batch/v1', 'Job', NS, name, SUCCEEDED);
    const outcome = await run;
    assert.equal(outcome.succeeded, true);
    assert.ok(!outcome.logs.includes(VALUE), outcome.logs);
    assert.match(outcome.logs, /token is \*\*\*/);
    assert.ok(!lines.join('\n').includes(VALUE));

    kube.fail(
      { method: 'POST', pathPrefix: `/api/v1/namespaces/${NS}/secrets`, times: 1 },
      {
        code: 403,
        message:
          'secrets is forbidden: User "system:serviceaccount:bpa-system:bpa" cannot create resource "secrets"',
      },
    );
    await assert.rejects(
      runInstallerJob(kc, jobSpec({ variables: { token: VALUE }, step: 'other' }), { pollMs: 50 }),
      (err: unknown) => {
        assert.ok(err instanceof StalledError, String(err));
        assert.equal(err.code, 'INSTALLER_VARS_SECRET');
        assert.match(err.message, /grant create on secrets in namespace bpa-system/);
        assert.ok(!err.message.includes(VALUE));
        return true;
      },
    );
  });

  it('re-runs a failed Job when retryFailed is set, ignoring the old pods', async () => {
    const old = kube.put(buildJob(jobSpec()) as KubeObject);
    startPod(kube, old, 'old00', 'first attempt failed\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, TIMED_OUT);

    const run = runInstallerJob(kc, jobSpec(), { pollMs: 50, retryFailed: true });
    const fresh = await waitUntil(() => {
      const j = stored();
      return j && j.metadata.uid !== old.metadata.uid ? j : undefined;
    });
    assert.equal(fresh.status, undefined);
    startPod(kube, fresh, 'new00', 'second attempt ok\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, SUCCEEDED);
    const outcome = await run;
    assert.equal(outcome.succeeded, true);
    assert.equal(outcome.adopted, false);
    assert.equal(outcome.logs, 'second attempt ok\n', 'pods of the deleted Job are not mixed in');
    const deletes = kube.requests.filter(
      (r) => r.method === 'DELETE' && r.path === `${JOBS}/${name}`,
    );
    assert.equal(deletes.length, 1);
    // In the body, where the API server reads it when a DELETE has one (it then ignores the
    // query), so the old pods are deleted with their Job rather than orphaned.
    assert.deepEqual(deletes[0]?.body, {
      propagationPolicy: 'Background',
      preconditions: { uid: old.metadata.uid },
    });
    await waitUntil(() => kube.get('v1', 'Pod', NS, `${name}-old00`) === undefined);
    assert.equal(posts(), 1);
  });

  it('does not read the log of a pod an earlier Job of the same name left orphaned', async () => {
    // `kubectl delete job --cascade=orphan`, or a Job deleted without a policy, leaves its
    // pods behind with the label but without the owner.
    kube.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${name}-orph0`, namespace: NS, labels: { 'job-name': name } },
      spec: { nodeName: 'node-1', containers: [{ name: 'installer', image: 'kud' }] },
    });
    kube.setPodLog(NS, `${name}-orph0`, 'an earlier run\n');
    const run = runInstallerJob(kc, jobSpec(), { pollMs: 50 });
    const job = await waitUntil(stored);
    startPod(kube, job, 'this0', 'this run\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, SUCCEEDED);
    assert.equal((await run).logs, 'this run\n');
  });

  it('turns a 403 on create into a StalledError with an RBAC hint, and a 500 into a TransientError', async () => {
    kube.fail(
      { method: 'POST', pathPrefix: JOBS, times: 1 },
      {
        code: 403,
        message:
          'jobs.batch is forbidden: User "system:serviceaccount:bpa-system:bpa" cannot create resource "jobs"',
      },
    );
    await assert.rejects(runInstallerJob(kc, jobSpec(), { pollMs: 50 }), (err: unknown) => {
      assert.ok(err instanceof StalledError, String(err));
      assert.equal(err.code, 'INSTALLER_JOB_API');
      assert.match(err.message, /forbidden \(403\)/);
      assert.match(err.message, /grant create on jobs\.batch in namespace bpa-system .*RBAC/);
      return true;
    });
    kube.fail(
      { method: 'POST', pathPrefix: JOBS, times: 1 },
      { code: 500, message: 'etcdserver: request timed out' },
    );
    await assert.rejects(runInstallerJob(kc, jobSpec(), { pollMs: 50 }), (err: unknown) => {
      assert.ok(err instanceof TransientError, String(err));
      assert.match(err.message, /etcdserver: request timed out/);
      return true;
    });
    assert.equal(stored(), undefined);
  });

  it('re-lists with a fresh resourceVersion after 410 Gone', async () => {
    await kube.stop();
    kube = await startFakeKube({ historyLimit: 3 });
    kc = kube.kubeConfig(NS);
    const existing = kube.put(buildJob(jobSpec()) as KubeObject);
    // Unrelated writes push the Job's resourceVersion out of the watch history.
    for (let i = 0; i < 5; i++) {
      kube.put({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `noise-${i}`, namespace: NS },
      });
    }
    const run = runInstallerJob(kc, jobSpec(), { pollMs: 50 });
    await waitUntil(() => kube.openWatches() === 1);
    startPod(kube, existing, 'r4s5t', 'ok\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, SUCCEEDED);
    const outcome = await run;
    assert.equal(outcome.succeeded, true);
    const watches = kube.requests.filter((r) => r.query.watch === 'true');
    assert.equal(watches[0]?.query.resourceVersion, existing.metadata.resourceVersion);
    const relist = kube.requests.find((r) => r.path === JOBS && r.query.watch === undefined);
    assert.equal(relist?.query.fieldSelector, `metadata.name=${name}`);
    assert.ok(
      Number(watches[1]?.query.resourceVersion) > Number(existing.metadata.resourceVersion),
    );
  });

  it('falls back to reading the Job when the watch cannot be opened', async () => {
    // Slow answers give the test time to arm the fault once the Job is being created (the
    // initial read lives under the same path prefix and must not be hit).
    kube.setLatency(100);
    const run = runInstallerJob(kc, jobSpec(), { pollMs: 30 });
    await waitUntil(() => posts() === 1);
    // The next three GETs of the Job collection fail: watch, list, watch; then a list succeeds.
    kube.fail(
      { method: 'GET', pathPrefix: JOBS, times: 3 },
      { code: 503, message: 'apiserver is shutting down' },
    );
    kube.setLatency(0);
    const job = await waitUntil(stored);
    startPod(kube, job, 'p0l1l', 'polled\n');
    kube.updateStatus('batch/v1', 'Job', NS, name, SUCCEEDED);
    const outcome = await run;
    assert.equal(outcome.succeeded, true);
    const collection = kube.requests.filter((r) => r.method === 'GET' && r.path === JOBS);
    assert.deepEqual(
      collection.slice(0, 4).map((r) => (r.query.watch === 'true' ? 'watch' : 'list')),
      ['watch', 'list', 'watch', 'list'],
    );
  });

  it('gives up with a TransientError when the API server stays unreachable', async () => {
    const run = runInstallerJob(kc, jobSpec(), { pollMs: 10 });
    await waitUntil(() => kube.openWatches() === 1);
    await kube.stop();
    await assert.rejects(run, (err: unknown) => {
      assert.ok(err instanceof BpaError);
      assert.equal(err.code, 'INSTALLER_JOB_UNREACHABLE');
      assert.equal(err.retry, 'transient');
      return true;
    });
  });
});
