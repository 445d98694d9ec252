// --kube-status on a real kube-apiserver, as bpa's service account with only deploy/rbac.yaml's
// grants: the real Reconciler (planner, engine, reports) over in-memory nodes and installer
// (test/fakes/ports.ts) writes the site's objects, their status and Events; an operator's
// kubectl (the admin) reads, waits, edits and annotates them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { kstatus } from '../../../src/report/kube/kstatus.js';
import { KubeStatusWriter, REQUESTED_AT_ANNOTATION } from '../../../src/report/kube/writer.js';
import { requestReconcile } from '../../../src/report/kube/request.js';
import { watchReconcileRequests } from '../../../src/serve/reconcile-requests.js';
import { silentLogger } from '../../../src/util/log.js';
import { useRealKube } from '../../k8s/envtest.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith, writeSite, type SiteSpec } from '../../fakes/site.js';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The Argo CD health script of docs/kubernetes-status.md, as an operator copies it. */
function argoHealthScript(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'kubernetes-status.md'), 'utf8');
  const m = /```lua\n([\s\S]*?)```/.exec(doc);
  if (!m?.[1]) throw new Error('docs/kubernetes-status.md has no lua block');
  return m[1];
}

/** A JSON value as a Lua table constructor (strings in long brackets: no escapes to get wrong). */
function luaValue(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return `[==[${v}]==]`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map(luaValue).join(', ')}}`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `[ ${luaValue(k)} ] = ${luaValue(x)}`)
    .join(', ')}}`;
}

/** Runs the health script as Argo CD does (a chunk with the global obj, returning hs). */
async function argoHealth(o: unknown): Promise<{ status: string; message: string }> {
  const chunk = `obj = ${luaValue(o)}\nlocal function health()\n${argoHealthScript()}\nend\nlocal r = health()\nio.write(r.status, "\\t", r.message or "")\n`;
  const { stdout } = await run('lua5.1', ['-e', chunk]);
  const [status = '', message = ''] = stdout.split('\t');
  return { status, message };
}

interface Obj {
  metadata: {
    name: string;
    generation: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: Array<{ manager: string; operation: string }>;
  };
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    conditions?: Array<{
      type: string;
      status: string;
      reason: string;
      message: string;
      observedGeneration: number;
    }>;
    nodes?: string;
    nodeStatuses?: Array<{ name: string; phase: string }>;
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    planHash?: string;
    lastHandledReconcileAt?: string;
    kubeconfigSecretRef?: { name: string };
    history?: Array<{ totalReconciliations: number; lastReconciledStatus: string }>;
    lastOperations?: unknown[];
    [other: string]: unknown;
  };
}

interface KubeEvent {
  reason: string;
  type: string;
  note: string;
  regarding: { kind: string; name: string };
  series?: { count: number };
  reportingController: string;
}

export const V1: SiteSpec = {
  nodes: [
    { name: 'master-1', roles: ['master'], host: 0 },
    { name: 'worker-1', roles: ['worker'], host: 1 },
  ],
  masterSoftware: ['jq=1.6-2.1ubuntu3'],
  workerSoftware: ['curl'],
  siteSpec: ['  prune: false'],
};

