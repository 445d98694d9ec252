/**
 * Kubespray as the installer: the default commands run its own playbooks from the configured
 * checkout, a command checks the checkout before any host is touched, and every run gets the
 * Ansible environment that makes it log in as bpa does and keep its files per cluster.
 */
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCommands, installerCommands } from '../../../src/config/execution.js';
import { resolveConfig } from '../../../src/config/options.js';
import { ansibleEnv } from '../../../src/apply/installer/ansible-env.js';
import { expandCommand } from '../../../src/apply/installer/command.js';
import { checkCommands } from '../../../src/apply/installer/port.js';
import { knownHostsName } from '../../../src/ssh/host-keys.js';
import { BpaError } from '../../../src/util/errors.js';

const vars = {
  cluster: 'edge-1',
  clusterDir: '/var/lib/bpa/clusters/edge-1',
  inventory: '/var/lib/bpa/clusters/edge-1/hosts.ini',
  plugins: [],
  nodes: ['worker-3', 'worker-4'],
  kubesprayDir: '/opt/kubespray',
};

function code(c: string): (err: unknown) => boolean {
  return (err: unknown) => err instanceof BpaError && err.code === c && err.retry === 'stalled';
}

describe('Kubespray commands', () => {
  it("run Kubespray's own playbooks from the checkout, as an operator runs them by hand", () => {
    const d = defaultCommands('kubespray');
    const argv = (t: string): string => expandCommand(t, vars).join(' ');
    assert.equal(
      argv(d.provision),
      'ansible-playbook -i /var/lib/bpa/clusters/edge-1/hosts.ini /opt/kubespray/cluster.yml -e kubeconfig_localhost=true',
    );
    assert.equal(
      argv(d.scale),
      'ansible-playbook -i /var/lib/bpa/clusters/edge-1/hosts.ini /opt/kubespray/scale.yml --limit worker-3,worker-4',
    );
    assert.equal(
      argv(d.remove),
      'ansible-playbook -i /var/lib/bpa/clusters/edge-1/hosts.ini /opt/kubespray/remove-node.yml -e node=worker-3,worker-4 -e skip_confirmation=true',
    );
    assert.equal(
      argv(d.reset),
      'ansible-playbook -i /var/lib/bpa/clusters/edge-1/hosts.ini /opt/kubespray/reset.yml -e reset_confirmation=yes',
    );
    assert.equal(
      argv(d.upgrade),
      'ansible-playbook -i /var/lib/bpa/clusters/edge-1/hosts.ini /opt/kubespray/upgrade-cluster.yml --limit worker-3,worker-4',
    );
    assert.equal(d.addon, '', 'Kubespray has no add-on playbooks');
    // KUD provisions with its own installer and scales with the Kubespray it deploys with.
    assert.equal(
      defaultCommands('kud').provision,
      'installer --cluster {cluster} --plugins {plugins}',
    );
    assert.equal(defaultCommands('kud').scale, d.scale);
  });

  it('take the checkout from --kubespray-dir or BPA_KUBESPRAY_DIR, and never from the Site document', () => {
    const cfg = resolveConfig(
      [
        'flavour',
        'kubesprayDir',
        'installerCommand',
        'scaleCommand',
        'addonCommand',
        'removeCommand',
        'upgradeCommand',
      ],
      {},
      { BPA_KUBESPRAY_DIR: '/srv/kubespray', BPA_UPGRADE_COMMAND: 'up {nodes}' },
      { installer: { flavour: 'kubespray', kubesprayDir: '/tmp/evil', upgradeCommand: 'evil' } },
    );
    assert.equal(cfg.kubesprayDir, '/srv/kubespray');
    assert.equal(cfg.sources.kubesprayDir, 'env');
    assert.equal(installerCommands(cfg).upgrade, 'up {nodes}');
    const none = resolveConfig(
      ['kubesprayDir', 'upgradeCommand'],
      {},
      {},
      {
        installer: { kubesprayDir: '/tmp/evil', upgradeCommand: 'evil' },
      },
    );
    assert.equal(none.kubesprayDir, '');
    assert.equal(none.upgradeCommand, '');
  });

  it('without a checkout, say which setting to give', () => {
    assert.throws(
      () => expandCommand(defaultCommands('kubespray').provision, { ...vars, kubesprayDir: '' }),
      (err: unknown) =>
        code('KUBESPRAY_DIR_MISSING')(err) &&
        /--kubespray-dir or BPA_KUBESPRAY_DIR/.test(String(err)),
    );
  });

  describe('checkCommands', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'bpa-kubespray-check-'));
      await writeFile(join(dir, 'ansible.cfg'), '[defaults]\n');
      for (const f of ['cluster.yml', 'scale.yml']) await writeFile(join(dir, f), '---\n');
    });
    after(() => rm(dir, { recursive: true, force: true }));
    const commands = defaultCommands('kubespray');

    it('accepts a checkout that has the playbooks the plan runs', async () => {
      await checkCommands(commands, {
        paths: ['provision', 'scale'],
        kubesprayDir: dir,
        checkoutHere: true,
      });
    });

    it('names the file a checkout lacks, for the paths the plan runs only', async () => {
      await assert.rejects(
        checkCommands(commands, { paths: ['upgrade'], kubesprayDir: dir, checkoutHere: true }),
        (err: unknown) =>
          code('KUBESPRAY_DIR_INVALID')(err) &&
          String(err).includes(`${dir}/upgrade-cluster.yml is missing`),
      );
      const empty = join(dir, 'empty');
      await mkdir(empty, { recursive: true });
      await assert.rejects(
        checkCommands(commands, { paths: ['provision'], kubesprayDir: empty, checkoutHere: true }),
        (err: unknown) =>
          code('KUBESPRAY_DIR_INVALID')(err) &&
          String(err).includes(`${empty}/ansible.cfg is missing`),
      );
      // In job mode the checkout is in the installer image, not here.
      await checkCommands(commands, {
        paths: ['upgrade'],
        kubesprayDir: '/kubespray',
        checkoutHere: false,
      });
    });

    it('refuses, before any host is touched, a path the plan needs that has no command', async () => {
      await assert.rejects(
        checkCommands(commands, { paths: ['addon'], kubesprayDir: dir, checkoutHere: true }),
        code('INSTALLER_PATH_UNSUPPORTED'),
      );
      await assert.rejects(
        checkCommands(commands, { paths: ['scale'], kubesprayDir: '', checkoutHere: true }),
        code('KUBESPRAY_DIR_MISSING'),
      );
    });
  });
});

