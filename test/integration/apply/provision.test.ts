import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import {
  applied,
  bpa,
  installerPid,
  journal,
  kill,
  labArgs,
  labReady,
  logs,
  marker,
  pidAlive,
  spawnBpa,
  waitFor,
} from './harness.js';
import { updateLabSite, writeLabSite, type LabSiteNode } from './lab-site.js';

const THREE: LabSiteNode[] = [
  { name: 'master-1', roles: ['master'], host: 0 },
  { name: 'worker-1', roles: ['worker'], host: 1 },
  { name: 'worker-2', roles: ['worker'], host: 2 },
];

/** Provisioning against real sshd hosts with the real ansible reference installer. */
describe('apply: provisioning on lab hosts', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let tmp: string;
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 4, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-provision-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const fresh = async (name: string, nodes = THREE): Promise<{ site: string; state: string }> => {
    if (!lab) throw new Error('no lab');
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'lab', nodes },
      await mkdtempIn(tmp, `${name}-site`),
    );
    return { site, state: join(tmp, `${name}-state`) };
  };

  it('provisions a 3-host cluster from site YAML, then adds a worker through the scale path only', async () => {
    if (!lab) return;
    const { site, state } = await fresh('e2e');
    const first = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /✓ provision-cluster master-1, worker-1, worker-2 \(6 steps\)/);
    assert.match(await marker(lab, 'h1'), /kube-master/);
    assert.match(await marker(lab, 'h2'), /kube-node/);
    assert.doesNotMatch(await marker(lab, 'h4'), /./, 'the spare host is untouched');
    const kubeconfig = join(state, 'clusters', 'lab', 'kubeconfig');
    assert.equal((await stat(kubeconfig)).mode & 0o777, 0o600);
    assert.match(
      await readFile(kubeconfig, 'utf8'),
      new RegExp(`server: https://${lab.hosts[0]?.ip.replace(/\./g, '\\.')}:6443`),
    );
    assert.match(
      await readFile(join(state, 'clusters', 'lab', 'lab-configmap.yaml'), 'utf8'),
      new RegExp(`MASTER_master-1: "${lab.hosts[0]?.ip}"`),
    );
    const state1 = JSON.parse(
      await readFile(join(state, 'clusters', 'lab', 'applied.json'), 'utf8'),
    ) as { nodes: unknown[]; revision: string };
    assert.equal(state1.nodes.length, 3);
    assert.match(state1.revision, /^sha256:/);

    const again = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /No changes/);

    const before = await Promise.all(['h1', 'h2', 'h3'].map((h) => marker(lab!, h)));
    await updateLabSite(site, lab.hosts, {
      cluster: 'lab',
      nodes: [...THREE, { name: 'worker-3', roles: ['worker'], host: 3 }],
    });
    const scaled = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(scaled.code, 0, scaled.stdout + scaled.stderr);
    assert.match(scaled.stdout, /✓ add-nodes worker-3/);
    assert.match(await marker(lab, 'h4'), /kube-node/);
    assert.deepEqual(
      await Promise.all(['h1', 'h2', 'h3'].map((h) => marker(lab!, h))),
      before,
      'existing nodes are not touched by the scale path',
    );
    const runs = await logs(state, 'lab');
    assert.equal(runs.filter((f) => f.startsWith('provision-')).length, 1);
    assert.equal(runs.filter((f) => f.startsWith('scale-')).length, 1);
    assert.match(
      await readFile(
        join(
          state,
          'clusters',
          'lab',
          'logs',
          runs.find((f) => f.startsWith('scale-'))!,
        ),
        'utf8',
      ),
      /worker-3/,
    );

    // A plugin added to KUDPlugins: only the add-on path runs, for that plugin.
    await updateLabSite(site, lab.hosts, {
      cluster: 'lab',
      nodes: [...THREE, { name: 'worker-3', roles: ['worker'], host: 3 }],
      plugins: ['multus'],
    });
    const plugin = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(plugin.code, 0, plugin.stdout + plugin.stderr);
    assert.match(plugin.stdout, /✓ install-plugins \(2 steps\)/);
    assert.match((await lab.exec('h1', ['cat', '/etc/bpa-reference/plugins'])).stdout, /multus/);
    assert.equal((await logs(state, 'lab')).filter((f) => f.startsWith('addon-')).length, 1);
  });

  it('an installer that exits non-zero: nothing recorded; the next run converges without repeating done steps', async () => {
    if (!lab) return;
    const { site, state } = await fresh('fail');
    const failed = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)], {
      BPA_REFERENCE_FAIL: '1',
    });
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /✗ provision-cluster/);
    assert.match(failed.stdout, /INSTALLER_FAILED: installer provision for cluster lab exited \d+/);
    assert.equal(applied(state, 'lab'), false);
    const ok = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /✓ provision-cluster .* \(6 steps, 2 already done\)/);
    const steps = await journal(state, 'lab');
    assert.deepEqual(
      steps.filter((s) => s.step === 'ssh-access').map((s) => s.attempt),
      [1],
      'ssh-access ran once',
    );
    assert.deepEqual(
      steps.filter((s) => s.step === 'installer').map((s) => [s.status, s.attempt]),
      [['done', 2]],
    );
  });

  it('an installer that hangs is stopped at its timeout, with every process it started; the next run converges', async () => {
    if (!lab) return;
    const { site, state } = await fresh('hang');
    const started = Date.now();
    const hung = await bpa(
      ['reconcile', '--once', site, ...labArgs(lab, state, ['--installer-timeout', '3'])],
      { BPA_REFERENCE_SLEEP: '120' },
    );
    assert.equal(hung.code, 1);
    assert.ok(Date.now() - started < 60_000, 'stopped near the timeout, not after the sleep');
    assert.match(
      hung.stdout,
      /INSTALLER_TIMEOUT: installer provision for cluster lab did not finish within 3 s/,
    );
    const pid = await installerPid(state, 'lab');
    if (pid) assert.equal(pidAlive(pid), false, 'the installer process is gone');
    const ok = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /2 already done/);
  });

  it("a host's sshd stops mid-run: the installer fails on it; after it is back, the next run converges", async () => {
    if (!lab) return;
    const { site, state } = await fresh('sshd');
    const child = spawnBpa(['reconcile', '--once', site, ...labArgs(lab, state)], {
      BPA_REFERENCE_SLEEP: '4',
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    await waitFor('the installer step', async () =>
      (await journal(state, 'lab')).some((s) => s.step === 'installer' && s.status === 'running')
        ? true
        : undefined,
    );
    await lab.stopSshd('h2');
    try {
      assert.equal(await exited, 1);
      assert.match(out, /✗ provision-cluster/);
      assert.match(out, /UNREACHABLE|unreachable/);
      assert.equal(applied(state, 'lab'), false);
    } finally {
      await lab.startSshd('h2');
    }
    const ok = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /2 already done/);
  });

  it('bpa killed (SIGKILL) during the installer: the next run stops the orphan and converges without repeating done steps', async () => {
    if (!lab) return;
    const { site, state } = await fresh('kill-installer');
    const child = spawnBpa(['reconcile', '--once', site, ...labArgs(lab, state)], {
      BPA_REFERENCE_SLEEP: '60',
    });
    await waitFor('the installer step', async () =>
      (await journal(state, 'lab')).some((s) => s.step === 'installer' && s.status === 'running')
        ? true
        : undefined,
    );
    const orphan = await waitFor('the installer pid', () => installerPid(state, 'lab'));
    await kill(child);
    assert.ok(pidAlive(orphan), 'the installer outlived bpa');
    const ok = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /✓ provision-cluster .* \(6 steps, 2 already done\)/);
    assert.equal(pidAlive(orphan), false, 'the orphaned installer was stopped');
    assert.match(ok.stderr, /still running; stopping it/);
  });

  it('bpa killed (SIGKILL) during the post-install steps: the installer is not run again', async () => {
    if (!lab) return;
    const { site, state } = await fresh('kill-post');
    const kube: FakeKube = await startFakeKube();
    try {
      const args = [
        'reconcile',
        '--once',
        site,
        ...labArgs(lab, state, [
          '--bootstrap-kubeconfig',
          kube.kubeconfigPath,
          '--bootstrap-namespace',
          'bpa',
        ]),
      ];
      // Every request for a Secret hangs: bpa stops inside the kubeconfig step, whatever the pace.
      kube.hold({ pathPrefix: '/api/v1/namespaces/bpa/secrets' });
      const child = spawnBpa(args);
      await waitFor(
        'the kubeconfig step',
        async () =>
          (await journal(state, 'lab')).some(
            (s) => s.step === 'kubeconfig' && s.status === 'running',
          )
            ? true
            : undefined,
        120_000,
        20,
      );
      await kill(child);
      assert.equal(applied(state, 'lab'), false);
      kube.release();
      const ok = await bpa(args);
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /\(6 steps, 3 already done\)/);
      assert.equal(
        (await logs(state, 'lab')).filter((f) => f.startsWith('provision-')).length,
        1,
        'one installer run in all',
      );
      const secret = kube.get('v1', 'Secret', 'bpa', 'lab-kubeconfig') as
        { data?: Record<string, string> } | undefined;
      assert.match(Buffer.from(secret?.data?.['value'] ?? '', 'base64').toString(), /kind: Config/);
      const cm = kube.get('v1', 'ConfigMap', 'bpa', 'lab-configmap') as
        { data?: Record<string, string> } | undefined;
      assert.equal(cm?.data?.['WORKER_worker-2'], lab.hosts[2]?.ip);
    } finally {
      await kube.stop();
    }
  });

  it('a changed host key stops work on that host until the key is re-pinned', async () => {
    if (!lab) return;
    const { site, state } = await fresh('hostkey');
    await lab.stopSshd('h2');
    const first = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    await lab.startSshd('h2');
    assert.equal(first.code, 1);
    assert.match(first.stdout, /worker-1.*SSH_UNREACHABLE|SSH_UNREACHABLE.*worker-1/s);
    await lab.rotateHostKey('h1');
    const markerBefore = await marker(lab, 'h1');
    const changed = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(changed.code, 1);
    assert.match(changed.stdout, /HOST_KEY_CHANGED/);
    assert.match(changed.stdout, /master-1/);
    assert.equal(applied(state, 'lab'), false);
    assert.equal(await marker(lab, 'h1'), markerBefore, 'nothing ran on the host');
    // The operator checks the new key and removes the old pin.
    const pins = join(state, 'ssh', 'known_hosts.json');
    const pinned = JSON.parse(await readFile(pins, 'utf8')) as Record<string, unknown>;
    delete pinned[`${lab.hosts[0]?.ip}:22`];
    await writeFile(pins, JSON.stringify(pinned));
    const ok = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  });

  it('two bpa processes on one state directory never apply at once', async () => {
    if (!lab) return;
    const { site, state } = await fresh('lock');
    const child = spawnBpa(['reconcile', '--once', site, ...labArgs(lab, state)], {
      BPA_REFERENCE_SLEEP: '8',
    });
    try {
      await waitFor('the first apply', async () =>
        (await journal(state, 'lab')).length ? true : undefined,
      );
      const second = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /STATE_LOCKED: another bpa \(pid \d+, since .*\) is applying/);
    } finally {
      await kill(child);
    }
  });

  describe('bad input', () => {
    it('an unreachable host: a clear error, nothing applied', async () => {
      if (!lab) return;
      const { site, state } = await fresh('unreachable');
      await lab.setLink('h3', false);
      try {
        const r = await bpa(['reconcile', '--once', site, ...labArgs(lab, state)]);
        assert.equal(r.code, 1);
        assert.match(
          r.stdout,
          /SSH_UNREACHABLE: cluster lab: no SSH access to 1 node\(s\): worker-2: /,
        );
        assert.equal(applied(state, 'lab'), false);
      } finally {
        await lab.setLink('h3', true);
      }
    });

    it('a missing key file: a clear error before any host is touched', async () => {
      if (!lab) return;
      const { site, state } = await fresh('nokey');
      const r = await bpa([
        'reconcile',
        '--once',
        site,
        ...labArgs(lab, state),
        '--ssh-key',
        join(tmp, 'no-such-key'),
      ]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /SSH_KEY_MISSING: SSH key .*no-such-key/);
      assert.equal(applied(state, 'lab'), false);
      assert.deepEqual(await journal(state, 'lab'), []);
    });
  });
});

