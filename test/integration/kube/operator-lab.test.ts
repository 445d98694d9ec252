// The seeds' workflow in operator mode, end to end: a real ICN Provisioning CR (MACs replaced
// by the lab's) and a Software CR applied into a real kube-apiserver; bpa serve --source
// kubernetes provisions the cluster on lab hosts with the reference installer, publishes the
// node ConfigMap and the kubeconfig Secret there, and removes the nodes when the Cluster is
// deleted with deletionPolicy: Delete.
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { ROOT, labArgs, labReady, spawnBpa, waitFor } from '../apply/harness.js';
import { writeLabSite } from '../apply/lab-site.js';
import { useRealKube } from '../../k8s/envtest.js';
import { createObjectsOf } from '../../k8s/kube-objects.js';

const ICN = join(ROOT, '..', 'shared', 'real-world', 'icn');
const API = '/apis/bpa.akraino.org/v1alpha1';

describe('operator mode on lab hosts: the seeds workflow (real kube-apiserver)', function () {
  this.timeout(300_000);
  const kube = useRealKube({ name: 'oplab' });
  let lab: Lab | undefined;
  let tmp = '';
  let child: ChildProcess | undefined;
  let stderr = '';

  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    // Each host with its own /etc, where the reference installer leaves its markers.
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-oplab-'));
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
    }
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('kubectl apply of an ICN Provisioning CR provisions the cluster; kubectl wait for Ready returns; its ConfigMap and Secret are in the cluster; a deletion whose removal fails is held until its finalizer is removed by hand', async () => {
    const hosts = lab?.hosts ?? [];
    // The lab's hosts as BareMetalHosts (an --inventory directory).
    const site = await writeLabSite(
      hosts,
      { cluster: 'unused', nodes: [{ name: 'm', roles: ['master'], host: 0 }] },
      join(tmp, 'lab-site'),
    );
    // A real ICN Provisioning CR, its MACs replaced by the lab's.
    const icn = parse(
      await readFile(join(ICN, 'bpa_v1alpha1_provisioning_cr.8c0e49d.yaml'), 'utf8'),
    ) as {
      metadata: { name: string; labels: Record<string, string> };
      spec: {
        masters: Record<string, Record<string, string>>[];
        workers: Record<string, Record<string, string>>[];
      };
    };
    const cluster = icn.metadata.labels['cluster'] as string;
    (icn.spec.masters[0] as Record<string, Record<string, string>>)['master-1']!['mac-address'] =
      hosts[0]!.mac;
    (icn.spec.workers[0] as Record<string, Record<string, string>>)['worker-1']!['mac-address'] =
      hosts[1]!.mac;
    const docs = join(tmp, 'cr.yaml');
    await writeFile(
      docs,
      [
        icn,
        {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'Software',
          metadata: { name: `${cluster}-software`, labels: { cluster } },
          spec: { masterSoftware: [], workerSoftware: [] },
        },
        {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'Cluster',
          metadata: { name: cluster, labels: { cluster } },
          spec: {
            provisioningCR: icn.metadata.name,
            softwareCR: `${cluster}-software`,
            deletionPolicy: 'Delete',
          },
        },
        {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'Site',
          metadata: { name: 'lab' },
          spec: {},
        },
      ]
        .map((d) => stringify(d))
        .join('---\n'),
    );
    await createObjectsOf(kube.env, docs);
    const ns = kube.env.namespace;
    child = spawnBpa([
      'serve',
      '--source',
      'kubernetes',
      ...labArgs(lab as Lab, join(tmp, 'state'), [
        '--inventory',
        join(site, 'inventory'),
        '--bootstrap-kubeconfig',
        kube.env.bpaKubeconfigPath,
        '--bootstrap-namespace',
        ns,
        '--prune',
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1h',
      ]),
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const configMap = await waitFor(
      `ConfigMap ${cluster}-configmap`,
      async () => {
        const r = await kube.env.admin<{ data: Record<string, string> }>(
          'GET',
          `/api/v1/namespaces/${ns}/configmaps/${cluster}-configmap`,
        );
        if (r.status === 200) return r.body;
        // An installer failure: its log, to say why.
        const log = /"log":"([^"]+\.log)","step":"installer"/.exec(stderr)?.[1];
        if (log)
          throw new Error(
            (
              await readFile(
                join(
                  tmp,
                  'state',
                  'clusters',
                  log.split('/')[0] as string,
                  'logs',
                  log.split('/')[1] as string,
                ),
                'utf8',
              ).catch(() => log)
            ).slice(-4000),
          );
        return undefined;
      },
      240_000,
      500,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${stderr.slice(-3000)}`);
    });
    // As ICN's operator wrote it: MASTER_<node> and WORKER_<node> → address.
    assert.equal(configMap.data['MASTER_master-1'], hosts[0]!.ip);
    assert.equal(configMap.data['WORKER_worker-1'], hosts[1]!.ip);
    const secret = await kube.env.admin(
      'GET',
      `/api/v1/namespaces/${ns}/secrets/${cluster}-kubeconfig`,
    );
    assert.equal(secret.status, 200);
    // kubectl wait for Ready on the objects the operator applied, as with a cluster from git
    // (docs/kubernetes-status.md); bpa wrote their status only: no label of its own, the
    // spec as applied.
    const readyOf = async (path: string): Promise<true | undefined> => {
      const o = await kube.env.admin<{
        status?: { conditions?: Array<{ type: string; status: string }> };
      }>('GET', `${API}/namespaces/${ns}/${path}`);
      return o.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? true
        : undefined;
    };
    for (const path of [`clusters/${cluster}`, `provisionings/${icn.metadata.name}`]) {
      const [plural, name] = path.split('/') as [string, string];
      const kubectl = await promisify(execFile)('kubectl', [
        '--kubeconfig',
        kube.env.server.adminKubeconfigPath,
        '-n',
        ns,
        'wait',
        '--for=condition=Ready',
        `${plural}.bpa.akraino.org/${name}`,
        '--timeout=120s',
      ]).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
        return undefined; // no kubectl here: the same condition, read through the API
      });
      if (kubectl) assert.match(kubectl.stdout, /condition met/);
      else await waitFor(`${path} Ready`, () => readyOf(path), 120_000, 500);
      assert.equal(await readyOf(path), true);
    }
    const applied = await kube.env.admin<{
      metadata: { labels?: Record<string, string> };
      spec: unknown;
    }>('GET', `${API}/namespaces/${ns}/provisionings/${icn.metadata.name}`);
    assert.equal(applied.body.metadata.labels?.['app.kubernetes.io/managed-by'], undefined);
    assert.deepEqual(applied.body.spec, icn.spec);
    await waitFor('the finalizer', async () => {
      const c = await kube.env.admin<{ metadata: { finalizers?: string[] } }>(
        'GET',
        `${API}/namespaces/${ns}/clusters/${cluster}`,
      );
      return c.body.metadata.finalizers?.includes('bpa.akraino.org/cluster') ? true : undefined;
    });

    // kubectl delete of the cluster's objects. The reference installer, as KUD, refuses to
    // remove every master of a cluster: the removal fails, and the deletion is held, reported.
    for (const p of [
      `clusters/${cluster}`,
      `provisionings/${icn.metadata.name}`,
      `softwares/${cluster}-software`,
    ])
      await kube.env.admin('DELETE', `${API}/namespaces/${ns}/${p}`);
    await waitFor(
      'the failed removal reported',
      async () => (/"action":"remove-nodes"[^\n]*INSTALLER_FAILED/.test(stderr) ? true : undefined),
      120_000,
      500,
    );
    const held = await kube.env.admin<{ metadata: Record<string, unknown> }>(
      'GET',
      `${API}/namespaces/${ns}/clusters/${cluster}`,
    );
    assert.equal(held.status, 200);
    assert.deepEqual(held.body.metadata['finalizers'], ['bpa.akraino.org/cluster']);
    // The finalizer removed by hand (docs/gitops.md): the object goes, bpa forgets the
    // cluster and its nodes keep running.
    const put = await kube.env.admin('PUT', `${API}/namespaces/${ns}/clusters/${cluster}`, {
      ...held.body,
      metadata: { ...held.body.metadata, finalizers: [] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    await waitFor(
      'the cluster forgotten',
      async () =>
        /the objects of the cluster are gone without its finalizer/.test(stderr) ? true : undefined,
      60_000,
      500,
    ).catch((err: unknown) => {
      const said = stderr
        .split('\n')
        .filter((l) => /"level":(40|50)|reconcile (started|finished)|forgot|finalizer/.test(l))
        .filter((l) => !/"trigger":"retry"/.test(l))
        .slice(-12)
        .map((l) => l.slice(0, 300))
        .join('\n');
      throw new Error(`${String(err)}\n${said}`);
    });
    assert.equal(
      (await kube.env.admin('GET', `${API}/namespaces/${ns}/clusters/${cluster}`)).status,
      404,
    );
    // Still there: the node answers (it was never removed).
    const alive = await lab!.exec(hosts[0]!.name, ['true']);
    assert.equal(alive.stderr, '');
  });
});