describe('the site in the bootstrap cluster (--kube-status) on a real kube-apiserver', function () {
  this.timeout(120_000);
  const kube = useRealKube({ name: 'kube-status' });
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let ports: ReturnType<typeof fakePorts>;
  let source: FakeSiteSource;
  let writer: KubeStatusWriter;

  const reconciler = (): Reconciler =>
    new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
      kubeStatus: writer,
    });
  const base = (): string => `/apis/bpa.akraino.org/v1alpha1/namespaces/${kube.env.namespace}`;
  const get = async (plural: string, name: string): Promise<Obj> => {
    const r = await kube.env.admin<Obj>('GET', `${base()}/${plural}/${name}`);
    assert.equal(r.status, 200, `${plural}/${name}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const names = async (plural: string): Promise<string[]> => {
    const r = await kube.env.admin<{ items: Obj[] }>('GET', `${base()}/${plural}`);
    return r.body.items.map((i) => i.metadata.name).sort();
  };
  const waitForObject = async (
    plural: string,
    name: string,
    ok: (o: Obj) => boolean,
  ): Promise<Obj> => {
    for (let i = 0; i < 200; i++) {
      const r = await kube.env.admin<Obj>('GET', `${base()}/${plural}/${name}`);
      if (r.status === 200 && ok(r.body)) return r.body;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`${plural}/${name} never got there`);
  };
  const events = async (): Promise<KubeEvent[]> => {
    const r = await kube.env.admin<{ items: KubeEvent[] }>(
      'GET',
      `/apis/events.k8s.io/v1/namespaces/${kube.env.namespace}/events`,
    );
    return r.body.items;
  };
  /** kubectl as the operator (cluster admin), in the test's namespace. */
  const kubectl = (...args: string[]): Promise<{ stdout: string; stderr: string }> =>
    run(
      'kubectl',
      ['--kubeconfig', kube.env.server.adminKubeconfigPath, '-n', kube.env.namespace, ...args],
      {
        timeout: 60_000,
      },
    );
  const condition = (
    o: Obj,
    type: string,
  ): NonNullable<Obj['status']>['conditions'] extends Array<infer C> | undefined
    ? C | undefined
    : never => o.status?.conditions?.find((c) => c.type === type);

  before(async function () {
    try {
      await run('kubectl', ['version', '--client']);
    } catch {
      // The operator's side of every test is kubectl itself.
      console.log('    skipped: no kubectl on PATH');
      this.skip();
    }
  });

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-kube-status-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    await writeSite(siteDir, V1);
    ports = fakePorts(new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'], curl: ['7.88.1-10'] }));
    source = new FakeSiteSource(siteDir);
    writer = new KubeStatusWriter(kube.env.bpaKubeConfig(), kube.env.namespace, silentLogger(), {
      instance: 'test',
      kubeconfigSecrets: true,
    });
  });
  afterEach(async () => {
    // Each test starts from an empty namespace: bpa's objects and Events of the one before go.
    for (const plural of ['sites', 'clusters', 'provisionings', 'softwares'])
      await kube.env.admin('DELETE', `${base()}/${plural}`);
    await kube.env.admin(
      'DELETE',
      `/apis/events.k8s.io/v1/namespaces/${kube.env.namespace}/events`,
    );
    await rm(tmp, { recursive: true, force: true });
  });

  it('a provisioning reconcile makes kubectl wait --for=condition=Ready return, and kubectl get shows READY, STATUS, NODES, REVISION', async () => {
    // The first attempt fails: the objects exist, not Ready.
    ports.installer.next({ kind: 'fail', output: 'unreachable' });
    const r = reconciler();
    assert.equal((await r.reconcile('startup')).result, 'failed');
    // The operator (or a Flux healthCheck) waits; the retry provisions the cluster.
    const waiting = kubectl(
      'wait',
      '--for=condition=Ready',
      'clusters.bpa.akraino.org/east',
      '--timeout=60s',
    );
    await new Promise((res) => setTimeout(res, 500));
    const summary = await r.reconcile('retry');
    assert.equal(summary.result, 'applied', JSON.stringify(summary.error));
    assert.match((await waiting).stdout, /cluster.bpa.akraino.org\/east condition met/);

    assert.deepEqual(await names('sites'), ['test-site']);
    assert.deepEqual(await names('clusters'), ['east']);
    assert.deepEqual(await names('provisionings'), ['east-provisioning']);
    assert.deepEqual(await names('softwares'), ['east-software']);

    const cluster = await get('clusters', 'east');
    assert.equal(cluster.metadata.labels?.['app.kubernetes.io/managed-by'], 'bpa');
    assert.equal(cluster.metadata.labels?.['bpa.akraino.org/cluster'], 'east');
    assert.equal(cluster.metadata.labels?.['cluster'], 'east', "the document's own labels");
    assert.equal(cluster.metadata.annotations?.['bpa.akraino.org/revision'], summary.revision);
    assert.equal(cluster.metadata.annotations?.['bpa.akraino.org/source'], 'cluster.yaml');
    assert.ok(
      cluster.metadata.managedFields?.some((f) => f.manager === 'bpa' && f.operation === 'Apply'),
      'server-side applied by field manager bpa',
    );
    assert.deepEqual(cluster.spec, {
      provisioningCR: 'east-provisioning',
      softwareCR: 'east-software',
    });
    const s = cluster.status;
    assert.equal(s?.observedGeneration, cluster.metadata.generation);
    assert.deepEqual(
      s?.conditions?.map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
      [['Ready', 'True', 'ReconciliationSucceeded', cluster.metadata.generation]],
    );
    assert.equal(s?.nodes, '2/2');
    assert.deepEqual(
      s?.nodeStatuses?.map((n) => [n.name, n.phase]),
      [
        ['master-1', 'Ready'],
        ['worker-1', 'Ready'],
      ],
    );
    assert.equal(s?.lastAppliedRevision, summary.revision);
    assert.equal(s?.lastAttemptedRevision, summary.revision);
    assert.match(s?.planHash ?? '', /^[0-9a-f]{12,}$/);
    assert.deepEqual(s?.kubeconfigSecretRef, { name: 'east-kubeconfig' });
    assert.deepEqual(
      s?.history?.map((h) => [h.lastReconciledStatus, h.totalReconciliations]),
      [
        ['ReconciliationSucceeded', 1],
        ['ReconciliationFailed', 1],
      ],
      'the success, then the failed attempt before it (no plan applied yet)',
    );
    assert.ok(s?.lastOperations?.length, 'the last operations');
    assert.doesNotMatch(JSON.stringify(s), /exited|output/, 'no installer output');
    assert.equal(kstatus(cluster).status, 'Current');
    const site = await get('sites', 'test-site');
    assert.equal(condition(site, 'Ready')?.status, 'True');
    const prov = await get('provisionings', 'east-provisioning');
    assert.equal(condition(prov, 'Ready')?.status, 'True');

    const table = (await kubectl('get', 'clusters.bpa.akraino.org')).stdout;
    const [head, row] = table.trim().split('\n');
    assert.match(head ?? '', /^NAME\s+READY\s+STATUS\s+NODES\s+REVISION\s+AGE$/);
    assert.match(
      row ?? '',
      new RegExp(
        `^east\\s+True\\s+applied provision-cluster.*\\s2/2\\s+${summary.revision}\\s+\\d+s$`,
      ),
    );

    const started = (await events()).filter((e) => e.regarding.name === 'east');
    assert.ok(started.some((e) => e.reason === 'ActionStarted' && e.type === 'Normal'));
    assert.ok(started.some((e) => e.reason === 'ActionSucceeded'));
    assert.ok(started.some((e) => e.reason === 'ActionFailed' && e.type === 'Warning'));
    assert.ok(started.every((e) => e.reportingController === 'bpa.akraino.org/bpa'));
  });

  it('while the apply runs, the cluster (created at once) reads Reconciling, kstatus InProgress', async () => {
    const hold = new AbortController();
    ports.installer.next({ kind: 'hang', signal: hold.signal });
    const r = reconciler();
    const running = r.reconcile('startup');
    await ports.installer.started;
    const during = await waitForObject(
      'clusters',
      'east',
      (o) => condition(o, 'Reconciling')?.status === 'True',
    );
    assert.deepEqual(
      during.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['Ready', 'Unknown', 'Progressing', 'applying provision-cluster, install-packages'],
        ['Reconciling', 'True', 'Progressing', 'applying provision-cluster, install-packages'],
      ],
    );
    assert.equal(kstatus(during).status, 'InProgress');
    await assert.rejects(
      kubectl('wait', '--for=condition=Ready', 'clusters.bpa.akraino.org/east', '--timeout=1s'),
      /timed out/,
    );
    hold.abort();
    await running;
    const after = await get('clusters', 'east');
    assert.equal(condition(after, 'Reconciling'), undefined, 'the outcome replaces the progress');
    assert.notEqual(kstatus(after).status, 'InProgress');
  });

  it('a failing installer makes Stalled True with a reason and an Event, kubectl wait for Ready times out, and retries aggregate into one Event', async () => {
    ports.installer.next(
      { kind: 'fail', output: 'TASK [kubespray] fatal: secret-token-123' },
      { kind: 'fail', output: 'TASK [kubespray] fatal: secret-token-123' },
    );
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'failed');
    const cluster = await get('clusters', 'east');
    const stalled = condition(cluster, 'Stalled');
    assert.equal(stalled?.status, 'True');
    assert.equal(stalled?.reason, 'InstallerFailed');
    assert.equal(condition(cluster, 'Ready')?.status, 'False');
    assert.equal(condition(cluster, 'Ready')?.reason, 'ReconciliationFailed');
    assert.equal(kstatus(cluster).status, 'Failed');
    assert.doesNotMatch(JSON.stringify(cluster.status), /secret-token|fatal/);
    await assert.rejects(
      kubectl('wait', '--for=condition=Ready', 'clusters.bpa.akraino.org/east', '--timeout=3s'),
      /timed out/,
    );

    // The retry fails the same way: still one ActionFailed Event, its series counting two.
    const r = reconciler();
    await r.reconcile('retry');
    const failed = (await events()).filter((e) => e.reason === 'ActionFailed');
    assert.equal(failed.length, 1, JSON.stringify(failed));
    assert.equal(failed[0]?.type, 'Warning');
    assert.equal(failed[0]?.regarding.kind, 'Cluster');
    assert.match(
      failed[0]?.note ?? '',
      /provision-cluster failed at step installer: INSTALLER_FAILED/,
    );
    assert.doesNotMatch(failed[0]?.note ?? '', /secret-token/);
    // One recorder per serve: a second failure of the same process aggregates.
    await r.reconcile('retry');
    const again = (await events()).filter((e) => e.reason === 'ActionFailed');
    assert.equal(again.length, 1);
    assert.equal(again[0]?.series?.count, 2, JSON.stringify(again[0]));
  });

  it('an edited spec is put back at the next reconcile, with a SpecReverted Event', async () => {
    const serve = reconciler();
    await serve.reconcile('startup');
    const before = await get('provisionings', 'east-provisioning');
    await kubectl(
      'patch',
      'provisionings.bpa.akraino.org/east-provisioning',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          KUDPlugins: ['virtlet'],
          masters: [{ 'master-9': { 'mac-address': '52:54:00:aa:00:09' } }],
        },
      }),
    );
    const edited = await get('provisionings', 'east-provisioning');
    assert.notDeepEqual(edited.spec, before.spec);
    assert.equal(kstatus(edited).status, 'InProgress', 'an edit is a generation not yet observed');

    // Nothing new in git: the reconcile is skipped, the spec still goes back.
    const r = await serve.reconcile('interval');
    assert.equal(r.result, 'skipped');
    const after = await get('provisionings', 'east-provisioning');
    assert.deepEqual(after.spec, before.spec);
    assert.equal(after.status?.observedGeneration, after.metadata.generation);
    assert.equal(kstatus(after).status, 'Current');
    const reverted = (await events()).filter((e) => e.reason === 'SpecReverted');
    assert.equal(reverted.length, 1);
    assert.equal(reverted[0]?.regarding.name, 'east-provisioning');
    assert.match(reverted[0]?.note ?? '', /cluster\.yaml/);
  });

  it("removing a cluster's documents from the site removes its objects", async () => {
    await reconciler().reconcile('startup');
    assert.deepEqual(await names('clusters'), ['east']);
    // A person unrelated to bpa keeps an object of the same kind: it is not bpa's to delete.
    const made = await kube.env.admin('POST', `${base()}/clusters`, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'hand-made' },
      spec: { provisioningCR: 'hand-made-provisioning' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    await writeSite(siteDir, { ...V1, cluster: 'west' });
    const r = await reconciler().reconcile('webhook');
    assert.notEqual(r.result, 'skipped');
    assert.deepEqual(await names('clusters'), ['hand-made', 'west']);
    assert.deepEqual(await names('provisionings'), ['west-provisioning']);
    assert.deepEqual(await names('softwares'), ['west-software']);
    assert.deepEqual(await names('sites'), ['test-site']);
  });

  it("the status write keeps another writer's fields and conditions while both write at once", async () => {
    const r = reconciler();
    await r.reconcile('startup');
    let stop = false;
    let writes = 0;
    // Another controller (a monitoring tool) writes its own condition and field, again and again.
    const other = (async () => {
      while (!stop) {
        await kubectl(
          'patch',
          'clusters.bpa.akraino.org/east',
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify({ status: { monitoredAt: `t${++writes}` } }),
        ).catch((err: unknown) => {
          throw new Error(`the other writer failed: ${String(err)}`);
        });
      }
    })();
    await kubectl(
      'patch',
      'clusters.bpa.akraino.org/east',
      '--subresource=status',
      '--type=json',
      '-p',
      JSON.stringify([
        {
          op: 'add',
          path: '/status/conditions/-',
          value: {
            type: 'Monitored',
            status: 'True',
            reason: 'Probed',
            message: 'ok',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        },
      ]),
    );
    for (let i = 0; i < 5; i++) await r.reconcile('interval');
    stop = true;
    await other;
    assert.ok(writes > 1, 'the writers overlapped');
    const cluster = await get('clusters', 'east');
    assert.equal(cluster.status?.monitoredAt, `t${writes}`, "the other writer's last field");
    assert.equal(
      condition(cluster, 'Monitored')?.status,
      'True',
      `the other writer's condition: ${JSON.stringify(cluster)}`,
    );
    assert.equal(condition(cluster, 'Ready')?.status, 'True');
    assert.equal(cluster.status?.history?.[0]?.totalReconciliations, 6);
  });

  it("a status write refused with 409 (another writer in between) is read and written again, keeping that writer's fields", async () => {
    const serve = reconciler();
    await serve.reconcile('startup');
    let interfered = 0;
    writer = new KubeStatusWriter(kube.env.bpaKubeConfig(), kube.env.namespace, silentLogger(), {
      instance: 'test',
      kubeconfigSecrets: true,
      // The other writer acts after bpa read the status and before bpa writes it, once.
      beforeStatusWrite: async (kind) => {
        if (kind !== 'Cluster' || interfered++) return;
        await kubectl(
          'patch',
          'clusters.bpa.akraino.org/east',
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify({ status: { probe: { healthy: true } } }),
        );
      },
    });
    const again = new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
      kubeStatus: writer,
    });
    await again.reconcile('startup');
    assert.equal(writer.statusConflicts, 1, 'the first write met a 409');
    const cluster = await get('clusters', 'east');
    assert.deepEqual(cluster.status?.probe, { healthy: true });
    assert.equal(condition(cluster, 'Ready')?.status, 'True');
    assert.equal(cluster.status?.history?.[0]?.totalReconciliations, 2, 'written after the 409');
  });

  it('a status pass reads each object once: the apply answers it (git), or the read for its status write serves the pass (operator mode)', async () => {
    await reconciler().reconcile('startup');
    let objects = 0;
    for (const plural of ['sites', 'clusters', 'provisionings', 'softwares'])
      objects += (await names(plural)).length;
    assert.ok(objects >= 4, `the site's objects: ${objects}`);
    for (const statusOnly of [false, true]) {
      // Every request bpa makes is authenticated by its KubeConfig: the GETs are counted there.
      const kc = kube.env.bpaKubeConfig();
      const reads: string[] = [];
      const authenticate = kc.applySecurityAuthentication.bind(kc);
      kc.applySecurityAuthentication = (context) => {
        if (String(context.getHttpMethod()) === 'GET')
          reads.push(new URL(context.getUrl()).pathname);
        return authenticate(context);
      };
      writer = new KubeStatusWriter(kc, kube.env.namespace, silentLogger(), {
        instance: 'test',
        kubeconfigSecrets: true,
        statusOnly,
      });
      await reconciler().reconcile('startup');
      // Of one object each (`<plural>/<name>`): git mode's prune lists the kinds besides.
      const objectReads = reads.filter((p) => /^[^/]+\/[^/]+$/.test(p.slice(base().length + 1)));
      assert.equal(
        objectReads.length,
        objects,
        `${statusOnly ? 'operator' : 'git'} mode, one read per object: ${objectReads.join(', ')}`,
      );
      const cluster = await get('clusters', 'east');
      assert.equal(condition(cluster, 'Ready')?.status, 'True');
      assert.equal(cluster.status?.history?.[0]?.totalReconciliations, statusOnly ? 3 : 2);
    }
  });

  it('a suspended cluster is Ready False, reason Suspended, and kstatus Current: never Failed', async () => {
    await writeSite(siteDir, { ...V1, clusterSpec: ['  suspend: true'] });
    await reconciler().reconcile('startup');
    const cluster = await get('clusters', 'east');
    assert.equal(condition(cluster, 'Ready')?.reason, 'Suspended');
    assert.equal(condition(cluster, 'Stalled'), undefined);
    assert.equal(condition(cluster, 'Reconciling'), undefined);
    assert.deepEqual(kstatus(cluster), { status: 'Current', message: 'Resource is current' });
    // The suspend was an edit of the spec in git: the generation seen is the one written.
    assert.equal(cluster.status?.observedGeneration, cluster.metadata.generation);
  });

  it('changes waiting for a maintenance window are Reconciling (kstatus InProgress), never Failed, with a WaitingForWindow Event', async () => {
    let clock = Date.parse('2026-11-24T10:00:00Z'); // a Tuesday
    const r = new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      now: () => clock,
      resyncIntervalMs: 3_600_000,
      ports,
      kubeStatus: writer,
    });
    assert.equal((await r.reconcile('startup')).result, 'applied');
    await writeSite(siteDir, {
      ...V1,
      masterSoftware: ['jq=1.7.1-3'],
      siteSpec: [
        '  maintenanceWindows:',
        "    - { days: [sat], start: '01:00', end: '05:00', timezone: UTC }",
      ],
    });
    clock += 60_000;
    await r.reconcile('webhook');
    const cluster = await get('clusters', 'east');
    assert.deepEqual(
      cluster.status?.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'False', 'OutsideMaintenanceWindow'],
        ['Reconciling', 'True', 'OutsideMaintenanceWindow'],
      ],
    );
    assert.equal(kstatus(cluster).status, 'InProgress');
    assert.deepEqual(
      (await events()).filter((e) => e.reason === 'SpecReverted'),
      [],
      'a spec changed in git is no revert',
    );
    const software = await get('softwares', 'east-software');
    assert.deepEqual(software.spec.masterSoftware, [{ jq: { version: '1.7.1-3' } }]);
    const waiting = (await events()).filter((e) => e.reason === 'WaitingForWindow');
    assert.equal(waiting.length, 1);
    assert.match(waiting[0]?.note ?? '', /opens at 2026-11-28T01:00:00/);
  });

  it('the requestedAt annotation (bpa reconcile --now) starts a full reconcile at once and is echoed', async () => {
    const r = reconciler();
    await r.reconcile('startup');
    const seen: string[] = [];
    const stop = watchReconcileRequests(
      kube.env.bpaKubeConfig(),
      kube.env.namespace,
      (_site, at) => seen.push(at),
      silentLogger(),
    );
    try {
      const value = '2026-11-28T01:00:00.000Z';
      assert.deepEqual(
        await requestReconcile(kube.env.bpaKubeConfig(), kube.env.namespace, value),
        ['test-site'],
      );
      for (let i = 0; i < 100 && !seen.length; i++) await new Promise((res) => setTimeout(res, 50));
      assert.deepEqual(seen, [value], 'the watch saw the request');
      // Nothing changed in git; an interval would skip. The request makes it a full run.
      const summary = await r.reconcile('interval');
      assert.notEqual(summary.result, 'skipped');
      const site = await get('sites', 'test-site');
      assert.equal(site.metadata.annotations?.[REQUESTED_AT_ANNOTATION], value);
      assert.equal(site.status?.lastHandledReconcileAt, value);
      assert.equal((await get('clusters', 'east')).status?.lastHandledReconcileAt, value);
      const said = (await events()).filter((e) => e.reason === 'ReconcileRequested');
      assert.deepEqual(
        said.map((e) => [e.regarding.kind, e.regarding.name, e.note]),
        [['Site', 'test-site', `reconcile requested at ${value} handled`]],
      );
      // Handled: the next interval is an ordinary one again.
      assert.equal((await r.reconcile('interval')).result, 'skipped');
    } finally {
      stop();
    }
  });

  it('the Argo CD health script of the docs (Debian lua5.1) reads what bpa wrote', async function () {
    try {
      await run('lua5.1', ['-v']);
    } catch {
      console.log('    skipped: lua5.1 is not installed (apt-get install -y lua5.1)');
      this.skip();
    }
    ports.installer.next({ kind: 'fail', output: 'boom' });
    const r = reconciler();
    await r.reconcile('startup');
    const failed = await argoHealth(await get('clusters', 'east'));
    assert.equal(failed.status, 'Degraded');
    assert.match(failed.message, /^InstallerFailed: provision-cluster failed/);

    await r.reconcile('retry');
    const ready = await get('clusters', 'east');
    assert.deepEqual(await argoHealth(ready), {
      status: 'Healthy',
      message: 'applied provision-cluster, install-packages',
    });
    assert.equal((await argoHealth(await get('sites', 'test-site'))).status, 'Healthy');

    await kubectl(
      'patch',
      'clusters.bpa.akraino.org/east',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { suspend: true } }),
    );
    const edited = await argoHealth(await get('clusters', 'east'));
    assert.deepEqual(edited, {
      status: 'Progressing',
      message: 'Waiting for bpa to observe generation 2',
    });

    await writeSite(siteDir, { ...V1, clusterSpec: ['  suspend: true'] });
    await r.reconcile('webhook');
    assert.equal((await argoHealth(await get('clusters', 'east'))).status, 'Suspended');
  });
});
