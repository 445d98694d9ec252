/**
 * The kubespray flavour as operators run it: bpa runs a Kubespray checkout's own playbooks
 * with its own ansible.cfg (here the Kubespray-shaped stand-in, installer/kubespray-standin),
 * and nothing but bpa's defaults: the stand-in really connects to every lab host with what
 * bpa passes, and fails where Kubespray would (groups, odd etcd, `ip` of the host, `access_ip`
 * reachable, the port, become, facts of another cluster).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cordonPatches, readyNode, startFakeKube } from '../../fakes/kube-api-server.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import {
  KUBESPRAY_STANDIN,
  bpa,
  installerPid,
  journal,
  kill,
  kubesprayArgs,
  labReady,
  logs,
  pidAlive,
  spawnBpa,
  standinMarker,
  waitFor,
} from './harness.js';
import { updateLabSite, writeLabSite, type LabSiteNode } from './lab-site.js';

/** Whether a process runs (a zombie, dead but not yet reaped, does not). */
function running(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The machine-wide fact cache of the stand-in's ansible.cfg (Kubespray's is /tmp). */
const SHARED_FACTS = '/tmp/bpa-kubespray-standin-facts';

const TWO: LabSiteNode[] = [
  { name: 'master-1', roles: ['master'], host: 0 },
  { name: 'worker-1', roles: ['worker'], host: 1 },
];

async function cachedFacts(
  state: string,
  cluster: string,
  node: string,
): Promise<{ ansible_all_ipv4_addresses?: string[] }> {
  const file = join(state, 'clusters', cluster, '.ansible', 'facts', node);
  return JSON.parse(await readFile(file, 'utf8')) as { ansible_all_ipv4_addresses?: string[] };
}

async function logOf(state: string, cluster: string, prefix: string): Promise<string> {
  const name = (await logs(state, cluster)).filter((f) => f.startsWith(prefix)).pop();
  assert.ok(name, `a ${prefix} log of ${cluster}`);
  return readFile(join(state, 'clusters', cluster, 'logs', name), 'utf8');
}

