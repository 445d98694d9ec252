import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useRealKube } from '../../k8s/envtest.js';
import { createObjectsOf } from '../../k8s/kube-objects.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BPA = join(ROOT, 'bin', 'bpa');

function bpa(
  args: string[],
  cwd = ROOT,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      BPA,
      args,
      { cwd, timeout: 30_000, env: { ...process.env, BPA_STATE_DIR: '', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

interface JsonPlan {
  hash: string;
  changes: boolean;
  clusters: Array<{
    cluster: string;
    hostsIni: string;
    nodes: Array<{
      name: string;
      roles: string[];
      host: string;
      mac: string;
      ip: string;
      change: string;
    }>;
    actions: Array<{ kind: string }>;
  }>;
}

describe('bpa plan as a process', function () {
  this.timeout(60_000);
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-plan-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('plans the example site: exit 2 (changes), a readable plan, hosts.ini written with --out', async () => {
    const out = join(tmp, 'out');
    const r = await bpa(['plan', 'sites/example', '--state', join(tmp, 'state'), '--out', out]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /cluster cluster-east \(new cluster, to provision\)/);
    assert.match(r.stdout, /^ {2}\+ edge-1 .* master\+worker/m);
    assert.match(r.stdout, /Plan [0-9a-f]{12}: 2 clusters; 2 to provision/);
    const ini = await readFile(join(out, 'cluster-west', 'hosts.ini'), 'utf8');
    assert.match(ini, /^\[kube-master\]\nedge-1$/m);
    assert.doesNotMatch(ini, /\[virtlet\]/, 'virtlet-vm clusters have no virtlet group');
  });

  it('-o json, then a state that matches: exit 0 and no actions, same input same hash', async () => {
    const state = join(tmp, 'state2');
    const first = await bpa(['plan', 'sites/example', '-o', 'json', '--state', state]);
    assert.equal(first.code, 2);
    const plan = JSON.parse(first.stdout) as JsonPlan;
    const again = JSON.parse(
      (await bpa(['plan', 'sites/example', '-o', 'json', '--state', state])).stdout,
    ) as JsonPlan;
    assert.equal(again.hash, plan.hash);
    // Record the plan as applied, as a successful apply would.
    const software = {
      'cluster-east': {
        master: [{ name: 'htop' }, { name: 'jq', version: '1.6-2.1ubuntu3' }, { name: 'curl' }],
        worker: [{ name: 'curl' }, { name: 'ethtool' }, { name: 'tmux' }],
      },
      'cluster-west': {
        master: [{ name: 'htop' }, { name: 'curl' }],
        worker: [{ name: 'curl' }, { name: 'tmux' }],
      },
    } as const;
    const { StateStore } = await import('../../../src/state/store.js');
    const store = new StateStore(state);
    for (const c of plan.clusters) {
      await store.writeCluster({
        cluster: c.cluster,
        appliedAt: '2026-11-22T00:00:00Z',
        nodes: c.nodes.map((n) => ({
          name: n.name,
          roles: n.roles as Array<'master' | 'worker'>,
          host: n.host,
          mac: n.mac,
          ip: n.ip,
        })),
        plugins: c.cluster === 'cluster-east' ? ['onap4k8s', 'emco'] : [],
        packages: software[c.cluster as keyof typeof software] as never,
      });
    }
    const none = await bpa(['plan', 'sites/example', '--state', state]);
    assert.equal(none.code, 0, none.stdout);
    assert.match(none.stdout, /No changes/);
  });

  it('exit 1 with located errors when a node cannot be placed', async () => {
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
    const prov = join(site, 'clusters', 'cluster-east', 'provisioning.yaml');
    const text = await readFile(prov, 'utf8');
    await writeFile(prov, text.replace(/cpu: 24/g, 'cpu: 512'));
    const r = await bpa(['plan', site, '--state', join(tmp, 'state3')]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(
      r.stdout,
      /provisioning\.yaml:\d+:\d+: error NODE_UNPLACED: cluster cluster-east: worker-1: needs cpu>=512/,
    );
    assert.match(r.stdout, /cluster cluster-east \(blocked\)/);
  });

  it('exit 1 on an invalid site and on a missing path', async () => {
    const site = join(tmp, 'bad');
    await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
    await writeFile(join(site, 'broken.yaml'), 'kind: [\n');
    assert.equal((await bpa(['plan', site])).code, 1);
    assert.equal((await bpa(['plan', join(tmp, 'nope')])).code, 1);
  });
});

describe('bpa plan with the inventory from a real Kubernetes API', function () {
  this.timeout(60_000);
  const kube = useRealKube({ name: 'plan', metal3: true });
  it('lists BareMetalHosts through --kubeconfig and plans the same placements as the embedded inventory', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'bpa-plan-kube-'));
    const { namespace, bpaKubeconfigPath } = kube.env;
    try {
      await createObjectsOf(kube.env, join(ROOT, 'sites', 'example', 'inventory', 'hosts.yaml'));
      const site = join(tmp, 'site');
      await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
      await rm(join(site, 'inventory'), { recursive: true });
      const fromApi = await bpa([
        'plan',
        site,
        '-o',
        'json',
        '--state',
        join(tmp, 's1'),
        '--kubeconfig',
        bpaKubeconfigPath,
        '--inventory-namespace',
        namespace,
      ]);
      assert.equal(fromApi.code, 2, fromApi.stdout + fromApi.stderr);
      assert.equal(fromApi.stderr, '');
      // The earlier spelling still works, with a one-line note on stderr.
      const deprecated = await bpa([
        'plan',
        site,
        '-o',
        'json',
        '--state',
        join(tmp, 's3'),
        '--kubeconfig',
        bpaKubeconfigPath,
        '--namespace',
        namespace,
      ]);
      assert.equal(deprecated.code, 2, deprecated.stdout + deprecated.stderr);
      assert.equal(
        deprecated.stderr,
        'bpa: --namespace is deprecated; use --inventory-namespace\n',
      );
      const embedded = await bpa([
        'plan',
        'sites/example',
        '-o',
        'json',
        '--state',
        join(tmp, 's2'),
      ]);
      const placements = (out: string): string[] =>
        (JSON.parse(out) as JsonPlan).clusters.flatMap((c) =>
          c.nodes.map((n) => `${c.cluster}/${n.name}=${n.host}@${n.ip}`),
        );
      // The hosts came from the server (without them nothing would be placed), from the test's
      // namespace where the embedded inventory says metal3.
      const ours = placements(fromApi.stdout);
      assert.ok(ours.length > 0);
      assert.ok(ours.every((p) => p.includes(`=${namespace}/`)));
      assert.deepEqual(
        ours.map((p) => p.replace(`=${namespace}/`, '=metal3/')),
        placements(embedded.stdout),
      );
      assert.deepEqual(placements(deprecated.stdout), placements(fromApi.stdout));
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('bpa plan --inventory DIR and bpa apply --plan-hash', function () {
  this.timeout(60_000);
  // `apply` on the example site: its hosts' addresses must be unreachable.
  requireLoopbackOnly();
  let tmp = '';
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-plan-dir-'));
  });
  after(async () => {
    // Skipped outside a loopback-only namespace: before() did not run.
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('reads BareMetalHosts from --inventory DIR instead of the site', async () => {
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
    await cp(join(site, 'inventory'), join(tmp, 'inventory'), { recursive: true });
    await rm(join(site, 'inventory'), { recursive: true });
    const without = await bpa(['plan', site, '--state', join(tmp, 's0')]);
    assert.equal(without.code, 1, 'no hosts: nodes cannot be placed');
    assert.match(without.stdout, /NODE_UNPLACED/);
    const r = await bpa([
      'plan',
      site,
      '--state',
      join(tmp, 's1'),
      '--inventory',
      join(tmp, 'inventory'),
    ]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /cluster cluster-east \(new cluster, to provision\)/);
  });

  it('apply refuses a plan whose hash is not the reviewed one, before touching anything', async () => {
    const state = join(tmp, 's2');
    const r = await bpa(['apply', 'sites/example', '--state', state, '--plan-hash', 'deadbeef']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /nothing applied: the plan has changed since it was reviewed: its hash is now [0-9a-f]{12}, not deadbeef/,
    );
    const journal = await readFile(
      join(state, 'clusters', 'cluster-east', 'journal.json'),
      'utf8',
    ).catch(() => undefined);
    assert.equal(journal, undefined, 'no step was started');
  });

  it('apply refuses an empty plan hash (an unset $APPROVED), flag or variable, before anything runs', async () => {
    const state = join(tmp, 's3');
    const flag = await bpa(['apply', 'sites/example', '--state', state, '--plan-hash', '']);
    assert.equal(flag.code, 64, flag.stdout + flag.stderr);
    assert.match(
      flag.stderr,
      /CONFIG_INVALID: setting planHash: "" from the flag --plan-hash is empty, which would turn this safeguard off/,
    );
    const fromEnv = await bpa(['apply', 'sites/example', '--state', state], ROOT, {
      BPA_PLAN_HASH: '',
    });
    assert.equal(fromEnv.code, 1, fromEnv.stdout + fromEnv.stderr);
    assert.match(
      fromEnv.stderr,
      /CONFIG_INVALID: setting planHash: "" from the environment variable BPA_PLAN_HASH is empty/,
    );
    assert.equal(flag.stdout + fromEnv.stdout, '', 'no plan was made');
    await assert.rejects(stat(state), /ENOENT/, 'the state directory was not even created');
  });
});
