// Operator mode (bpa serve --source kubernetes) against a real kube-apiserver: the site is the
// bpa objects of the watched namespace, read by list+watch as bpa's service account with
// exactly deploy/rbac.yaml's grants.
import assert from 'node:assert/strict';
import { execFile, spawnSync, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createRun } from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import { KubernetesSource } from '../../../src/source/kubernetes-source.js';
import { formatText, problemsJson } from '../../../src/cli/output/problems.js';
import { silentLogger } from '../../../src/util/log.js';
import { configWith } from '../../fakes/site.js';
import { BPA, kill, ROOT, spawnBpa, waitFor } from '../apply/harness.js';
import { useRealKube, type KubeTestEnv } from '../../k8s/envtest.js';
import { createObject, createObjectsOf } from '../../k8s/kube-objects.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

const LEASES = join(ROOT, 'sites', 'example', 'leases', 'dnsmasq.leases');
const BPA_API = '/apis/bpa.akraino.org/v1alpha1';

/** kubectl, when this machine has one: the kube cache's, else the PATH's. */
function kubectl(): string | undefined {
  for (const bin of ['/var/cache/bpa/kube/current/bin/kubectl', 'kubectl']) {
    const r = spawnSync(bin, ['version', '--client'], { encoding: 'utf8', timeout: 20_000 });
    if (r.status === 0) return bin;
  }
  return undefined;
}