describe('apply: Kubespray (Kubespray-shaped stand-in) on lab hosts', function () {
  this.timeout(600_000);
  let lab: Lab | undefined;
  let tmp: string;
  let state: string;
  let east: string;
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 5, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-kubespray-'));
    state = join(tmp, 'state');
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("provisions with the checkout's cluster.yml and ansible.cfg, logging in exactly as bpa does", async () => {
    if (!lab) return;
    east = await writeLabSite(lab.hosts, { cluster: 'east', nodes: TWO }, join(tmp, 'east'));
    const r = await bpa(['reconcile', '--once', east, ...kubesprayArgs(lab, state)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ provision-cluster master-1, worker-1 \(6 steps\)/);
    const clusterDir = join(state, 'clusters', 'east');
    const log = await logOf(state, 'east', 'provision-');
    assert.match(
      log,
      new RegExp(
        `start: ansible-playbook -i ${clusterDir}/hosts\\.ini ${KUBESPRAY_STANDIN}/cluster\\.yml -e kubeconfig_localhost=true`,
      ),
    );
    for (const [i, node] of [
      [0, 'master-1'],
      [1, 'worker-1'],
    ] as const) {
      const m = await standinMarker(lab, `h${i + 1}`);
      assert.equal(m['playbook'], 'cluster.yml');
      assert.equal(m['cluster_dir'], clusterDir);
      assert.equal(m['host'], node);
      assert.equal(m['ip'], lab.hosts[i]?.ip);
      assert.equal(m['access_ip'], lab.hosts[i]?.ip);
      assert.equal(m['port'], '22');
      assert.equal(m['user'], 'root');
      assert.equal(m['uid'], '0');
      assert.equal(m['kube_version'], 'default');
    }
    assert.equal((await standinMarker(lab, 'h1'))['etcd_member_name'], 'master-1');
    assert.match(
      (await standinMarker(lab, 'h1'))['groups'] ?? '',
      /etcd k8s_cluster kube_control_plane/,
    );
    // The admin kubeconfig Kubespray leaves in <inventory dir>/artifacts/ is stored.
    assert.match(
      await readFile(join(clusterDir, 'kubeconfig'), 'utf8'),
      new RegExp(`server: https://${lab.hosts[0]?.ip.replace(/\./g, '\\.')}:6443`),
    );
    // The installer checked exactly the keys bpa pinned, kept in the cluster directory.
    const knownHosts = await readFile(join(clusterDir, 'known_hosts'), 'utf8');
    for (const h of lab.hosts.slice(0, 2))
      assert.ok(knownHosts.includes(`${h.ip} ${h.hostKey}\n`), knownHosts);
    // Ansible's files are the cluster's: facts, temp files; none in the machine-wide cache.
    assert.deepEqual((await cachedFacts(state, 'east', 'master-1')).ansible_all_ipv4_addresses, [
      lab.hosts[0]?.ip,
    ]);
    assert.ok(existsSync(join(clusterDir, '.ansible', 'tmp')));
    assert.ok(
      !existsSync(join(SHARED_FACTS, 'master-1')),
      `facts were cached in ${SHARED_FACTS}, shared by the machine`,
    );
  });

  it('a second cluster with the same node names shares no facts with the first, which still scales with its own', async () => {
    if (!lab) return;
    const west = await writeLabSite(
      lab.hosts,
      {
        cluster: 'west',
        nodes: [
          { name: 'master-1', roles: ['master'], host: 3 },
          { name: 'worker-1', roles: ['worker'], host: 4 },
        ],
      },
      join(tmp, 'west'),
    );
    const r = await bpa(['reconcile', '--once', west, ...kubesprayArgs(lab, state)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await standinMarker(lab, 'h4'))['ip'], lab.hosts[3]?.ip);
    assert.deepEqual((await cachedFacts(state, 'west', 'master-1')).ansible_all_ipv4_addresses, [
      lab.hosts[3]?.ip,
    ]);
    assert.deepEqual(
      (await cachedFacts(state, 'east', 'master-1')).ansible_all_ipv4_addresses,
      [lab.hosts[0]?.ip],
      "east's cached facts are east's",
    );

    // east grows by a worker: scale.yml runs for worker-2 only and reads master-1's facts
    // from the cache, which must be east's master-1, not west's.
    const before = await standinMarker(lab, 'h2');
    await updateLabSite(east, lab.hosts, {
      cluster: 'east',
      nodes: [...TWO, { name: 'worker-2', roles: ['worker'], host: 2 }],
    });
    const scaled = await bpa(['reconcile', '--once', east, ...kubesprayArgs(lab, state)]);
    assert.equal(scaled.code, 0, scaled.stdout + scaled.stderr);
    assert.match(scaled.stdout, /✓ add-nodes worker-2/);
    assert.match(await logOf(state, 'east', 'scale-'), /scale\.yml --limit worker-2 \(in /);
    const m = await standinMarker(lab, 'h3');
    assert.equal(m['playbook'], 'scale.yml');
    assert.equal(m['host'], 'worker-2');
    assert.deepEqual(await standinMarker(lab, 'h2'), before, 'worker-1 is not touched');
  });

  it("a new kubernetesVersion upgrades every node with the checkout's upgrade-cluster.yml, journaled", async () => {
    if (!lab) return;
    const nodes = [...TWO, { name: 'worker-2', roles: ['worker' as const], host: 2 }];
    await updateLabSite(east, lab.hosts, { cluster: 'east', nodes, kubernetesVersion: 'v1.27.10' });
    // bpa plan takes the same settings, without --log-level (the last two arguments).
    const plan = await bpa(['plan', east, ...kubesprayArgs(lab, state).slice(0, -2)]);
    assert.equal(plan.code, 2, plan.stdout + plan.stderr);
    assert.match(plan.stdout, /upgrade-cluster\s+Kubernetes the installer's default → v1\.27\.10/);
    assert.match(plan.stdout, /; 0 to provision, 1 to upgrade, 0 nodes to add/);
    const r = await bpa(['reconcile', '--once', east, ...kubesprayArgs(lab, state)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ upgrade-cluster master-1, worker-1, worker-2 \(4 steps\)/);
    assert.match(
      await logOf(state, 'east', 'upgrade-'),
      /upgrade-cluster\.yml --limit master-1,worker-1,worker-2 \(in /,
    );
    for (const h of ['h1', 'h2', 'h3']) {
      const m = await standinMarker(lab, h);
      assert.equal(m['playbook'], 'upgrade-cluster.yml', h);
      assert.equal(m['kube_version'], 'v1.27.10', h);
    }
    assert.deepEqual(
      (await journal(state, 'east'))
        .filter((s) => s.action === 'upgrade-cluster')
        .map((s) => `${s.step}:${s.status}`),
      ['inventory:done', 'ssh-access:done', 'installer:done', 'record:done'],
    );
    const applied = JSON.parse(
      await readFile(join(state, 'clusters', 'east', 'applied.json'), 'utf8'),
    ) as { kubernetesVersion?: string };
    assert.equal(applied.kubernetesVersion, 'v1.27.10');
    const again = await bpa(['reconcile', '--once', east, ...kubesprayArgs(lab, state)]);
    assert.match(again.stdout, /No changes/);
  });

  it('with rollout: the next minor version upgrades node by node, each cordoned and drained around its own upgrade-cluster.yml --limit <node>', async () => {
    if (!lab) return;
    const nodes = [...TWO, { name: 'worker-2', roles: ['worker' as const], host: 2 }];
    const kubeconfig = join(state, 'clusters', 'east', 'kubeconfig');
    const stored = await readFile(kubeconfig);
    const kube = await startFakeKube();
    try {
      for (const n of nodes) kube.put(readyNode(n.name));
      kube.put({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-1', namespace: 'apps' },
        spec: { nodeName: 'worker-1', containers: [{ name: 'c', image: 'busybox' }] },
      });
      // The application cluster's API: the kubeconfig bpa stored after provisioning.
      await copyFile(kube.kubeconfigPath, kubeconfig);
      await updateLabSite(east, lab.hosts, {
        cluster: 'east',
        nodes,
        kubernetesVersion: 'v1.28.6',
        clusterSpec: [
          '  rollout:',
          '    maxUnavailable: 1',
          "    drain: { timeout: '30s' }",
          "    healthCheck: { timeout: '30s', command: [test, -f, /etc/bpa-kubespray-standin/node] }",
        ],
      });
      const plan = await bpa(['plan', east, ...kubesprayArgs(lab, state).slice(0, -2)]);
      assert.match(plan.stdout, /rollout: masters one at a time, then workers 1 at a time/);
      const earlier = new Set(await logs(state, 'east'));
      const r = await bpa(['reconcile', '--once', east, ...kubesprayArgs(lab, state)]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /✓ upgrade-cluster master-1, worker-1, worker-2/);
      // One run of the checkout's playbook per node, the master first.
      const runs = (await logs(state, 'east')).filter(
        (f) => f.startsWith('upgrade-') && !earlier.has(f),
      );
      const limits: string[] = [];
      for (const f of runs) {
        const log = await readFile(join(state, 'clusters', 'east', 'logs', f), 'utf8');
        limits.push(/upgrade-cluster\.yml --limit (\S+) \(in /.exec(log)?.[1] ?? f);
      }
      assert.deepEqual(limits, ['master-1', 'worker-1', 'worker-2']);
      for (const h of ['h1', 'h2', 'h3'])
        assert.equal((await standinMarker(lab, h))['kube_version'], 'v1.28.6', h);
      // Each node cordoned, then uncordoned after its upgrade, before the next is cordoned.
      const patches = cordonPatches(kube.requests);
      assert.deepEqual(patches, [
        'master-1=true',
        'master-1=false',
        'worker-1=true',
        'worker-1=false',
        'worker-2=true',
        'worker-2=false',
      ]);
      assert.equal(kube.get('v1', 'Pod', 'apps', 'web-1'), undefined, 'drained from worker-1');
      assert.deepEqual(
        (await journal(state, 'east'))
          .filter((s) => s.action === 'upgrade-cluster' && s.step.startsWith('node:'))
          .slice(-3)
          .map((s) => `${s.step}:${s.status}`),
        ['node:master-1:done', 'node:worker-1:done', 'node:worker-2:done'],
      );
    } finally {
      await kube.stop();
      await writeFile(kubeconfig, stored);
      await updateLabSite(east, lab.hosts, {
        cluster: 'east',
        nodes,
        kubernetesVersion: 'v1.28.6',
      });
    }
  });

  it('with rollout: bpa killed (SIGKILL) while the second node is upgraded; the next run does not upgrade the first again, and uncordons the second only once its upgrade has finished', async () => {
    if (!lab) return;
    const nodes = [...TWO, { name: 'worker-2', roles: ['worker' as const], host: 2 }];
    const dir = await mkdtemp(join(tmp, 'gated-'));
    const gate = join(dir, 'gate');
    const reached = join(dir, 'gate-reached');
    // The upgrade path, gated: worker-1's run waits while the gate is there.
    const script = join(dir, 'upgrade.sh');
    await writeFile(
      script,
      `#!/bin/sh
nodes=$1 inventory=$2 kubespray=$3
echo "$nodes" >> '${dir}/runs'
if [ "$nodes" = worker-1 ]; then
  touch '${reached}'
  while [ -e '${gate}' ]; do sleep 0.1; done
fi
exec ansible-playbook -i "$inventory" "$kubespray/upgrade-cluster.yml" --limit "$nodes"
`,
      { mode: 0o755 },
    );
    const args = kubesprayArgs(lab, state, [
      '--upgrade-command',
      `${script} {nodes} {inventory} {kubesprayDir}`,
    ]);
    const kubeconfig = join(state, 'clusters', 'east', 'kubeconfig');
    const stored = await readFile(kubeconfig);
    const kube = await startFakeKube();
    const cordoned = (name: string): boolean | undefined =>
      (kube.get('v1', 'Node', undefined, name)?.spec as { unschedulable?: boolean }).unschedulable;
    const runs = async (): Promise<string[]> =>
      (await readFile(join(dir, 'runs'), 'utf8')).split('\n').filter(Boolean);
    try {
      for (const n of nodes) kube.put(readyNode(n.name));
      await copyFile(kube.kubeconfigPath, kubeconfig);
      await writeFile(gate, '');
      await updateLabSite(east, lab.hosts, {
        cluster: 'east',
        nodes,
        kubernetesVersion: 'v1.29.2',
        clusterSpec: ['  rollout:', '    maxUnavailable: 1', "    healthCheck: { timeout: '30s' }"],
      });
      const child = spawnBpa(['reconcile', '--once', east, ...args]);
      await waitFor(
        "worker-1's upgrade under way",
        async () => (existsSync(reached) ? true : undefined),
        120_000,
      );
      await kill(child);
      const orphan = await installerPid(state, 'east');
      assert.ok(orphan !== undefined && running(orphan), 'the installer outlives bpa');
      assert.equal((await standinMarker(lab, 'h1'))['kube_version'], 'v1.29.2');
      assert.equal(cordoned('master-1'), false, 'master-1 upgraded and uncordoned');
      assert.equal((await standinMarker(lab, 'h2'))['kube_version'], 'v1.28.6');
      assert.equal(cordoned('worker-1'), true, "worker-1's upgrade has not finished: cordoned");

      // The next run, while worker-1's upgrade is still held.
      await rm(reached);
      const before = kube.requests.length;
      const resumed = bpa(['reconcile', '--once', east, ...args]);
      await waitFor("worker-1's upgrade run again", async () =>
        existsSync(reached) ? true : undefined,
      );
      assert.ok(!running(orphan), 'the installer bpa left running was stopped first');
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(cordoned('worker-1'), true, 'not uncordoned while its upgrade is held');
      await rm(gate);
      const r = await resumed;
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual(await runs(), ['master-1', 'worker-1', 'worker-1', 'worker-2']);
      for (const h of ['h1', 'h2', 'h3'])
        assert.equal((await standinMarker(lab, h))['kube_version'], 'v1.29.2', h);
      assert.deepEqual(
        kube.requests
          .slice(before)
          .filter((x) => x.method === 'PATCH')
          .map(
            (x) =>
              `${x.path.slice('/api/v1/nodes/'.length)}=${String((x.body as Array<{ value: boolean }>)[0]?.value)}`,
          ),
        ['worker-1=true', 'worker-1=false', 'worker-2=true', 'worker-2=false'],
        'master-1 not touched again; worker-1 uncordoned after its upgrade',
      );
    } finally {
      await kube.stop();
      await writeFile(kubeconfig, stored);
      await rm(gate, { force: true });
      await updateLabSite(east, lab.hosts, {
        cluster: 'east',
        nodes,
        kubernetesVersion: 'v1.29.2',
      });
    }
  });

  it('removes with remove-node.yml and no prompt, and a whole cluster with reset.yml; a changed host key then stops the installer as it stops bpa', async () => {
    if (!lab) return;
    const withVersion = { cluster: 'east', kubernetesVersion: 'v1.29.2' };
    await updateLabSite(east, lab.hosts, { ...withVersion, nodes: TWO });
    assert.equal((await standinMarker(lab, 'h4'))['playbook'], 'cluster.yml', 'west runs');
    // east's site does not have west (applied from another directory): with --prune, west
    // goes as a whole, by reset.yml on every node (remove-node.yml would leave no master).
    const r = await bpa(['reconcile', '--once', east, ...kubesprayArgs(lab, state, ['--prune'])]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ remove-nodes worker-2/);
    assert.match(
      await logOf(state, 'east', 'remove-'),
      /remove-node\.yml -e node=worker-2 -e skip_confirmation=true \(in /,
    );
    assert.deepEqual(await standinMarker(lab, 'h3'), {}, "worker-2's marker is removed");
    assert.match(r.stdout, /✓ remove-cluster master-1, worker-1/);
    assert.match(
      await logOf(state, 'west', 'reset-'),
      /reset\.yml -e reset_confirmation=yes \(in /,
    );
    assert.deepEqual(await standinMarker(lab, 'h4'), {}, "west's master is reset");
    assert.deepEqual(await standinMarker(lab, 'h5'), {}, "west's worker is reset");
    assert.equal(existsSync(join(state, 'clusters', 'west', 'applied.json')), false, 'forgotten');
    assert.ok(existsSync(join(state, 'clusters', 'east', 'kubeconfig')));

    // worker-1 is reinstalled (its connections end, its host key changes): removing it is
    // refused by the installer's SSH itself (the remove path has no SSH step of bpa's).
    await lab.stopSshd('h2', { killSessions: true });
    await lab.rotateHostKey('h2');
    await lab.startSshd('h2');
    await updateLabSite(east, lab.hosts, { ...withVersion, nodes: TWO.slice(0, 1) });
    const refused = await bpa([
      'reconcile',
      '--once',
      east,
      ...kubesprayArgs(lab, state, ['--prune']),
    ]);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stdout, /INSTALLER_FAILED/);
    const log = await logOf(state, 'east', 'remove-');
    assert.match(log, /UNREACHABLE!/);
    assert.match(log, /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
    assert.equal((await standinMarker(lab, 'h2'))['host'], 'worker-1', 'worker-1 is untouched');
    assert.deepEqual(
      (await readdir(KUBESPRAY_STANDIN)).filter((f) => f.endsWith('.retry')),
      [],
      'retry files stay in the cluster directory',
    );
  });
});

describe('apply: Kubespray on a non-default SSH port, end to end', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let tmp: string;
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    // Nothing listens on port 22 of these hosts.
    lab = await startLab({ hosts: 2, isolatedPackages: true, sshPort: 2222 });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-kubespray-port-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('bpa and Kubespray both reach every node on spec.ssh.port, checking the pinned keys', async () => {
    if (!lab) return;
    const site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'port',
        nodes: TWO,
        extraSite: `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata:
  name: lab
spec:
  ssh:
    port: 2222
`,
      },
      join(tmp, 'site'),
    );
    const state = join(tmp, 'state');
    const r = await bpa(['reconcile', '--once', site, ...kubesprayArgs(lab, state)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const clusterDir = join(state, 'clusters', 'port');
    assert.match(
      await readFile(join(clusterDir, 'hosts.ini'), 'utf8'),
      new RegExp(
        `master-1 ansible_host=${lab.hosts[0]?.ip.replace(/\./g, '\\.')} ansible_port=2222 `,
      ),
    );
    // OpenSSH's spelling of a host on another port, or a strict ssh refuses every host.
    const knownHosts = await readFile(join(clusterDir, 'known_hosts'), 'utf8');
    for (const h of lab.hosts)
      assert.ok(knownHosts.includes(`[${h.ip}]:2222 ${h.hostKey}\n`), knownHosts);
    for (const [i, h] of ['h1', 'h2'].entries()) {
      const m = await standinMarker(lab, h);
      assert.equal(m['port'], '2222', h);
      assert.equal(m['ip'], lab.hosts[i]?.ip, h);
    }
  });
});

describe('apply: Kubespray as a non-root SSH user, with become', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let tmp: string;
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    if (!existsSync('/usr/bin/sudo')) {
      console.log('    skipped: sudo is not installed (Debian package sudo)');
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-kubespray-user-'));
    // The lab's password user may use sudo without a password on its hosts, as bpa documents.
    const setup = join(tmp, 'sudoers.sh');
    await writeFile(
      setup,
      `#!/bin/sh
set -eu
mkdir -p /etc/sudoers.d
printf '%s ALL=(ALL) NOPASSWD: ALL\\n' "bpat$BPA_LAB_ID" > /etc/sudoers.d/bpa-lab
chmod 0440 /etc/sudoers.d/bpa-lab
`,
      { mode: 0o755 },
    );
    // bpa's key is not authorized for anyone: bpa installs it with the user's password.
    lab = await startLab({
      hosts: 1,
      isolatedPackages: true,
      hostSetup: setup,
      authorizeKey: false,
    });
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("logs in as the configured user, and Kubespray's tasks run as root through become", async () => {
    if (!lab) return;
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'user', nodes: [{ name: 'node-1', roles: ['master', 'worker'], host: 0 }] },
      join(tmp, 'site'),
    );
    const creds = join(tmp, 'credentials');
    await writeFile(creds, `username: ${lab.user}\npassword: ${lab.password}\n`, { mode: 0o600 });
    const state = join(tmp, 'state');
    const r = await bpa([
      'reconcile',
      '--once',
      site,
      ...kubesprayArgs(lab, state, ['--ssh-user', lab.user, '--bootstrap-credentials', creds]),
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      await readFile(join(state, 'clusters', 'user', 'hosts.ini'), 'utf8'),
      new RegExp(`ansible_port=22 ansible_user=${lab.user} ip=`),
    );
    const m = await standinMarker(lab, 'h1');
    assert.equal(m['user'], lab.user, 'logged in as the configured user');
    assert.equal(m['uid'], '0', 'tasks ran as root through become');
  });
});
