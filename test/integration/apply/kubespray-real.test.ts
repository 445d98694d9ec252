/**
 * A real Kubespray checkout (BPA_TEST_KUBESPRAY_DIR, e.g. a `git clone -b v2.23.3` of
 * kubernetes-sigs/kubespray; skipped without one): bpa runs Kubespray's own checks against lab
 * hosts, with the checkout's ansible.cfg, roles and the inventory and SSH settings bpa gives any
 * installer: playbooks/ansible_version.yml, the kubespray-defaults role, and the preinstall
 * role's 0040-verify-settings.yml in check mode, after gathering the facts Kubespray's
 * facts.yml gathers. Lab hosts have no systemd and no package sources, so "Stop if non systemd
 * OS type" and "Ensure ping package" fail; every other check must pass.
 *
 * The table of results is printed (docs/apply.md shows the one for Kubespray v2.23.3).
 * Kubespray's collections (ansible.utils for ipaddr) come with Debian's `ansible` package.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { bpa, kubesprayArgs, labReady, logs } from './harness.js';
import { writeLabSite } from './lab-site.js';

const KUBESPRAY = process.env['BPA_TEST_KUBESPRAY_DIR'];

/** Checks a lab host cannot pass: it has no systemd (PID 1 is not systemd) and no apt sources. */
const EXPECTED_FAILURES = ['Stop if non systemd OS type', 'Ensure ping package'];

/** The checks bpa runs through the installer path, as a playbook of the checkout's parts. */
function checksPlaybook(kubespray: string): string {
  return `# Kubespray's own checks, run by bpa's tests against lab hosts (see kubespray-real.test.ts).
- name: Kubespray's Ansible checks
  ansible.builtin.import_playbook: ${kubespray}/playbooks/ansible_version.yml

# As Kubespray's playbooks/facts.yml gathers them (its bootstrap-os role installs packages).
- name: Gather facts
  hosts: k8s_cluster:etcd
  gather_facts: false
  tasks:
    - name: Gather minimal facts
      ansible.builtin.setup:
        gather_subset: '!all'
    - name: Gather necessary facts (network)
      ansible.builtin.setup:
        gather_subset: '!all,!min,network'
        filter: 'ansible_*_ipv[46]*'
    - name: Gather necessary facts (hardware)
      ansible.builtin.setup:
        gather_subset: '!all,!min,hardware'
        filter: 'ansible_*total_mb'

- name: Kubespray's settings checks
  hosts: k8s_cluster:etcd
  gather_facts: false
  any_errors_fatal: false
  roles:
    - role: kubespray-defaults
  tasks:
    - name: The preinstall role's 0040-verify-settings.yml, every check run even after a failure
      ansible.builtin.include_role:
        name: kubernetes/preinstall
        tasks_from: 0040-verify-settings.yml
        apply:
          ignore_errors: true

# bpa stores the cluster's kubeconfig after a provision; no cluster is installed here.
- name: Placeholder kubeconfig
  hosts: localhost
  gather_facts: false
  become: false
  tasks:
    - name: artifacts directory
      ansible.builtin.file:
        path: '{{ cluster_dir }}/artifacts'
        state: directory
        mode: '0750'
      check_mode: false
    - name: artifacts/admin.conf
      ansible.builtin.copy:
        dest: '{{ cluster_dir }}/artifacts/admin.conf'
        content: "apiVersion: v1\\nkind: Config\\nclusters: []\\n"
        mode: '0600'
      check_mode: false
`;
}

interface TaskResult {
  task: { name: string };
  hosts: Record<
    string,
    { failed?: boolean; skipped?: boolean; changed?: boolean; unreachable?: boolean }
  >;
}

/** The json callback's report of the run, from the installer log bpa kept. */
function parseReport(log: string): TaskResult[] {
  const start = log.indexOf('\n{\n');
  const end = log.lastIndexOf('\n}\n');
  assert.ok(start >= 0 && end > start, `no JSON report in the installer log:\n${log.slice(-3000)}`);
  const report = JSON.parse(log.slice(start + 1, end + 2)) as {
    plays: Array<{ tasks: TaskResult[] }>;
  };
  return report.plays.flatMap((p) => p.tasks);
}

/** `kubernetes/preinstall : Stop if …` → `Stop if …`. */
const checkName = (t: TaskResult): string => t.task.name.replace(/^[^:]+ : /, '');

