import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useRealKube } from '../../k8s/envtest.js';
import { createObject, type KubeObjectIn } from '../../k8s/kube-objects.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt } from '../../fakes/sops.js';
import { bpa, labArgs, labReady, waitFor } from './harness.js';
import { writeLabSite } from './lab-site.js';

interface JobObject {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  spec: {
    backoffLimit?: number;
    template: {
      spec: {
        hostNetwork?: boolean;
        containers: Array<{
          image: string;
          command?: string[];
          args?: string[];
          env?: Array<{ name: string; value: string }>;
          workingDir?: string;
          volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
        }>;
        volumes?: Array<{
          name: string;
          persistentVolumeClaim?: { claimName: string };
          secret?: { secretName: string; defaultMode?: number };
        }>;
      };
    };
  };
}

/**
 * The installer as a Kubernetes Job in the bootstrap cluster (ICN's way), through the whole
 * apply: a real kube-apiserver is the bootstrap cluster, bpa talks to it as its service account
 * with deploy/rbac.yaml's grants, and the test plays the Job controller (the pod, the Job's
 * status) and the installer's effect on the shared cluster directory. No kubelet runs, so the
 * pod has no log: bpa says so; the log's contents are tested on the fake
 * (test/unit/apply/k8s/installer-job.test.ts).
 */
