// The installer Job (src/apply/k8s/installer-job.ts) on a real kube-apiserver, as bpa's
// service account with only deploy/rbac.yaml's grants: the Job the server stores (with its
// defaults and validation), the watch, adoption after a restart, the re-run of a failed Job
// (a DELETE with a propagation policy and a uid precondition), a Job deleted meanwhile. No
// Job controller runs here: the test writes the Job's status through /status and the pods
// the controller would make (where another test file of the process started
// kube-controller-manager, its Job controller adds pods of its own: the checks allow them).
// No kubelet runs either, so a pod has no log: the server answers
// a log request for a pod without a node with 400, which bpa turns into "no logs yet". Log
// contents, injected faults (403/500 on create, 410 Gone, a watch that cannot open, an
// unreachable server) stay on the fake in test/unit/apply/k8s/installer-job.test.ts.
import assert from 'node:assert/strict';
import {
  buildJob,
  buildVarsSecret,
  jobName,
  runInstallerJob,
  varsSecretName,
  type InstallerJobSpec,
} from '../../../src/apply/k8s/installer-job.js';
import { StalledError, WaitingError } from '../../../src/util/errors.js';
import { useRealKube } from '../../k8s/envtest.js';
import {
  createObject,
  JOB_SUCCEEDED as SUCCEEDED,
  JOB_TIMED_OUT as TIMED_OUT,
  type KubeObjectIn,
} from '../../k8s/kube-objects.js';

const HASH = '3f9a1c0b7d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a';

interface JobObject {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: Record<string, unknown> & {
    template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
  };
  status?: Record<string, unknown>;
}