describe('apply: bootstrap with default credentials', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let tmp: string;
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 1, authorizeKey: false, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-bootstrap-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("a wrong bootstrap password is a clear error; the right one installs bpa's key once", async () => {
    if (!lab) return;
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'boot', nodes: [{ name: 'master-1', roles: ['master'], host: 0 }] },
      await mkdtempIn(tmp, 'site'),
    );
    const state = join(tmp, 'state');
    const creds = join(tmp, 'creds.yaml');
    const args = (extra: string[]): string[] => [
      'reconcile',
      '--once',
      site,
      ...labArgs(lab!, state, [
        '--ssh-user',
        lab!.user,
        '--bootstrap-credentials',
        creds,
        ...extra,
      ]),
    ];
    await writeFile(creds, `username: ${lab.user}\npassword: wrong-${lab.password}\n`, {
      mode: 0o600,
    });
    const wrong = await bpa(args([]));
    assert.equal(wrong.code, 1);
    assert.match(wrong.stdout, /SSH_AUTH/);
    assert.doesNotMatch(
      wrong.stdout + wrong.stderr,
      new RegExp(lab.password),
      'the password never appears',
    );
    assert.equal(applied(state, 'boot'), false);
    await writeFile(creds, `username: ${lab.user}\npassword: ${lab.password}\n`, { mode: 0o600 });
    // bpa's own key: generated in the state directory on first use.
    // bpa's own key this time: generated in the state directory on first use.
    const ownKey = labArgs(lab, state, [
      '--ssh-user',
      lab.user,
      '--bootstrap-credentials',
      creds,
    ]).filter((a, i, all) => a !== '--ssh-key' && all[i - 1] !== '--ssh-key');
    const ok = await bpa(['reconcile', '--once', site, ...ownKey]);
    assert.match(
      ok.stderr,
      /bpa's key installed with the bootstrap credentials/,
      ok.stdout + ok.stderr,
    );
    const steps = await journal(state, 'boot');
    assert.equal(
      steps.find((s) => s.step === 'ssh-access')?.status,
      'done',
      'key login works after the bootstrap',
    );
    const keys = await lab.exec('h1', ['cat', `/home/${lab.user}/.ssh/authorized_keys`]);
    assert.equal(
      keys.stdout
        .trim()
        .split('\n')
        .filter((l) => l.endsWith(' bpa')).length,
      1,
    );
    // The bootstrap is not repeated: key login works from now on.
    const again = await bpa(['reconcile', '--once', site, ...ownKey]);
    assert.doesNotMatch(again.stderr, /installed with the bootstrap credentials/);
  });
});

async function mkdtempIn(parent: string, name: string): Promise<string> {
  return mkdtemp(join(parent, `${name}-`));
}