describe('apply: installer as a Kubernetes Job', function () {
  this.timeout(120_000);
  let lab: Lab | undefined;
  const kube = useRealKube({ name: 'job-mode' });
  let tmp: string;
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 1, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-job-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const jobs = async (): Promise<JobObject[]> =>
    (
      await kube.env.admin<{ items: JobObject[] }>(
        'GET',
        `/apis/batch/v1/namespaces/${kube.env.namespace}/jobs`,
      )
    ).body.items;
  const get = async (
    kind: 'secrets' | 'configmaps',
    name: string,
  ): Promise<{ data?: Record<string, string> } | undefined> => {
    const r = await kube.env.admin<{ data?: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${kube.env.namespace}/${kind}/${name}`,
    );
    return r.status === 200 ? r.body : undefined;
  };
  /** The Job controller's part: the Job's status, through the status subresource. */
  const setStatus = async (job: JobObject, status: Record<string, unknown>): Promise<void> => {
    const path = `/apis/batch/v1/namespaces/${kube.env.namespace}/jobs/${job.metadata.name}`;
    for (;;) {
      const current = await kube.env.admin<Record<string, unknown>>('GET', path);
      const r = await kube.env.admin('PUT', `${path}/status`, { ...current.body, status });
      if (r.status === 200) return;
      if (r.status !== 409) assert.fail(`${path}/status: ${r.status} ${JSON.stringify(r.body)}`);
    }
  };

  it('creates one Job with the cluster directory and SSH key mounted, waits for it, then publishes', async () => {
    if (!lab) return;
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'jobs', nodes: [{ name: 'master-1', roles: ['master'], host: 0 }] },
      join(tmp, 'site'),
    );
    const state = join(tmp, 'state');
    const args = [
      'reconcile',
      '--once',
      site,
      ...labArgs(lab, state),
      '--installer-mode',
      'job',
      '--installer-image',
      'registry.invalid/kud:1',
      '--installer-command',
      'installer --cluster {cluster} --plugins {plugins}',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
    ];
    const run = bpa(args);
    // The Job controller and the installer, played by the test.
    const job = await waitFor('the Job', async () => (await jobs())[0], 60_000, 50);
    assert.equal(job.spec.backoffLimit, 0);
    assert.equal(job.spec.template.spec.hostNetwork, true);
    assert.equal(job.spec.template.spec.containers[0]?.image, 'registry.invalid/kud:1');
    assert.deepEqual(job.spec.template.spec.containers[0]?.command, [
      'installer',
      '--cluster',
      'jobs',
      '--plugins',
      '',
    ]);
    assert.equal(job.metadata.labels?.['bpa.akraino.org/cluster'], 'jobs');
    assert.ok(
      job.spec.template.spec.volumes?.some(
        (v) => v.persistentVolumeClaim?.claimName === 'bpa-state',
      ),
    );
    await mkdir(join(state, 'clusters', 'jobs', 'artifacts'), { recursive: true });
    await writeFile(
      join(state, 'clusters', 'jobs', 'artifacts', 'admin.conf'),
      'apiVersion: v1\nkind: Config\nclusters: []\n',
    );
    await createObject(kube.env, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${job.metadata.name}-x1`,
        labels: { 'job-name': job.metadata.name },
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
      spec: { containers: [{ name: 'installer', image: 'kud:1' }] },
    } as KubeObjectIn);
    await setStatus(job, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
    const r = await run;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // This test's pod, and maybe one of kube-controller-manager's Job controller where
    // another test file of the process started it.
    assert.match(r.stdout, /\[jobs\] \(no logs yet: pod bpa-jobs-\S+ is not on a node\)/);
    assert.equal(
      (await jobs()).filter((j) => j.metadata.labels?.['bpa.akraino.org/cluster'] === 'jobs')
        .length,
      1,
      'one Job, never two',
    );
    const secret = await get('secrets', 'jobs-kubeconfig');
    assert.match(Buffer.from(secret?.data?.['value'] ?? '', 'base64').toString(), /kind: Config/);
    const cm = await get('configmaps', 'jobs-configmap');
    assert.equal(cm?.data?.['MASTER_master-1'], lab.hosts[0]?.ip);
  });

  it("runs Kubespray from the installer image's checkout, with the SSH settings of a local run", async () => {
    if (!lab) return;
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'ks', nodes: [{ name: 'master-1', roles: ['master', 'worker'], host: 0 }] },
      join(tmp, 'ks-site'),
    );
    const state = join(tmp, 'ks-state');
    const args = [
      'reconcile',
      '--once',
      site,
      '--state',
      state,
      '--leases',
      lab.leaseFile,
      '--ssh-key',
      lab.keyPath,
      '--flavour',
      'kubespray',
      // A path in the image (Kubespray's own image keeps its checkout there), not on this machine.
      '--kubespray-dir',
      '/kubespray',
      '--installer-mode',
      'job',
      '--installer-image',
      'quay.io/kubespray/kubespray:v2.23.3',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
    ];
    const run = bpa(args);
    const job = await waitFor(
      'the Job',
      async () =>
        (await jobs()).find((j) => j.metadata.labels?.['bpa.akraino.org/cluster'] === 'ks'),
      60_000,
      50,
    );
    const container = job.spec.template.spec.containers[0];
    const dir = '/opt/kud/multi-cluster/ks';
    assert.deepEqual(container?.command, [
      'ansible-playbook',
      '-i',
      `${dir}/hosts.ini`,
      '/kubespray/cluster.yml',
      '-e',
      'kubeconfig_localhost=true',
    ]);
    assert.equal(container?.workingDir, dir);
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env['ANSIBLE_CONFIG'], '/kubespray/ansible.cfg');
    assert.equal(env['ANSIBLE_PRIVATE_KEY_FILE'], '/root/.ssh/ssh-privatekey');
    assert.equal(env['ANSIBLE_HOST_KEY_CHECKING'], 'True');
    assert.match(
      env['ANSIBLE_SSH_ARGS'] ?? '',
      new RegExp(
        `UserKnownHostsFile=${dir}/known_hosts -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes`,
      ),
    );
    assert.equal(env['ANSIBLE_CACHE_PLUGIN_CONNECTION'], `${dir}/.ansible/facts`);
    assert.equal(env['ANSIBLE_LOCAL_TEMP'], `${dir}/.ansible/tmp`);
    // The pinned keys and the inventory are in the cluster directory the Job mounts.
    const local = join(state, 'clusters', 'ks');
    assert.match(
      await readFile(join(local, 'known_hosts'), 'utf8'),
      new RegExp(`^${lab.hosts[0]?.ip.replace(/\./g, '\\.')} ssh-ed25519 `),
    );
    assert.match(
      await readFile(join(local, 'hosts.ini'), 'utf8'),
      /ansible_port=22 ansible_user=root/,
    );

    // Kubespray, played by the test: admin.conf in <inventory dir>/artifacts.
    await mkdir(join(local, 'artifacts'), { recursive: true });
    await writeFile(
      join(local, 'artifacts', 'admin.conf'),
      'apiVersion: v1\nkind: Config\nclusters: []\n',
    );
    await setStatus(job, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
    const r = await run;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(await get('secrets', 'ks-kubeconfig'));
  });

  it('gives the Job the installer variables in a Secret of its own, never in its spec, deleted after the run', async function () {
    if (!lab) return;
    if (ageMissing()) this.skip();
    const VAULT = 'job-vault-pass-9931';
    const key = ageKeygen();
    const site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'vars',
        nodes: [{ name: 'master-1', roles: ['master'], host: 0 }],
        extraSite: [
          'apiVersion: bpa.akraino.org/v1alpha1',
          'kind: Site',
          'metadata:',
          '  name: vars',
          'spec:',
          '  installer:',
          '    variables: {secret: installer-vars}',
          '',
        ].join('\n'),
      },
      join(tmp, 'vars-site'),
    );
    await writeFile(
      join(site, 'installer-vars.yaml'),
      sopsEncrypt(secretDoc('installer-vars', { vault_password: VAULT }), [key.recipient], {
        encryptedRegex: '^(data|stringData)$',
      }).text,
    );
    const keyFile = join(tmp, 'vars.agekey');
    await writeFile(keyFile, `${key.identity}\n`, { mode: 0o600 });
    const state = join(tmp, 'vars-state');
    const run = bpa([
      'reconcile',
      '--once',
      site,
      ...labArgs(lab, state),
      '--sops-age-key-file',
      keyFile,
      '--installer-mode',
      'job',
      '--installer-image',
      'registry.invalid/kud:1',
      '--installer-command',
      'installer --cluster {cluster} -e @{extraVars}',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
    ]);
    const job = await waitFor(
      'the Job',
      async () =>
        (await jobs()).find((j) => j.metadata.labels?.['bpa.akraino.org/cluster'] === 'vars'),
      60_000,
      50,
    );
    const pod = job.spec.template.spec;
    const volume = pod.volumes?.find((v) => v.name === 'installer-vars');
    assert.equal(volume?.secret?.defaultMode, 0o400);
    const secretName = volume?.secret?.secretName ?? '';
    assert.equal(secretName, `${job.metadata.name}-vars`);
    const file = '/run/bpa-installer-vars/extra-vars.json';
    assert.deepEqual(pod.containers[0]?.command, [
      'installer',
      '--cluster',
      'vars',
      '-e',
      `@${file}`,
    ]);
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env['BPA_EXTRA_VARS'], file);
    const text = JSON.stringify(job);
    assert.ok(!text.includes(VAULT) && !text.includes(Buffer.from(VAULT).toString('base64')));
    // The Secret holds the value; it is bpa's, and the Job's.
    const r = await kube.env.admin<{
      metadata: { labels?: Record<string, string>; ownerReferences?: Array<{ uid: string }> };
      data?: Record<string, string>;
    }>('GET', `/api/v1/namespaces/${kube.env.namespace}/secrets/${secretName}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      JSON.parse(Buffer.from(r.body.data?.['extra-vars.json'] ?? '', 'base64').toString()),
      { vault_password: VAULT },
    );
    assert.equal(r.body.metadata.labels?.['app.kubernetes.io/managed-by'], 'bpa');
    assert.equal(r.body.metadata.ownerReferences?.[0]?.uid, job.metadata.uid);

    const local = join(state, 'clusters', 'vars');
    await mkdir(join(local, 'artifacts'), { recursive: true });
    await writeFile(
      join(local, 'artifacts', 'admin.conf'),
      'apiVersion: v1\nkind: Config\nclusters: []\n',
    );
    await setStatus(job, { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
    const out = await run;
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.ok(!(out.stdout + out.stderr).includes(VAULT), 'no value in the output');
    assert.equal(await get('secrets', secretName), undefined, 'deleted after the run');
  });
});