async function waitUntil<T>(probe: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('installer Job on a real kube-apiserver (bpa service account)', function () {
  this.timeout(60_000);
  const kube = useRealKube({ name: 'jobs' });
  let n = 0;
  let spec: InstallerJobSpec;
  let name = '';
  // Each test its own cluster, so its Job does not meet the previous test's.
  beforeEach(() => {
    spec = {
      namespace: kube.env.namespace,
      cluster: `edge-${++n}`,
      planHash: HASH,
      step: 'provision-cluster',
      image: 'registry.example/kud:1.4',
      command: ['/opt/kud/installer', '--cluster', `edge-${n}`],
      clusterDir: {
        persistentVolumeClaim: { claimName: 'bpa-state', subPath: `clusters/edge-${n}` },
      },
      mountPath: `/opt/kud/multi-cluster/edge-${n}`,
      sshKeySecret: 'bpa-ssh-key',
      timeoutSeconds: 3600,
    };
    name = jobName(spec);
  });

  const jobs = (): string => `/apis/batch/v1/namespaces/${kube.env.namespace}/jobs`;
  const getJob = async (): Promise<JobObject | undefined> => {
    const r = await kube.env.admin<JobObject>('GET', `${jobs()}/${name}`);
    return r.status === 200 ? r.body : undefined;
  };
  const listJobs = async (): Promise<JobObject[]> =>
    (await kube.env.admin<{ items: JobObject[] }>('GET', jobs())).body.items.filter(
      (j) => j.metadata.labels?.['bpa.akraino.org/cluster'] === spec.cluster,
    );
  /** What the Job controller would write: the status, through the status subresource. */
  const setStatus = async (status: Record<string, unknown>): Promise<void> => {
    for (;;) {
      const job = await getJob();
      assert.ok(job, `Job ${name} exists`);
      const r = await kube.env.admin('PUT', `${jobs()}/${name}/status`, { ...job, status });
      if (r.status === 200) return;
      if (r.status !== 409) assert.fail(`status of ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    }
  };
  /** A pod as the Job controller makes it (never scheduled: there is no scheduler). */
  const startPod = (job: JobObject, suffix: string): Promise<unknown> =>
    createObject(kube.env, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${job.metadata.name}-${suffix}`,
        labels: { 'job-name': job.metadata.name, 'controller-uid': job.metadata.uid },
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            name: job.metadata.name,
            uid: job.metadata.uid,
            controller: true,
          },
        ],
      },
      spec: { containers: [{ name: 'installer', image: 'registry.example/kud:1.4' }] },
    } as KubeObjectIn);
  const noLogs = (pod: string): string => `(no logs yet: pod ${pod} is not on a node)\n`;

  it('creates the Job the server stores as intended, follows it to success, and lists its pods', async () => {
    const lines: string[] = [];
    const run = runInstallerJob(kube.env.bpaKubeConfig(), spec, {
      pollMs: 50,
      onLog: (l) => lines.push(l),
    });
    const job = await waitUntil(getJob);
    const labels = {
      'app.kubernetes.io/managed-by': 'bpa',
      'bpa.akraino.org/cluster': spec.cluster,
      'bpa.akraino.org/plan-hash': HASH.slice(0, 63),
      'bpa.akraino.org/step': 'provision-cluster',
    };
    assert.deepEqual(job.metadata.labels, labels);
    assert.equal(job.metadata.annotations?.['bpa.akraino.org/plan-hash'], HASH);
    assert.equal(job.spec['backoffLimit'], 0);
    assert.equal(job.spec['activeDeadlineSeconds'], 3600);
    // Kubernetes 1.20 drops ttlSecondsAfterFinished (its feature gate is off there); newer
    // servers keep it (the fake's test checks bpa sends it).
    const template = job.spec.template;
    // The server adds the Job's selector labels to the pod template.
    assert.equal(template.metadata.labels['job-name'], name);
    assert.equal(template.metadata.labels['controller-uid'], job.metadata.uid);
    for (const [k, v] of Object.entries(labels)) assert.equal(template.metadata.labels[k], v);
    const pod = template.spec as {
      hostNetwork: boolean;
      restartPolicy: string;
      automountServiceAccountToken: boolean;
      containers: { image: string; command: string[]; workingDir: string }[];
      volumes: { name: string; secret?: { secretName: string; defaultMode: number } }[];
    };
    assert.equal(pod.hostNetwork, true);
    assert.equal(pod.restartPolicy, 'Never');
    assert.equal(pod.automountServiceAccountToken, false);
    assert.deepEqual(pod.containers[0]?.command, spec.command);
    assert.equal(pod.containers[0]?.workingDir, spec.mountPath);
    assert.deepEqual(pod.volumes.find((v) => v.name === 'ssh-key')?.secret, {
      secretName: 'bpa-ssh-key',
      defaultMode: 0o400,
    });

    await startPod(job, 'x7k2p');
    await setStatus({ active: 1 });
    await setStatus(SUCCEEDED);
    const outcome = await run;
    assert.deepEqual([outcome.succeeded, outcome.adopted], [true, false]);
    assert.ok(outcome.logs.includes(noLogs(`${name}-x7k2p`)), outcome.logs);
    assert.ok(lines.includes(noLogs(`${name}-x7k2p`).trimEnd()), lines.join('\n'));
    assert.equal((await listJobs()).length, 1);
  });

  it('passes installer variables in a Secret of the run, owned by the Job, mounted 0400, deleted after the run', async () => {
    const VALUE = 'job-vault-pass-4711';
    const withVars = {
      ...spec,
      command: [...spec.command, '-e', '@/run/bpa-installer-vars/extra-vars.json'],
      variables: { vault_password: VALUE },
    };
    const secretPath = `/api/v1/namespaces/${kube.env.namespace}/secrets/${varsSecretName(spec)}`;
    interface SecretObject {
      metadata: {
        labels?: Record<string, string>;
        ownerReferences?: { uid: string; kind: string }[];
      };
      data?: Record<string, string>;
    }
    const getSecret = async (): Promise<SecretObject | undefined> => {
      const r = await kube.env.admin<SecretObject>('GET', secretPath);
      return r.status === 200 ? r.body : undefined;
    };
    const run = runInstallerJob(kube.env.bpaKubeConfig(), withVars, { pollMs: 50 });
    const job = await waitUntil(getJob);
    const secret = await waitUntil(getSecret);
    // The Secret holds the value, labelled as bpa's and owned by the Job.
    assert.deepEqual(
      JSON.parse(Buffer.from(secret.data?.['extra-vars.json'] ?? '', 'base64').toString()),
      { vault_password: VALUE },
    );
    assert.equal(secret.metadata.labels?.['app.kubernetes.io/managed-by'], 'bpa');
    assert.equal(secret.metadata.labels?.['bpa.akraino.org/cluster'], spec.cluster);
    assert.deepEqual(
      secret.metadata.ownerReferences?.map((o) => [o.kind, o.uid]),
      [['Job', job.metadata.uid]],
    );
    // The Job refers to it by name, read-only and 0400; the value is nowhere in its spec.
    assert.ok(!JSON.stringify(job).includes(VALUE), 'no value in the Job');
    assert.ok(!JSON.stringify(job).includes(Buffer.from(VALUE).toString('base64')));
    const pod = job.spec.template.spec as {
      containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[];
      volumes: { name: string; secret?: Record<string, unknown> }[];
    };
    assert.deepEqual(pod.volumes.find((v) => v.name === 'installer-vars')?.secret, {
      secretName: varsSecretName(spec),
      defaultMode: 0o400,
      items: [{ key: 'extra-vars.json', path: 'extra-vars.json' }],
    });
    assert.deepEqual(
      pod.containers[0]?.volumeMounts.find((m) => m.name === 'installer-vars'),
      { name: 'installer-vars', mountPath: '/run/bpa-installer-vars', readOnly: true },
    );
    await setStatus(SUCCEEDED);
    assert.equal((await run).succeeded, true);
    assert.equal(await getSecret(), undefined, 'deleted after the run');
  });

  it("replaces a variables Secret left by an earlier Job of the same name (a failed run's re-run)", async () => {
    const withVars = { ...spec, variables: { token: 'new-token-1' } };
    const stale = buildVarsSecret(
      { ...withVars, variables: { token: 'old-token-0' } },
      { name: jobName(spec), uid: '00000000-0000-0000-0000-000000000000' },
    );
    await createObject(kube.env, stale as KubeObjectIn);
    const run = runInstallerJob(kube.env.bpaKubeConfig(), withVars, { pollMs: 50 });
    const job = await waitUntil(getJob);
    const path = `/api/v1/namespaces/${kube.env.namespace}/secrets/${varsSecretName(spec)}`;
    const fresh = await waitUntil(async () => {
      const r = await kube.env.admin<{
        metadata: { ownerReferences?: { uid: string }[] };
        data?: Record<string, string>;
      }>('GET', path);
      return r.status === 200 && r.body.metadata.ownerReferences?.[0]?.uid === job.metadata.uid
        ? r.body
        : undefined;
    });
    assert.match(
      Buffer.from(fresh.data?.['extra-vars.json'] ?? '', 'base64').toString(),
      /new-token-1/,
    );
    await setStatus(SUCCEEDED);
    assert.equal((await run).succeeded, true);
    assert.equal((await kube.env.admin('GET', path)).status, 404);
  });

  it("refuses to replace a Secret of the variables Secret's name that bpa did not create", async () => {
    await createObject(kube.env, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: varsSecretName(spec) },
      stringData: { mine: 'keep' },
    } as KubeObjectIn);
    await assert.rejects(
      runInstallerJob(kube.env.bpaKubeConfig(), { ...spec, variables: { a: 'b' } }, { pollMs: 50 }),
      (err: unknown) => {
        assert.ok(err instanceof StalledError, String(err));
        assert.equal(err.code, 'INSTALLER_VARS_SECRET_CONFLICT');
        return true;
      },
    );
    const kept = await kube.env.admin<{ data?: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${kube.env.namespace}/secrets/${varsSecretName(spec)}`,
    );
    assert.equal(Buffer.from(kept.body.data?.['mine'] ?? '', 'base64').toString(), 'keep');
  });

  it('reports a failure with the reason of the Failed condition', async () => {
    const run = runInstallerJob(
      kube.env.bpaKubeConfig(),
      { ...spec, timeoutSeconds: 60 },
      {
        pollMs: 50,
      },
    );
    const job = await waitUntil(getJob);
    assert.equal(job.spec['activeDeadlineSeconds'], 60);
    await setStatus(TIMED_OUT);
    const outcome = await run;
    assert.equal(outcome.succeeded, false);
    assert.equal(outcome.reason, 'DeadlineExceeded');
    assert.equal(outcome.message, 'Job was active longer than specified deadline');
  });

  it('adopts a Job already running (after a restart) instead of creating a second one', async () => {
    const existing = await createObject<JobObject>(kube.env, buildJob(spec) as KubeObjectIn);
    await setStatus({ active: 1 });
    const run = runInstallerJob(kube.env.bpaKubeConfig(), spec, { pollMs: 50 });
    // bpa reads the Job and watches it; then the Job finishes.
    await new Promise((r) => setTimeout(r, 300));
    await startPod(existing, 'a1b2c');
    await setStatus(SUCCEEDED);
    const outcome = await run;
    assert.equal(outcome.succeeded, true);
    assert.equal(outcome.adopted, true);
    assert.ok(outcome.logs.includes(noLogs(`${name}-a1b2c`)), outcome.logs);
    const all = await listJobs();
    assert.deepEqual(
      all.map((j) => j.metadata.uid),
      [existing.metadata.uid],
      'no second Job is created',
    );
  });

  it('answers at once for a Job that has already finished', async () => {
    await createObject(kube.env, buildJob(spec) as KubeObjectIn);
    await setStatus(TIMED_OUT);
    const outcome = await runInstallerJob(kube.env.bpaKubeConfig(), spec, { pollMs: 50 });
    assert.equal(outcome.succeeded, false);
    assert.equal(outcome.reason, 'DeadlineExceeded');
    assert.equal(outcome.adopted, true);
  });

  it('re-runs a failed Job when retryFailed is set: deletes it (Background, uid precondition) and ignores its pods', async () => {
    const old = await createObject<JobObject>(kube.env, buildJob(spec) as KubeObjectIn);
    await startPod(old, 'old00');
    await setStatus(TIMED_OUT);

    const run = runInstallerJob(kube.env.bpaKubeConfig(), spec, { pollMs: 50, retryFailed: true });
    // A Foreground or Orphan deletion would leave the old Job with a finalizer, which only a
    // garbage collector (none runs here) removes: the new Job could not be created.
    const fresh = await waitUntil(async () => {
      const j = await getJob();
      return j && j.metadata.uid !== old.metadata.uid ? j : undefined;
    });
    assert.equal(fresh.status?.['succeeded'], undefined);
    await startPod(fresh, 'new00');
    await setStatus(SUCCEEDED);
    const outcome = await run;
    assert.equal(outcome.succeeded, true);
    assert.equal(outcome.adopted, false);
    // The old pod is still there (no garbage collector) but belongs to the deleted Job.
    assert.ok(outcome.logs.includes(noLogs(`${name}-new00`)), outcome.logs);
    assert.ok(!outcome.logs.includes('old00'), 'pods of the deleted Job are not mixed in');
    assert.equal((await listJobs()).length, 1);
  });

  it('refuses to adopt a Job of the same name that bpa did not create for this plan', async () => {
    await createObject(kube.env, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, labels: { team: 'someone-else' } },
      spec: {
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'x', image: 'busybox' }] },
        },
      },
    });
    await assert.rejects(
      runInstallerJob(kube.env.bpaKubeConfig(), spec, { pollMs: 50 }),
      (err: unknown) => {
        assert.ok(err instanceof StalledError, String(err));
        assert.equal(err.code, 'INSTALLER_JOB_CONFLICT');
        assert.match(err.message, /app\.kubernetes\.io\/managed-by/);
        return true;
      },
    );
  });

  it('stops following on abort, leaving the Job for the next run to adopt', async () => {
    const controller = new AbortController();
    const run = runInstallerJob(kube.env.bpaKubeConfig(), spec, {
      pollMs: 50,
      signal: controller.signal,
    });
    const job = await waitUntil(getJob);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await assert.rejects(run, (err: unknown) => {
      assert.ok(err instanceof WaitingError, String(err));
      assert.equal(err.code, 'INSTALLER_JOB_DETACHED');
      return true;
    });
    assert.equal((await getJob())?.metadata.uid, job.metadata.uid, 'the Job is not deleted');

    const again = runInstallerJob(kube.env.bpaKubeConfig(), spec, { pollMs: 50 });
    await new Promise((r) => setTimeout(r, 300));
    await setStatus(SUCCEEDED);
    const outcome = await again;
    assert.deepEqual([outcome.succeeded, outcome.adopted], [true, true]);
    assert.equal((await listJobs()).length, 1);
  });

  it('reports a Job deleted while running as a failure, also while a finalizer still holds it', async () => {
    for (const propagationPolicy of ['Background', 'Orphan']) {
      const run = runInstallerJob(kube.env.bpaKubeConfig(), spec, { pollMs: 50 });
      await waitUntil(getJob);
      await new Promise((r) => setTimeout(r, 300));
      // Orphan (kubectl delete --cascade=orphan, and batch/v1's default) leaves the Job with a
      // deletionTimestamp and the orphan finalizer until a garbage collector (none here)
      // removes it; bpa must not wait for that.
      const del = await kube.env.admin('DELETE', `${jobs()}/${name}`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy,
      });
      assert.equal(del.status, 200);
      const outcome = await run;
      assert.equal(outcome.succeeded, false, propagationPolicy);
      assert.equal(outcome.reason, 'JobDeleted', propagationPolicy);
      assert.equal(outcome.logs, '');
      if (propagationPolicy === 'Background') assert.equal(await getJob(), undefined);
      // The next round: a fresh cluster name, so a fresh Job.
      spec = { ...spec, cluster: `${spec.cluster}-o`, command: [...spec.command] };
      name = jobName(spec);
    }
  });
});