describe('ansibleEnv', () => {
  const env = ansibleEnv({
    clusterDir: '/var/lib/bpa/clusters/edge-1',
    privateKey: '/var/lib/bpa/ssh/id_ed25519',
    user: 'debian',
    ansibleConfig: '/opt/kubespray/ansible.cfg',
  });

  it("gives Ansible bpa's key and exactly the host keys bpa pinned, checked strictly", () => {
    assert.equal(env['ANSIBLE_PRIVATE_KEY_FILE'], '/var/lib/bpa/ssh/id_ed25519');
    assert.equal(env['ANSIBLE_HOST_KEY_CHECKING'], 'True');
    const args = env['ANSIBLE_SSH_ARGS'] ?? '';
    for (const opt of [
      'UserKnownHostsFile=/var/lib/bpa/clusters/edge-1/known_hosts',
      'GlobalKnownHostsFile=/dev/null',
      'StrictHostKeyChecking=yes',
      'IdentitiesOnly=yes',
      'BatchMode=yes',
    ])
      assert.ok(args.split(' ').includes(opt), `${opt} in ${args}`);
    assert.equal(env['BPA_KNOWN_HOSTS'], '/var/lib/bpa/clusters/edge-1/known_hosts');
    assert.equal(env['BPA_SSH_USER'], 'debian');
    assert.equal(env['ANSIBLE_CONFIG'], '/opt/kubespray/ansible.cfg');
  });

  it('becomes root for another user than root, as -b does for Kubespray, and not for root', () => {
    assert.equal(env['ANSIBLE_BECOME'], 'True');
    assert.equal(env['ANSIBLE_BECOME_USER'], 'root');
    const root = ansibleEnv({ clusterDir: '/c', privateKey: '/k', user: 'root' });
    assert.equal(root['ANSIBLE_BECOME'], undefined);
  });

  it("keeps Ansible's files in the cluster directory: facts, retry files, temp files, control sockets", () => {
    const work = '/var/lib/bpa/clusters/edge-1/.ansible';
    assert.deepEqual(
      [
        env['ANSIBLE_CACHE_PLUGIN_CONNECTION'],
        env['ANSIBLE_RETRY_FILES_SAVE_PATH'],
        env['ANSIBLE_LOCAL_TEMP'],
        env['ANSIBLE_HOME'],
        env['ANSIBLE_SSH_CONTROL_PATH_DIR'],
      ],
      [`${work}/facts`, `${work}/retry`, `${work}/tmp`, `${work}/home`, `${work}/cp`],
    );
    assert.match(env['ANSIBLE_SSH_ARGS'] ?? '', /ControlMaster=auto -o ControlPersist=60s/);
  });

  it('shares no connections when the control socket would not fit a socket path', () => {
    const long = ansibleEnv({
      clusterDir: `/var/lib/bpa/clusters/${'c'.repeat(80)}`,
      privateKey: '/k',
      user: 'root',
    });
    assert.match(long['ANSIBLE_SSH_ARGS'] ?? '', /ControlMaster=no/);
    assert.doesNotMatch(long['ANSIBLE_SSH_ARGS'] ?? '', /ControlPersist/);
    assert.equal(long['ANSIBLE_CONFIG'], undefined);
  });

  it('refuses paths that SSH or Ansible would split or expand', () => {
    for (const clusterDir of ['/state dir/c', '/state/%h', 'relative/c', '/a"b'])
      assert.throws(
        () => ansibleEnv({ clusterDir, privateKey: '/k', user: 'root' }),
        code('INSTALLER_COMMAND_INVALID'),
        clusterDir,
      );
  });
});

describe('knownHostsName', () => {
  it("is OpenSSH's: the bare address on port 22, [address]:port on any other", () => {
    assert.equal(knownHostsName('198.18.0.226', 22), '198.18.0.226');
    assert.equal(knownHostsName('198.18.0.226', 2222), '[198.18.0.226]:2222');
    assert.equal(knownHostsName('fd00::5', 22), 'fd00::5');
    assert.equal(knownHostsName('fd00::5', 2222), '[fd00::5]:2222');
  });
});
