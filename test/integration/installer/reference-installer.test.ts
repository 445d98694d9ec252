/**
 * The reference installer (installer/reference, real ansible-playbook) driven the way bpa
 * drives an installer: a command template expanded by expandCommand and run by
 * runLocalInstaller, against lab hosts (real sshd in network namespaces). Each host gets its
 * own /etc (installer/reference/lab-host-setup.sh), so the role markers written there are per
 * host and never reach this machine's /etc.
 */
import { strict as assert } from 'node:assert';
import { accessSync, constants, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import {
  expandCommand,
  runLocalInstaller,
  type InstallerVars,
  type RunResult,
} from '../../../src/apply/installer/local.js';
import { canRunLab, startLab, type Lab, type LabHost } from '../../lab/lab.js';

const RUN_SH = fileURLToPath(new URL('../../../installer/reference/run.sh', import.meta.url));
const CLUSTER = `${RUN_SH} cluster {clusterDir} {inventory}`;
const SCALE = `${RUN_SH} scale {clusterDir} {inventory} {nodes}`;
const REMOVE = `${RUN_SH} remove {clusterDir} {inventory} {nodes}`;
const ADDON = `${RUN_SH} addon {clusterDir} {inventory} {plugins}`;
const RESET = `${RUN_SH} reset {clusterDir} {inventory}`;

// Gives each lab host its own /etc, where the markers are written.
const LAB_HOST_SETUP = fileURLToPath(
  new URL('../../../installer/reference/lab-host-setup.sh', import.meta.url),
);

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return dir !== '';
    } catch {
      return false;
    }
  });
}

function kudInventory(hosts: LabHost[], masters: string[], workers: string[]): string {
  return [
    '[all]',
    ...hosts.map((h) => `${h.name} ansible_ssh_host=${h.ip} ansible_ssh_port=22`),
    '',
    '[kube-master]',
    ...masters,
    '',
    '[kube-node]',
    ...workers,
    '',
    '[etcd]',
    ...masters,
    '',
    '[k8s-cluster:children]',
    'kube-node',
    'kube-master',
    '',
  ].join('\n');
}

function kubesprayInventory(hosts: LabHost[], masters: string[], workers: string[]): string {
  return [
    '[all]',
    ...hosts.map((h) => `${h.name} ansible_host=${h.ip} ip=${h.ip} access_ip=${h.ip}`),
    '[kube_control_plane]',
    ...masters,
    '[kube_node]',
    ...workers,
    '[etcd]',
    ...masters,
    '[k8s_cluster:children]',
    'kube_control_plane',
    'kube_node',
    '',
  ].join('\n');
}

/** The marker file as key → value (comments skipped). */
function parseMarker(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z]+): (.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}

