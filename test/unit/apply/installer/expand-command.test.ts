/**
 * The installer's command template: split into argv first, placeholders filled in per
 * argument, every value checked, so no value can add an argument, an option or a command.
 */
import { strict as assert } from 'node:assert';
import { expandCommand, type InstallerVars } from '../../../../src/apply/installer/local.js';
import { BpaError } from '../../../../src/util/errors.js';

const vars: InstallerVars = {
  cluster: 'edge-1',
  clusterDir: '/var/lib/bpa/clusters/edge-1',
  inventory: '/var/lib/bpa/clusters/edge-1/hosts.ini',
  plugins: ['multus', 'ovn4nfv'],
  nodes: ['worker-3', 'worker-4'],
};

function rejects(template: string, v: Partial<InstallerVars>, pattern: RegExp): void {
  assert.throws(
    () => expandCommand(template, { ...vars, ...v }),
    (err: unknown) => {
      assert.ok(err instanceof BpaError, `not a BpaError: ${String(err)}`);
      assert.equal(err.code, 'INSTALLER_COMMAND_INVALID');
      assert.equal(err.retry, 'stalled');
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe('expandCommand', () => {
  it('fills every placeholder, inside arguments too, lists comma-joined', () => {
    const argv = expandCommand(
      'installer/reference/run.sh scale {clusterDir} {inventory} {nodes} --cluster={cluster} -e plugins={plugins}',
      vars,
    );
    assert.deepEqual(argv, [
      'installer/reference/run.sh',
      'scale',
      '/var/lib/bpa/clusters/edge-1',
      '/var/lib/bpa/clusters/edge-1/hosts.ini',
      'worker-3,worker-4',
      '--cluster=edge-1',
      '-e',
      'plugins=multus,ovn4nfv',
    ]);
  });

  it('splits on any whitespace and drops empty words', () => {
    const argv = expandCommand('  ansible-playbook\t-i {inventory}\n cluster.yml  ', vars);
    assert.deepEqual(argv, ['ansible-playbook', '-i', vars.inventory, 'cluster.yml']);
  });

  it('keeps a value in one argument whatever placeholder it fills', () => {
    const argv = expandCommand('kud --limit {nodes}{cluster}', { ...vars, nodes: ['w1'] });
    assert.deepEqual(argv, ['kud', '--limit', 'w1edge-1']);
  });

  it('allows an empty plugin list and needs no nodes when {nodes} is not used', () => {
    const argv = expandCommand('installer --cluster {cluster} --plugins={plugins}', {
      ...vars,
      plugins: [],
      nodes: [],
    });
    assert.deepEqual(argv, ['installer', '--cluster', 'edge-1', '--plugins=']);
  });

  it('does not validate values the template does not use', () => {
    const argv = expandCommand('installer {cluster}', { ...vars, nodes: ['$(reboot)'] });
    assert.deepEqual(argv, ['installer', 'edge-1']);
  });

  it('rejects an unknown placeholder, naming the known ones', () => {
    rejects('installer {cluster} {password}', {}, /unknown placeholder \{password\}.*\{nodes\}/);
    rejects('installer {Cluster}', {}, /unknown placeholder \{Cluster\}/);
    rejects('installer -e {"a":1}', {}, /unknown placeholder/);
  });

  it('gives the pod subnet as {podSubnet}, and refuses it for a cluster that has none', () => {
    assert.deepEqual(
      expandCommand('installer --cluster {cluster} --network {podSubnet}', {
        ...vars,
        podSubnet: '10.244.64.0/18',
      }),
      ['installer', '--cluster', 'edge-1', '--network', '10.244.64.0/18'],
    );
    assert.deepEqual(
      expandCommand('x -e kube_pods_subnet={podSubnet}', { ...vars, podSubnet: 'fd00:10::/56' }),
      ['x', '-e', 'kube_pods_subnet=fd00:10::/56'],
    );
    rejects(
      'installer --network {podSubnet}',
      {},
      /uses \{podSubnet\} but cluster "edge-1" has no PodSubnet/,
    );
    rejects('installer --network {podSubnet}', { podSubnet: '10.0.0.0/8 -e x=1' }, /not a CIDR/);
  });

  it('rejects an empty template', () => {
    rejects('   ', {}, /empty/);
  });

  it('rejects {nodes} with no nodes: a scale path without a limit would touch every host', () => {
    rejects('run.sh scale {inventory} {nodes}', { nodes: [] }, /no nodes/);
  });

  const injections: Array<[string, Partial<InstallerVars>, string]> = [
    ['a cluster name with a command substitution', { cluster: 'a$(reboot)' }, '{cluster}'],
    ['a cluster name with a space', { cluster: 'a b' }, '{cluster}'],
    ['a cluster name starting an option', { cluster: '--help' }, '{cluster}'],
    ['a cluster name in upper case', { cluster: 'Edge' }, '{cluster}'],
    ['a node name with a semicolon', { nodes: ['w1;rm -rf /'] }, '{nodes}'],
    ['a node name with a comma (two limits in one)', { nodes: ['w1,all'] }, '{nodes}'],
    ['a node name that is an ansible pattern', { nodes: ['all'] }, '{nodes}'],
    ['a node name that is an inventory group', { nodes: ['w1', 'kube-node'] }, '{nodes}'],
    ['a node name with a glob', { nodes: ['w*'] }, '{nodes}'],
    ['a node name starting an option', { nodes: ['-e'] }, '{nodes}'],
    ['a node name with a newline', { nodes: ['w1\nw2'] }, '{nodes}'],
    ['a plugin with an extra variable', { plugins: ['x ansible_user=evil'] }, '{plugins}'],
    ['a plugin starting an option', { plugins: ['-v'] }, '{plugins}'],
    ['a plugin with a quote', { plugins: ["multus'"] }, '{plugins}'],
    ['a relative cluster directory', { clusterDir: 'clusters/edge-1' }, '{clusterDir}'],
    ['a cluster directory with a space', { clusterDir: '/tmp/a b' }, '{clusterDir}'],
    ['an inventory path with a newline', { inventory: '/tmp/x\n-e' }, '{inventory}'],
    ['an inventory path that is an option', { inventory: '--inventory=/etc' }, '{inventory}'],
  ];
  for (const [what, v, placeholder] of injections) {
    it(`rejects ${what}`, () => {
      rejects(
        `installer ${placeholder}`,
        v,
        /not a valid name|absolute path|no nodes|group or pattern/,
      );
    });
  }

  it('accepts node names a real site uses', () => {
    const nodes = ['master-1', 'w0', 'node-a1b2', 'a'.repeat(63)];
    assert.deepEqual(expandCommand('x {nodes}', { ...vars, nodes }), ['x', nodes.join(',')]);
    rejects('x {nodes}', { nodes: ['a'.repeat(64)] }, /not a valid name/);
  });
});
