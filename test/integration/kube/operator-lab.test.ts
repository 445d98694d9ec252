// The seeds' workflow in operator mode, end to end: a real ICN Provisioning CR (MACs replaced
// by the lab's) and ICN's Software CR (its packages replaced by the lab repository's) applied
// into a real kube-apiserver; bpa serve --source kubernetes provisions the cluster on lab hosts
// with the reference installer, publishes the node ConfigMap and the kubeconfig Secret there,
// upgrades the packages when the Software CR changes (within the Site's maintenance windows,
// node by node as the Cluster's rollout says), and removes the cluster when the Cluster is
// deleted with deletionPolicy: Delete.
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startAptRepo, type AptRepo } from '../../lab/apt-repo.js';
import { startLab, type Lab } from '../../lab/lab.js';
import {
  cordonPatches,
  readyNode,
  startFakeKube,
  type FakeKube,
} from '../../fakes/kube-api-server.js';
import { labArgs, packageLabReady, ROOT, spawnBpa, waitFor } from '../apply/harness.js';
import { writeLabSite } from '../apply/lab-site.js';
import { useRealKube } from '../../k8s/envtest.js';
import { createObjectsOf } from '../../k8s/kube-objects.js';

const ICN = join(ROOT, '..', 'shared', 'real-world', 'icn');
const API = '/apis/bpa.akraino.org/v1alpha1';
const MARKER = '/etc/bpa-reference/roles';

type Condition = { type: string; status: string; reason?: string; message?: string };
type Doc = Record<string, unknown> & { metadata: Record<string, unknown> };