function run(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { timeout: 60_000, env: { ...process.env, BPA_STATE_DIR: '', ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** The example site with its hosts listed from the cluster, ready for `kubectl apply -k`. */
async function siteDir(dir: string): Promise<string> {
  const site = join(dir, 'site');
  await cp(join(ROOT, 'sites', 'example', 'clusters'), join(site, 'clusters'), { recursive: true });
  await writeFile(
    join(site, 'site.yaml'),
    stringify({
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Site',
      metadata: { name: 'edge-lab-1' },
      spec: { inventory: { source: 'kubernetes' }, ssh: { user: 'ubuntu' } },
    }),
  );
  const resources = [
    'site.yaml',
    ...['cluster-east', 'cluster-west'].flatMap((c) =>
      ['cluster', 'provisioning', 'software'].map((k) => `clusters/${c}/${k}.yaml`),
    ),
  ];
  // What Flux's kustomize-controller or `kubectl apply -k` reads; bpa's own load skips it.
  await writeFile(join(site, 'kustomization.yaml'), stringify({ resources }));
  await writeFile(join(site, '.bpaignore'), 'kustomization.yaml\n');
  return site;
}

async function adminKubeconfig(env: KubeTestEnv, dir: string): Promise<string> {
  const file = join(dir, 'admin.kubeconfig');
  await writeFile(file, env.adminKubeConfig().exportConfig(), { mode: 0o600 });
  return file;
}

/** Applies the site's documents into the namespace: kubectl apply -k, else the API. */
async function applySite(env: KubeTestEnv, site: string, dir: string): Promise<string> {
  const bin = kubectl();
  if (bin) {
    const r = await run(bin, [
      '--kubeconfig',
      await adminKubeconfig(env, dir),
      'apply',
      '-k',
      site,
      '-n',
      env.namespace,
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return 'kubectl apply -k';
  }
  for (const f of ['site.yaml', 'clusters/cluster-east', 'clusters/cluster-west']) {
    const files = f.endsWith('.yaml')
      ? [f]
      : ['cluster', 'provisioning', 'software'].map((k) => `${f}/${k}.yaml`);
    for (const file of files) await createObjectsOf(env, join(site, file));
  }
  return 'the API (no kubectl here)';
}

function source(env: KubeTestEnv, stateDir: string, namespace = env.namespace): KubernetesSource {
  return new KubernetesSource({
    kubeConfig: env.bpaKubeConfig(),
    namespaces: [namespace],
    stateDir,
    hosts: { kubeConfig: env.bpaKubeConfig(), namespaces: [env.namespace] },
    leaseFiles: [LEASES],
    log: silentLogger(),
  });
}

async function planThrough(env: KubeTestEnv, src: KubernetesSource, stateDir: string) {
  const ctx = createRun({
    site: { kind: 'source', source: src, trigger: 'startup', resyncIntervalMs: 3_600_000 },
    configFor: configWith({
      stateDir,
      kubeconfig: env.bpaKubeconfigPath,
      namespaces: [env.namespace],
      leases: [LEASES],
    }),
    env: {},
    log: silentLogger(),
  });
  await runSteps(ctx, 'plan');
  return ctx;
}

describe('operator mode: the site from the cluster (real kube-apiserver)', function () {
  this.timeout(180_000);
  // serve applies the example's clusters once cluster-west is set aside: their hosts'
  // addresses must be unreachable.
  requireLoopbackOnly();
  const kube = useRealKube({ name: 'operator', metal3: true });
  let tmp = '';
  const children: ChildProcess[] = [];
  const sources: KubernetesSource[] = [];
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-operator-'));
    await createObjectsOf(kube.env, join(ROOT, 'sites', 'example', 'inventory', 'hosts.yaml'));
  });
  after(async () => {
    for (const s of sources) await s.stop();
    for (const c of children) await kill(c);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** bpa serve started with `args`, once it says where it listens; `log()` is its stderr so far. */
  async function startServe(
    args: string[],
  ): Promise<{ child: ChildProcess; url: string; log: () => string }> {
    const child = spawnBpa(args);
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      30_000,
    );
    return { child, url, log: () => stderr };
  }

  it('a site applied into the cluster (kubectl apply -k) plans to the same hash as bpa plan of its directory', async () => {
    const site = await siteDir(tmp);
    const fromDir = await run(BPA, [
      'plan',
      site,
      '-o',
      'json',
      '--state',
      join(tmp, 's-dir'),
      '--kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--inventory-namespace',
      kube.env.namespace,
      '--leases',
      LEASES,
    ]);
    assert.equal(fromDir.code, 2, fromDir.stdout + fromDir.stderr);
    const dirPlan = JSON.parse(fromDir.stdout) as { hash: string; clusters: unknown[] };
    assert.equal(dirPlan.clusters.length, 2);
    const how = await applySite(kube.env, site, tmp);
    console.log(`      (site applied with ${how})`);
    const src = source(kube.env, join(tmp, 's-op'));
    sources.push(src);
    await src.start();
    const ctx = await planThrough(kube.env, src, join(tmp, 's-op'));
    assert.deepEqual(ctx.validation, []);
    assert.equal(ctx.plan?.hash, dirPlan.hash);
    // Nothing the server added reached the site's documents.
    const written = await readFile(
      join(
        tmp,
        's-op',
        'kubernetes',
        'site',
        'objects',
        kube.env.namespace,
        'Provisioning',
        'provisioning-east.yaml',
      ),
      'utf8',
    );
    assert.doesNotMatch(
      written,
      /resourceVersion|managedFields|uid|creationTimestamp|last-applied/,
    );
  });

  it('a problem names the object and its field path, not a file, in every output format', async () => {
    // A second Provisioning claiming edge-1's MAC: a site-wide problem the CRD cannot see.
    await createObject(kube.env, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Provisioning',
      metadata: { name: 'provisioning-dup', labels: { cluster: 'cluster-dup' } },
      spec: { masters: [{ 'master-1': { 'mac-address': '52:54:00:10:00:06' } }] },
    });
    const src = source(kube.env, join(tmp, 's-bad'));
    sources.push(src);
    await src.start();
    const ctx = await planThrough(kube.env, src, join(tmp, 's-bad'));
    // Only cluster-west's object has the error: it is blocked, the rest of the site goes on.
    assert.deepEqual(ctx.blocked?.clusters, ['cluster-west']);
    const errors = (ctx.blocked?.problems ?? []).filter((p) => p.severity === 'error');
    assert.ok(errors.length > 0, JSON.stringify(ctx.validation));
    // The later of the two claims is the duplicate: edge-1's, of provisioning-west.
    const dup = errors.find((p) => p.code === 'DUPLICATE_MAC');
    assert.ok(dup, JSON.stringify(errors));
    assert.equal(dup.object, 'Provisioning/provisioning-west');
    assert.equal(dup.field, 'spec.masters[0].edge-1.mac-address');
    assert.equal(dup.file, undefined);
    assert.equal(dup.line, undefined);
    assert.match(
      formatText([dup]),
      /^Provisioning\/provisioning-west spec\.masters\[0\]\.edge-1\.mac-address: error DUPLICATE_MAC: /,
    );
    assert.equal(problemsJson([dup])[0]?.['field'], 'spec.masters[0].edge-1.mac-address');
  });

  it('serve --source kubernetes: the report, the status API and bpa status; changes of the objects, hosts and leases start a reconcile, status-only updates do not', async () => {
    const state = join(tmp, 's-serve');
    const leases = join(tmp, 'dnsmasq.leases');
    await cp(LEASES, leases);
    const { child, url, log } = await startServe([
      'serve',
      '--source',
      'kubernetes',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
      '--kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--inventory-namespace',
      kube.env.namespace,
      '--leases',
      leases,
      '--state',
      state,
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
    ]);
    await waitFor(
      'the first reconcile',
      async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
      30_000,
    );
    // The duplicate MAC of the test before: rejected, reported on its object.
    const report = await readFile(join(state, 'kubernetes', 'site', 'status', 'site.yaml'), 'utf8');
    assert.match(report, /object: Provisioning\/provisioning-west\n/);
    assert.match(report, /field: spec\.masters\[0\]\.edge-1\.mac-address\n/);
    assert.doesNotMatch(report, /file:|line:/);
    const status = await run(BPA, ['status', '--server', url]);
    assert.match(status.stdout + status.stderr, /Rejected|rejected/);

    const runs = async (): Promise<number> => {
      const text = await (await fetch(`${url}/metrics`)).text();
      let n = 0;
      for (const m of text.matchAll(/^bpa_reconcile_total\{([^}]*)\} (\d+)/gm))
        if (/trigger="kubernetes"/.test(m[1] ?? '')) n += Number(m[2]);
      return n;
    };
    const more = async (than: number, what: string): Promise<number> =>
      waitFor(what, async () => ((await runs()) > than ? runs() : undefined), 10_000, 50);
    const ns = kube.env.namespace;
    const dupPath = `${BPA_API}/namespaces/${ns}/provisionings/provisioning-dup`;
    const patch = async (p: string, body: unknown, sub = ''): Promise<void> => {
      const r = await kube.env.admin('GET', p);
      const obj = r.body as Record<string, unknown>;
      const put = await kube.env.admin('PUT', `${p}${sub}`, { ...obj, ...(body as object) });
      assert.equal(put.status, 200, JSON.stringify(put.body));
    };

    // A change of the spec (a new generation): one reconcile, started within a second.
    const n0 = await runs();
    const t0 = Date.now();
    await patch(dupPath, {
      spec: { masters: [{ 'master-1': { 'mac-address': '52:54:00:10:00:99' } }] },
    });
    const n1 = await more(n0, 'a reconcile after the spec changed');
    assert.ok(Date.now() - t0 < 3_000, `took ${Date.now() - t0} ms`);

    // A status-only update: no reconcile.
    await patch(dupPath, { status: { phase: 'Whatever' } }, '/status');
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(await runs(), n1, 'a status-only update started a reconcile');

    // A BareMetalHost's labels (what the plan reads): a reconcile.
    const hostPath = `/apis/metal3.io/v1alpha1/namespaces/${ns}/baremetalhosts/node-01`;
    const host = (await kube.env.admin('GET', hostPath)).body as {
      metadata: { labels?: Record<string, string> };
    };
    await patch(hostPath, {
      metadata: { ...host.metadata, labels: { ...host.metadata.labels, rack: 'r9' } },
    });
    const n2 = await more(n1, 'a reconcile after a host changed');

    // A burst of 100 changes: at most 2 reconciles.
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const p = `${BPA_API}/namespaces/${ns}/softwares`;
        const r = await kube.env.admin('POST', p, {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'Software',
          metadata: { name: `burst-${i}` },
          spec: { masterSoftware: ['curl'] },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }),
    );
    const n3 = await more(n2, 'a reconcile after the burst');
    await new Promise((r) => setTimeout(r, 2_000));
    assert.ok((await runs()) - n2 <= 2, `${(await runs()) - n2} reconciles for 100 changes`);
    assert.ok(n3 > n2);

    // A changed lease file: a reconcile.
    const n4 = await runs();
    await writeFile(leases, (await readFile(leases, 'utf8')) + '\n');
    await utimes(leases, new Date(), new Date());
    await more(n4, 'a reconcile after the lease file changed');

    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, log().slice(-2000));
  });

  it('/readyz fails while a watched namespace cannot be listed or watched (no RBAC there)', async () => {
    const other = `${kube.env.namespace}-norbac`;
    await createObject(kube.env, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: other },
    });
    const { url } = await startServe([
      'serve',
      '--source',
      'kubernetes',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
      '--watch-namespace',
      other,
      '--state',
      join(tmp, 's-norbac'),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
    ]);
    const ready = await waitFor(
      'a refused readiness',
      async () => {
        const r = await fetch(`${url}/readyz`);
        const body = (await r.json()) as { status: string; reason?: string };
        // Before the first refusal the reason is "not listed yet": wait for the refusal.
        return body.status === 'not-ready' && /HTTP 403/.test(body.reason ?? '')
          ? { code: r.status, body }
          : undefined;
      },
      30_000,
    );
    assert.equal(ready.code, 503);
    assert.match(ready.body.reason ?? '', new RegExp(`namespace ${other}.*HTTP 403`));
    await kube.env.admin('DELETE', `/api/v1/namespaces/${other}`);
  });
});