function outcome(r: TaskResult['hosts'][string]): string {
  if (r.unreachable) return 'unreachable';
  if (r.failed) return 'failed';
  if (r.skipped) return 'skipped';
  return r.changed ? 'changed' : 'ok';
}

describe('apply: a real Kubespray checkout runs its own checks on lab hosts', function () {
  this.timeout(900_000);
  let lab: Lab | undefined;
  let tmp: string;
  before(async function () {
    if (!KUBESPRAY) {
      console.log('    skipped: BPA_TEST_KUBESPRAY_DIR does not name a Kubespray checkout');
      this.skip();
    }
    if (!existsSync(join(KUBESPRAY, 'roles', 'kubernetes', 'preinstall'))) {
      console.log(
        `    skipped: ${KUBESPRAY} is not a Kubespray checkout (no roles/kubernetes/preinstall)`,
      );
      this.skip();
    }
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 3, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-kubespray-real-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('passes every check but the two lab hosts cannot, with the inventory and SSH bpa gives', async () => {
    if (!lab || !KUBESPRAY) return;
    const kubespray = resolve(KUBESPRAY);
    const playbook = join(tmp, 'kubespray-checks.yml');
    await writeFile(playbook, checksPlaybook(kubespray));
    const site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'real',
        nodes: [
          { name: 'master-1', roles: ['master'], host: 0 },
          { name: 'worker-1', roles: ['worker'], host: 1 },
          { name: 'worker-2', roles: ['worker'], host: 2 },
        ],
      },
      join(tmp, 'site'),
    );
    const state = join(tmp, 'state');
    // {kubesprayDir} in the command: the run gets the checkout's ansible.cfg, as the defaults do.
    const command = `ansible-playbook -i {inventory} ${playbook} --check -e kubespray_dir={kubesprayDir} -e cluster_dir={clusterDir}`;
    const r = await bpa(
      [
        'reconcile',
        '--once',
        site,
        ...kubesprayArgs(lab, state, ['--installer-command', command], kubespray),
      ],
      { ANSIBLE_STDOUT_CALLBACK: 'json' },
      600_000,
    );
    const name = (await logs(state, 'real')).find((f) => f.startsWith('provision-'));
    assert.ok(name, r.stdout + r.stderr);
    const log = await readFile(join(state, 'clusters', 'real', 'logs', name), 'utf8');
    const tasks = parseReport(log);

    const hosts = ['localhost', 'master-1', 'worker-1', 'worker-2'];
    const rows = tasks
      .filter((t) => !/^(Gather|Configure defaults|artifacts)/.test(checkName(t)))
      .map((t) => [
        t.task.name.replace(/\|/g, '\\|'),
        ...hosts.map((h) => (t.hosts[h] ? outcome(t.hosts[h]) : '')),
      ]);
    console.log(`\n| check | ${hosts.join(' | ')} |\n|---|${hosts.map(() => '---').join('|')}|`);
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);

    const failed = tasks.flatMap((t) =>
      Object.entries(t.hosts)
        .filter(([, res]) => res.failed || res.unreachable)
        .map(([h]) => `${checkName(t)} on ${h}`),
    );
    const unexpected = failed.filter(
      (f) => !EXPECTED_FAILURES.some((e) => f.startsWith(`${e} on `)),
    );
    assert.deepEqual(unexpected, [], `unexpected failures:\n${unexpected.join('\n')}`);
    // The checks that matter to bpa's inventory ran and passed on every node.
    for (const check of [
      'Check 2.14.0 <= Ansible version < 2.15.0',
      'Stop if either kube_control_plane or kube_node group is empty',
      'Stop if etcd group is empty in external etcd mode',
      'Stop if even number of etcd hosts',
      'Stop if ip var does not match local ips',
      'Stop if bad hostname',
      'Check that kube_pods_subnet is a network range',
    ]) {
      const t = tasks.find((x) => checkName(x) === check);
      assert.ok(t, `${check} ran`);
      assert.ok(
        Object.values(t.hosts).some((res) => outcome(res) === 'ok'),
        `${check} passed: ${JSON.stringify(t.hosts)}`,
      );
    }
    const ipCheck = tasks.find((x) => checkName(x) === 'Stop if ip var does not match local ips');
    assert.deepEqual(
      Object.keys(ipCheck?.hosts ?? {}).sort(),
      ['master-1', 'worker-1', 'worker-2'],
      'ip checked on every node',
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