describe('operator mode on lab hosts: the seeds workflow (real kube-apiserver)', function () {
  this.timeout(900_000);
  const kube = useRealKube({ name: 'oplab' });
  let lab: Lab | undefined;
  let repo: AptRepo | undefined;
  let app: FakeKube | undefined;
  let tmp = '';
  let child: ChildProcess | undefined;
  let stderr = '';
  // Set by the first test, used by the next ones.
  let ns = '';
  let cluster = '';
  let provisioning = '';
  let software: Doc | undefined;
  let site: Doc | undefined;

  before(async function () {
    if (!(await packageLabReady())) this.skip();
    // Each host with its own /etc and package database, where the reference installer leaves
    // its markers and apt installs.
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    repo = await startAptRepo(lab, [
      { name: 'bpa-test-a', version: '1.0-1' },
      { name: 'bpa-test-a', version: '2.0-1' },
      { name: 'bpa-test-b', version: '1.0-1' },
    ]);
    tmp = await mkdtemp(join(tmpdir(), 'bpa-oplab-'));
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
    }
    await app?.stop();
    await repo?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** `kubectl <args>` as the cluster's admin, in the test's namespace. */
  const kubectl = async (...args: string[]): Promise<string> =>
    (
      await promisify(execFile)('kubectl', [
        '--kubeconfig',
        kube.env.server.adminKubeconfigPath,
        '-n',
        ns,
        ...args,
      ])
    ).stdout;
  /** `kubectl apply -f` of these documents. */
  const kubectlApply = async (...docs: unknown[]): Promise<string> => {
    const file = join(tmp, `apply-${Date.now()}.yaml`);
    await writeFile(file, docs.map((d) => stringify(d)).join('---\n'));
    return kubectl('apply', '-f', file);
  };
  const object = async <T = { status?: { conditions?: Condition[] } }>(
    path: string,
  ): Promise<{ status: number; body: T }> =>
    kube.env.admin<T>('GET', `${API}/namespaces/${ns}/${path}`);
  const condition = async (path: string, type: string): Promise<Condition | undefined> =>
    (await object(path)).body.status?.conditions?.find((c) => c.type === type);
  const installed = async (host: string, pkg: string): Promise<string | null> => {
    const r = await lab!
      .exec(host, ['dpkg-query', '-W', '-f=${db:Status-Abbrev} ${Version}', pkg])
      .catch(() => undefined);
    const [status, version] = (r?.stdout ?? '').trim().split(/\s+/);
    return status?.[1] === 'i' && version ? version : null;
  };
  const hasMarker = async (host: string): Promise<boolean> =>
    await lab!.exec(host, ['test', '-e', MARKER]).then(
      () => true,
      () => false,
    );
  /** bpa's warnings and errors, the last lines: why a wait ran out. */
  const said = (): string =>
    stderr
      .split('\n')
      .filter((l) => /"level":(40|50)|reconcile (started|finished)|finalizer|forgot/.test(l))
      .filter((l) => !/"trigger":"retry"/.test(l))
      .slice(-15)
      .map((l) => l.slice(0, 400))
      .join('\n');
  const explain = (err: unknown): never => {
    throw new Error(`${String(err)}\n${said()}`);
  };
  /** A window of every day that is closed now (it opens in two hours), in UTC. */
  const closedWindow = (): { start: string; end: string } => {
    const h = new Date().getUTCHours();
    const hh = (n: number): string => `${String(n % 24).padStart(2, '0')}:00`;
    return { start: hh(h + 2), end: hh(h + 3) };
  };

  it("kubectl apply of ICN's Provisioning and Software CRs provisions the cluster and installs the packages; kubectl wait for Ready returns; its ConfigMap and Secret are in the cluster", async () => {
    const hosts = lab?.hosts ?? [];
    // The lab's hosts as BareMetalHosts (an --inventory directory).
    const labSite = await writeLabSite(
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
    cluster = icn.metadata.labels['cluster'] as string;
    provisioning = icn.metadata.name;
    (icn.spec.masters[0] as Record<string, Record<string, string>>)['master-1']!['mac-address'] =
      hosts[0]!.mac;
    (icn.spec.workers[0] as Record<string, Record<string, string>>)['worker-1']!['mac-address'] =
      hosts[1]!.mac;
    // ICN's Software CR as it is (a name, or a name with a version), its packages replaced by
    // the lab repository's: version A of bpa-test-a on every node, pinned.
    const icnSoftware = parse(
      await readFile(join(ICN, 'bpa_v1alpha1_software_cr.f5f35ba.yaml'), 'utf8'),
    ) as Doc & { metadata: { labels: Record<string, string> } };
    software = {
      ...icnSoftware,
      metadata: {
        ...icnSoftware.metadata,
        name: `${cluster}-software`,
        labels: { ...icnSoftware.metadata.labels, cluster },
      },
      spec: {
        masterSoftware: ['bpa-test-b', { 'bpa-test-a': { version: '1.0-1' } }],
        workerSoftware: [{ 'bpa-test-a': { version: '1.0-1' } }],
      },
    };
    // The Site: the lab's apt repository, and a maintenance window closed now. It does not
    // hold the provisioning of a new cluster (maintenanceGate: running).
    site = {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Site',
      metadata: { name: 'lab' },
      spec: { packageMirror: repo!.sourceLine, maintenanceWindows: [closedWindow()] },
    };
    const docs = join(tmp, 'cr.yaml');
    await writeFile(
      docs,
      [
        icn,
        software,
        {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'Cluster',
          metadata: { name: cluster, labels: { cluster } },
          spec: {
            provisioningCR: icn.metadata.name,
            softwareCR: `${cluster}-software`,
            deletionPolicy: 'Delete',
            // A running cluster's package changes: node by node, each cordoned and drained.
            rollout: {
              maxUnavailable: 1,
              drain: { timeout: '30s' },
              healthCheck: { timeout: '30s', command: ['dpkg-query', '-W', 'bpa-test-a'] },
            },
          },
        },
        site,
      ]
        .map((d) => stringify(d))
        .join('---\n'),
    );
    await createObjectsOf(kube.env, docs);
    ns = kube.env.namespace;
    child = spawnBpa([
      'serve',
      '--source',
      'kubernetes',
      ...labArgs(lab as Lab, join(tmp, 'state'), [
        '--inventory',
        join(labSite, 'inventory'),
        '--bootstrap-kubeconfig',
        kube.env.bpaKubeconfigPath,
        '--bootstrap-namespace',
        ns,
        '--prune',
        // The lab's apt repository is unsigned ([trusted=yes]): a mirror only the operator may allow.
        '--allow-site-commands',
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
      const waited = await promisify(execFile)('kubectl', [
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
      if (waited) assert.match(waited.stdout, /condition met/);
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
    // The packages of the Software CR, from the lab's repository, on each node by its role.
    assert.equal(await installed(hosts[0]!.name, 'bpa-test-a'), '1.0-1');
    assert.equal(await installed(hosts[0]!.name, 'bpa-test-b'), '1.0-1');
    assert.equal(await installed(hosts[1]!.name, 'bpa-test-a'), '1.0-1');
    assert.equal(await installed(hosts[1]!.name, 'bpa-test-b'), null, 'a master package only');
  });

  it('kubectl apply of a changed Software CR upgrades the packages: held outside the maintenance window, then node by node (master first) once the Site opens one; Ready again, and the Events name the upgrade', async () => {
    assert.ok(software && site && cluster, 'provisioned by the test before');
    const hosts = lab!.hosts;
    // The application cluster's API, for cordon and drain: the reference installer runs no
    // Kubernetes, so its kubeconfig Secret is pointed at a protocol fake with the two nodes.
    app = await startFakeKube();
    for (const name of ['master-1', 'worker-1']) app.put(readyNode(name));
    const secretPath = `/api/v1/namespaces/${ns}/secrets/${cluster}-kubeconfig`;
    const secret = await kube.env.admin<Doc & { data: Record<string, string> }>('GET', secretPath);
    const put = await kube.env.admin('PUT', secretPath, {
      ...secret.body,
      data: {
        ...secret.body.data,
        value: Buffer.from(await readFile(app.kubeconfigPath, 'utf8')).toString('base64'),
      },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));

    // Version B of bpa-test-a, on every node.
    const spec = software.spec as { masterSoftware: unknown[]; workerSoftware: unknown[] };
    const bumped = (list: unknown[]): unknown[] =>
      list.map((p) =>
        typeof p === 'object' && p !== null && 'bpa-test-a' in p
          ? { 'bpa-test-a': { version: '2.0-1' } }
          : p,
      );
    software = {
      ...software,
      spec: {
        masterSoftware: bumped(spec.masterSoftware),
        workerSoftware: bumped(spec.workerSoftware),
      },
    };
    assert.match(await kubectlApply(software), /configured/);
    // Outside the Site's window: planned, not applied, and the Cluster says until when.
    await waitFor(
      'the upgrade deferred to the window',
      async () =>
        (await condition(`clusters/${cluster}`, 'Ready'))?.reason === 'OutsideMaintenanceWindow'
          ? true
          : undefined,
      180_000,
      500,
    ).catch(explain);
    const waiting = await condition(`clusters/${cluster}`, 'Ready');
    assert.equal(waiting?.status, 'False');
    assert.match(
      waiting?.message ?? '',
      /upgrade-packages deferred to the next maintenance window/,
    );
    for (const h of hosts) assert.equal(await installed(h.name, 'bpa-test-a'), '1.0-1');
    assert.deepEqual(cordonPatches(app.requests), [], 'no node touched');

    // The Site opens a window now (a whole day): the upgrade runs.
    const spec2 = site.spec as Record<string, unknown>;
    site = { ...site, spec: { ...spec2, maintenanceWindows: [{ start: '00:00', end: '00:00' }] } };
    assert.match(await kubectlApply(site), /configured/);
    await waitFor(
      'bpa-test-a 2.0-1 on every node',
      async () => {
        for (const h of hosts)
          if ((await installed(h.name, 'bpa-test-a')) !== '2.0-1') return undefined;
        return true;
      },
      240_000,
      1000,
    ).catch(explain);
    assert.match(
      await kubectl(
        'wait',
        '--for=condition=Ready',
        `clusters.bpa.akraino.org/${cluster}`,
        '--timeout=180s',
      ),
      /condition met/,
    );
    // The rollout's order: the master, then the worker, each cordoned and uncordoned in turn.
    assert.deepEqual(cordonPatches(app.requests), [
      'master-1=true',
      'master-1=false',
      'worker-1=true',
      'worker-1=false',
    ]);
    assert.equal(await installed(hosts[0]!.name, 'bpa-test-b'), '1.0-1', 'unchanged');
    // The status and the Events name the upgrade.
    const status = (
      await object<{ status: { lastOperations?: unknown; nodes?: string } }>(`clusters/${cluster}`)
    ).body.status;
    assert.match(JSON.stringify(status.lastOperations), /upgrade-packages/);
    assert.equal(status.nodes, '2/2');
    const events = await kube.env.admin<{
      items: Array<{ reason: string; note: string; regarding: { kind: string; name: string } }>;
    }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
    const notes = events.body.items
      .filter((e) => e.regarding.kind === 'Cluster' && e.regarding.name === cluster)
      .map((e) => `${e.reason}: ${e.note}`);
    assert.ok(
      notes.some((n) =>
        /^ActionSucceeded: upgrade-packages \(master-1, worker-1\) finished$/.test(n),
      ),
      notes.join('\n'),
    );
    for (const node of ['master-1', 'worker-1'])
      assert.ok(
        notes.includes(`NodeDrained: node ${node} cordoned and drained for upgrade-packages`),
        notes.join('\n'),
      );
  });

  it('kubectl delete of the cluster with deletionPolicy Delete: remove-cluster resets every node (masters too); a failed reset holds the deletion, Stalled with its reason; then the Secret, the ConfigMap and the object go', async () => {
    assert.ok(cluster, 'provisioned by the test before');
    const hosts = lab!.hosts;
    for (const h of hosts) assert.equal(await hasMarker(h.name), true, `${h.name} in the cluster`);
    // The worker's host cannot be reached: the reset fails before any host is changed.
    await lab!.stopSshd(hosts[1]!.name);
    try {
      // As kubectl delete -f of the CR file: the cluster's three objects.
      await kubectl(
        'delete',
        '--wait=false',
        `clusters.bpa.akraino.org/${cluster}`,
        `provisionings.bpa.akraino.org/${provisioning}`,
        `softwares.bpa.akraino.org/${cluster}-software`,
      );
      const stalled = await waitFor(
        'the failed reset reported on the Cluster',
        async () => {
          const c = await condition(`clusters/${cluster}`, 'Stalled');
          return c?.status === 'True' ? c : undefined;
        },
        240_000,
        1000,
      ).catch(explain);
      assert.equal(stalled.reason, 'INSTALLER_FAILED');
      assert.match(
        stalled.message ?? '',
        /the deletion is held: remove-cluster failed \(INSTALLER_FAILED\)/,
      );
      const held = await object<{
        metadata: { finalizers?: string[]; deletionTimestamp?: string };
      }>(`clusters/${cluster}`);
      assert.equal(held.status, 200);
      assert.ok(held.body.metadata.deletionTimestamp);
      assert.deepEqual(held.body.metadata.finalizers, ['bpa.akraino.org/cluster']);
      assert.equal(await hasMarker(hosts[0]!.name), true, 'nothing reset yet');
    } finally {
      await lab!.startSshd(hosts[1]!.name);
    }
    // The host back: bpa's retry resets every node, forgets the cluster and lets it go.
    await waitFor(
      'the Cluster gone',
      async () => ((await object(`clusters/${cluster}`)).status === 404 ? true : undefined),
      300_000,
      1000,
    ).catch(explain);
    assert.match(stderr, /"action":"remove-cluster"[^\n]*"step":"installer"/);
    assert.doesNotMatch(stderr, /"action":"remove-nodes"/);
    // What the reference installer's reset leaves: no marker on any host, masters included.
    for (const h of hosts) assert.equal(await hasMarker(h.name), false, `${h.name} reset`);
    for (const p of [`secrets/${cluster}-kubeconfig`, `configmaps/${cluster}-configmap`])
      assert.equal((await kube.env.admin('GET', `/api/v1/namespaces/${ns}/${p}`)).status, 404, p);
    for (const p of [`provisionings/${provisioning}`, `softwares/${cluster}-software`])
      assert.equal((await object(p)).status, 404, p);
    await assert.rejects(
      access(join(tmp, 'state', 'clusters', cluster, 'applied.json')),
      /ENOENT/,
      'bpa forgot the cluster',
    );
    // The nodes are still there, reset: a node answers.
    assert.equal((await lab!.exec(hosts[0]!.name, ['true'])).stderr, '');
  });
});