describe('reference installer (ansible-playbook against lab hosts)', function () {
  this.timeout(180_000);
  let lab: Lab | undefined;
  let dir = '';
  let hosts: LabHost[] = [];
  let env: Record<string, string> = {};

  before(async function () {
    const check = canRunLab();
    if (!check.ok) {
      console.log(`skipping the reference installer tests: ${check.reason}`);
      this.skip();
    }
    if (!onPath('ansible-playbook')) {
      console.log(
        'skipping the reference installer tests: ansible-playbook is not on PATH (ansible-core)',
      );
      this.skip();
    }
    dir = await mkdtemp(join(tmpdir(), 'bpa-reference-'));
    lab = await startLab({ hosts: 3, hostSetup: LAB_HOST_SETUP });
    hosts = [...lab.hosts];
    env = {
      BPA_SSH_KEY: lab.keyPath,
      BPA_KNOWN_HOSTS: lab.knownHostsPath,
      // ansible's own files on the controller stay in the test's directory.
      HOME: join(dir, 'home'),
    };
    await mkdir(env.HOME as string);
  });

  after(async () => {
    await lab?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const host = (name: string): LabHost => {
    const h = hosts.find((x) => x.name === name);
    if (!h) throw new Error(`no lab host ${name}`);
    return h;
  };

  async function marker(name: string, file = 'roles'): Promise<string | undefined> {
    if (!lab) throw new Error('no lab');
    const path = `/etc/bpa-reference/${file}`;
    const { stdout } = await lab.exec(name, ['sh', '-c', `cat ${path} 2>/dev/null || echo ABSENT`]);
    return stdout === 'ABSENT\n' ? undefined : stdout;
  }

  async function clusterDir(cluster: string, inventory: string): Promise<string> {
    const d = join(dir, 'clusters', cluster);
    await mkdir(d, { recursive: true });
    await writeFile(join(d, 'hosts.ini'), inventory);
    return d;
  }

  async function install(
    template: string,
    cluster: string,
    extra: Partial<InstallerVars> & { env?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<RunResult & { lines: string[]; log: string }> {
    const cdir = join(dir, 'clusters', cluster);
    const vars: InstallerVars = {
      cluster,
      clusterDir: cdir,
      inventory: join(cdir, 'hosts.ini'),
      plugins: extra.plugins ?? [],
      nodes: extra.nodes ?? [],
    };
    const lines: string[] = [];
    const result = await runLocalInstaller(expandCommand(template, vars), {
      cwd: cdir,
      logDir: join(cdir, 'logs'),
      logName: `${template.split(' ')[1]}-${Date.now()}.log`,
      timeoutMs: extra.timeoutMs ?? 150_000,
      env: { ...env, ...extra.env },
      onLine: (l) => lines.push(`[${cluster}] ${l}`),
    });
    return { ...result, lines, log: await readFile(result.logFile, 'utf8') };
  }

  it('provisions a 3-host KUD-flavour cluster: markers on each host, admin.conf', async () => {
    const [h1, h2, h3] = [host('h1'), host('h2'), host('h3')];
    const cdir = await clusterDir('edge-1', kudInventory(hosts, ['h1'], ['h2', 'h3']));
    const t0 = Date.now();
    const result = await install(CLUSTER, 'edge-1');
    console.log(
      `      reference installer, 3 hosts: ${((Date.now() - t0) / 1000).toFixed(1)} s wall`,
    );
    assert.equal(result.exitCode, 0, result.tail);
    assert.match(result.log, /PLAY RECAP/);
    assert.ok(
      result.lines.some((l) => /^\[edge-1\] h1 +: ok=\d+ .*unreachable=0 +failed=0/.test(l)),
    );

    const m1 = parseMarker((await marker('h1')) ?? '');
    assert.equal(m1.cluster, 'edge-1');
    assert.equal(m1.host, 'h1');
    assert.equal(m1.roles, 'master');
    assert.deepEqual(m1.groups?.split(' ').sort(), ['etcd', 'k8s-cluster', 'kube-master']);
    assert.match(m1.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(m1.system ?? '', /^h1 .*\(python\)$/, 'facts gathered on the host itself');
    for (const h of [h2, h3]) {
      const m = parseMarker((await marker(h.name)) ?? '');
      assert.equal(m.host, h.name);
      assert.equal(m.roles, 'worker');
      assert.deepEqual(m.groups?.split(' ').sort(), ['k8s-cluster', 'kube-node']);
    }

    const here = existsSync('/etc/bpa-reference/roles')
      ? readFileSync('/etc/bpa-reference/roles', 'utf8')
      : '';
    assert.doesNotMatch(here, /cluster: edge-1/, "a marker reached this machine's /etc");

    const adminConf = await readFile(join(cdir, 'artifacts', 'admin.conf'), 'utf8');
    assert.match(adminConf, /^# Produced by the bpa reference installer/);
    const kubeconfig = parse(adminConf) as {
      kind: string;
      clusters: Array<{ name: string; cluster: { server: string } }>;
      'current-context': string;
    };
    assert.equal(kubeconfig.kind, 'Config');
    assert.equal(kubeconfig.clusters[0]?.name, 'edge-1');
    assert.equal(kubeconfig.clusters[0]?.cluster.server, `https://${h1.ip}:6443`);
    assert.equal(kubeconfig['current-context'], 'kubernetes-admin@edge-1');
    assert.equal(statSync(join(cdir, 'artifacts', 'admin.conf')).mode & 0o777, 0o600);
  });

  it('scales out with --limit: only the new host is touched', async () => {
    if (!lab) throw new Error('no lab');
    const before = await Promise.all(['h1', 'h2', 'h3'].map((n) => marker(n)));
    const h4 = await lab.addHost();
    hosts.push(h4);
    await writeFile(
      join(dir, 'clusters', 'edge-1', 'hosts.ini'),
      kudInventory(hosts, ['h1'], ['h2', 'h3', h4.name]),
    );
    const result = await install(SCALE, 'edge-1', { nodes: [h4.name] });
    assert.equal(result.exitCode, 0, result.tail);
    assert.match(result.log, /--limit h4/);
    const recap = result.lines.filter((l) => / : ok=\d+/.test(l));
    assert.deepEqual(
      recap.map((l) => l.split(/\s+/)[1]),
      ['h4'],
      'only h4 in the play recap',
    );
    const m4 = parseMarker((await marker('h4')) ?? '');
    assert.equal(m4.roles, 'worker');
    assert.equal(m4.host, 'h4');
    const after = await Promise.all(['h1', 'h2', 'h3'].map((n) => marker(n)));
    assert.deepEqual(after, before, 'the other hosts are untouched');
  });

  it('refuses a scale path without nodes (a template that forgets {nodes})', async () => {
    const result = await install(`${RUN_SH} scale {clusterDir} {inventory}`, 'edge-1');
    assert.equal(result.exitCode, 64);
    assert.match(result.log, /scale needs a comma-separated list of node names/);
    assert.doesNotMatch(result.log, /PLAY/);
  });

  it('installs plugins on the masters only, each recorded once', async () => {
    let result = await install(ADDON, 'edge-1', { plugins: ['multus', 'sriov'] });
    assert.equal(result.exitCode, 0, result.tail);
    result = await install(ADDON, 'edge-1', { plugins: ['sriov', 'ovn4nfv'] });
    assert.equal(result.exitCode, 0, result.tail);
    assert.equal(await marker('h1', 'plugins'), 'multus\nsriov\novn4nfv\n');
    assert.equal(await marker('h2', 'plugins'), undefined);
  });

  it('removes nodes: the marker goes, the others stay; never the last master', async () => {
    const before = await marker('h1');
    const result = await install(REMOVE, 'edge-1', { nodes: ['h4'] });
    assert.equal(result.exitCode, 0, result.tail);
    assert.equal(await marker('h4'), undefined);
    assert.equal(await marker('h1'), before);

    const master = await install(REMOVE, 'edge-1', { nodes: ['h1'] });
    assert.notEqual(master.exitCode, 0);
    assert.match(master.log, /would leave the cluster without a master/);
    assert.equal(await marker('h1'), before);
  });

  it('provisions a Kubespray-flavour inventory', async () => {
    const cdir = await clusterDir(
      'edge-2',
      kubesprayInventory(hosts.slice(0, 3), ['h2'], ['h1', 'h2', 'h3']),
    );
    const result = await install(CLUSTER, 'edge-2');
    assert.equal(result.exitCode, 0, result.tail);
    const m2 = parseMarker((await marker('h2')) ?? '');
    assert.equal(m2.cluster, 'edge-2');
    assert.equal(m2.roles, 'master worker');
    assert.deepEqual(m2.groups?.split(' ').sort(), [
      'etcd',
      'k8s_cluster',
      'kube_control_plane',
      'kube_node',
    ]);
    const kubeconfig = parse(await readFile(join(cdir, 'artifacts', 'admin.conf'), 'utf8')) as {
      clusters: Array<{ cluster: { server: string } }>;
    };
    assert.equal(kubeconfig.clusters[0]?.cluster.server, `https://${host('h2').ip}:6443`);
  });

  it('resets a whole cluster: every host of the inventory, masters included; no node list', async () => {
    const listed = await install(`${RUN_SH} reset {clusterDir} {inventory} {nodes}`, 'edge-2', {
      nodes: ['h1'],
    });
    assert.equal(listed.exitCode, 64);
    assert.match(listed.log, /reset takes no node or plugin list/);
    assert.ok(await marker('h1'), 'untouched by the refused run');
    const result = await install(RESET, 'edge-2');
    assert.equal(result.exitCode, 0, result.tail);
    for (const h of ['h1', 'h2', 'h3']) assert.equal(await marker(h), undefined, `${h} reset`);
  });

  it('fails clearly on an inventory without masters, or without hosts', async () => {
    await clusterDir('no-master', kudInventory(hosts.slice(0, 2), [], ['h1', 'h2']));
    const result = await install(CLUSTER, 'no-master');
    assert.notEqual(result.exitCode, 0);
    assert.match(
      result.log,
      /has no master: group kube-master \(KUD\) or kube_control_plane \(Kubespray\) is missing or empty/,
    );
    assert.doesNotMatch(result.log, /Reach the host/, 'no host was contacted');
    assert.ok(!existsSync(join(dir, 'clusters', 'no-master', 'artifacts', 'admin.conf')));

    await clusterDir('no-hosts', '# nothing here\n[kube-master]\n[etcd]\n');
    const empty = await install(CLUSTER, 'no-hosts');
    assert.notEqual(empty.exitCode, 0);
    assert.match(empty.log, /lists no hosts/);
  });

  it('fails after the host checks with BPA_REFERENCE_FAIL=1', async () => {
    await clusterDir('broken', kudInventory(hosts.slice(0, 2), ['h1'], ['h2']));
    const result = await install(CLUSTER, 'broken', { env: { BPA_REFERENCE_FAIL: '1' } });
    assert.notEqual(result.exitCode, 0);
    assert.match(result.log, /BPA_REFERENCE_FAIL is set/);
    assert.match(result.log, /Reach the host and look for python3[\s\S]*ok: \[h2\]/);
    assert.ok(!existsSync(join(dir, 'clusters', 'broken', 'artifacts', 'admin.conf')));
  });

  it('writes markers with raw commands on hosts without python3 (BPA_REFERENCE_RAW=1)', async () => {
    await clusterDir('raw', kudInventory([host('h3')], ['h3'], ['h3']));
    const result = await install(CLUSTER, 'raw', { env: { BPA_REFERENCE_RAW: '1' } });
    assert.equal(result.exitCode, 0, result.tail);
    const m3 = parseMarker((await marker('h3')) ?? '');
    assert.equal(m3.cluster, 'raw');
    assert.equal(m3.roles, 'master worker');
    assert.match(m3.system ?? '', /^h3 \(raw, no python3\)$/);
  });

  it('hangs with BPA_REFERENCE_SLEEP until the timeout ends its process tree', async () => {
    const result = await install(CLUSTER, 'raw', {
      env: { BPA_REFERENCE_SLEEP: '60' },
      timeoutMs: 1_500,
    });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.match(result.log, /sleeping 60s/);
    // No sleep started by this run.sh is left anywhere (other runs on the machine are not ours).
    const clusterDir = join(dir, 'clusters', 'raw');
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      assert.ok(
        !(cmdline.includes(RUN_SH) && cmdline.includes(clusterDir)),
        `run.sh still runs as ${entry}`,
      );
    }
  });

  it('refuses hosts that share one /etc (lab hosts without their own), writing nothing', async () => {
    const shared = await startLab({ hosts: 2 });
    try {
      const cdir = await clusterDir('shared', kudInventory(shared.hosts, ['h1'], ['h2']));
      const result = await install(CLUSTER, 'shared', {
        env: { BPA_SSH_KEY: shared.keyPath, BPA_KNOWN_HOSTS: shared.knownHostsPath },
      });
      assert.notEqual(result.exitCode, 0);
      assert.match(result.log, /hosts h1, h2 do not all have their own \/etc/);
      assert.doesNotMatch(result.log, /TASK \[Marker file/);
      assert.ok(!existsSync(join(cdir, 'artifacts', 'admin.conf')));
    } finally {
      await shared.stop();
    }
  });

  it('fails realistically when a host is down: non-zero, the log names it', async () => {
    if (!lab) throw new Error('no lab');
    await clusterDir('down', kudInventory(hosts.slice(0, 3), ['h1'], ['h2', 'h3']));
    await lab.stopSshd('h2');
    const result = await install(CLUSTER, 'down');
    assert.notEqual(result.exitCode, 0);
    assert.match(result.log, /fatal: \[h2\]: UNREACHABLE!.*Connection refused/);
    assert.match(result.log, /h2 +: ok=0 .*unreachable=1/);
    assert.ok(!existsSync(join(dir, 'clusters', 'down', 'artifacts', 'admin.conf')));
    const m1 = parseMarker((await marker('h1')) ?? '');
    assert.notEqual(m1.cluster, 'down', 'no marker written once a host failed');
  });
});
