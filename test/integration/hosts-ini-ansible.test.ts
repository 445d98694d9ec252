/**
 * The rendered hosts.ini read back by the real `ansible-inventory`: the groups, their hosts
 * and children, and the host variables must be exactly the intended ones.
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { renderHostsIni } from '../../src/plan/hosts-ini.js';
import type {
  Flavour,
  InventoryAccess,
  InventoryCluster,
  InventoryNode,
} from '../../src/plan/hosts-ini.js';

const run = promisify(execFile);

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

interface Group {
  hosts?: string[];
  children?: string[];
}

interface Case {
  name: string;
  cluster: InventoryCluster;
  flavour: Flavour;
  access?: InventoryAccess;
  nodes: InventoryNode[];
  /** Every group ansible lists with hosts or children, except `all` (checked separately). */
  groups: Record<string, Group>;
  /** The children of `all`: the top-level groups, plus ansible's own `ungrouped`. */
  top: string[];
  /** The cluster's pod network, and the variables every host must then get from it. */
  podSubnet?: string;
  podVars?: Record<string, string>;
}

const m1: InventoryNode = { name: 'master-1', ip: '192.168.20.11', roles: ['master'] };
const dual: InventoryNode = { name: 'node-a', ip: '192.168.20.12', roles: ['master', 'worker'] };
const w1: InventoryNode = { name: 'worker-1', ip: '192.168.20.21', roles: ['worker'] };
const w6: InventoryNode = { name: 'worker-6', ip: 'fd00:20::21', roles: ['worker'] };

const cases: Case[] = [
  {
    name: 'kud with a dual-role node and an IPv6 worker',
    cluster: { name: 'cluster-a' },
    flavour: 'kud',
    nodes: [m1, dual, w1, w6],
    groups: {
      'kube-master': { hosts: ['master-1', 'node-a'] },
      'kube-node': { hosts: ['node-a', 'worker-1', 'worker-6'] },
      etcd: { hosts: ['master-1', 'node-a'] },
      'ovn-central': { hosts: ['master-1', 'node-a'] },
      'ovn-controller': { hosts: ['node-a', 'worker-1', 'worker-6'] },
      virtlet: { hosts: ['node-a', 'worker-1', 'worker-6'] },
      'k8s-cluster': { children: ['kube-master', 'kube-node'] },
    },
    top: ['ungrouped', 'etcd', 'ovn-central', 'ovn-controller', 'virtlet', 'k8s-cluster'],
  },
  {
    name: 'kud for a virtlet-vm cluster',
    cluster: { name: 'vm', clusterType: 'virtlet-vm' },
    flavour: 'kud',
    nodes: [m1, w1],
    groups: {
      'kube-master': { hosts: ['master-1'] },
      'kube-node': { hosts: ['worker-1'] },
      etcd: { hosts: ['master-1'] },
      'k8s-cluster': { children: ['kube-master', 'kube-node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s-cluster'],
  },
  {
    name: 'kud for the ICN single-node shape (one dual-role node)',
    cluster: { name: 'edge-1' },
    flavour: 'kud',
    nodes: [dual],
    groups: {
      'kube-master': { hosts: ['node-a'] },
      'kube-node': { hosts: ['node-a'] },
      etcd: { hosts: ['node-a'] },
      'ovn-central': { hosts: ['node-a'] },
      'ovn-controller': { hosts: ['node-a'] },
      virtlet: { hosts: ['node-a'] },
      'k8s-cluster': { children: ['kube-master', 'kube-node'] },
    },
    top: ['ungrouped', 'etcd', 'ovn-central', 'ovn-controller', 'virtlet', 'k8s-cluster'],
  },
  {
    // Two masters: Kubespray refuses an even etcd group, so only the first runs etcd.
    name: 'kubespray with a dual-role node (two masters, one etcd member)',
    cluster: { name: 'cluster-b' },
    flavour: 'kubespray',
    nodes: [m1, dual, w1, w6],
    groups: {
      kube_control_plane: { hosts: ['master-1', 'node-a'] },
      kube_node: { hosts: ['node-a', 'worker-1', 'worker-6'] },
      etcd: { hosts: ['master-1'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s_cluster'],
  },
  {
    name: 'kubespray with four masters: three etcd members',
    cluster: { name: 'four' },
    flavour: 'kubespray',
    nodes: ['m1', 'm2', 'm3', 'm4'].map((name, i) => ({
      name,
      ip: `192.168.30.${i + 1}`,
      roles: ['master' as const],
    })),
    groups: {
      kube_control_plane: { hosts: ['m1', 'm2', 'm3', 'm4'] },
      etcd: { hosts: ['m1', 'm2', 'm3'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s_cluster'],
  },
  {
    name: 'kubespray with masters only (an empty kube_node group)',
    cluster: { name: 'cp-only' },
    flavour: 'kubespray',
    nodes: [m1],
    groups: {
      kube_control_plane: { hosts: ['master-1'] },
      etcd: { hosts: ['master-1'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s_cluster'],
  },
  {
    name: 'kubespray with a pod subnet: kube_pods_subnet on every host',
    cluster: { name: 'pods' },
    flavour: 'kubespray',
    nodes: [m1, w1],
    podSubnet: '10.244.64.0/18',
    podVars: { kube_pods_subnet: '10.244.64.0/18' },
    groups: {
      kube_control_plane: { hosts: ['master-1'] },
      kube_node: { hosts: ['worker-1'] },
      etcd: { hosts: ['master-1'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s_cluster'],
  },
  {
    name: 'kubespray on another SSH port, as a non-root user, with a Kubernetes version',
    cluster: { name: 'cluster-p', kubernetesVersion: 'v1.27.10' },
    flavour: 'kubespray',
    access: { user: 'debian', port: 2222 },
    nodes: [m1, w1],
    groups: {
      kube_control_plane: { hosts: ['master-1'] },
      kube_node: { hosts: ['worker-1'] },
      etcd: { hosts: ['master-1'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s_cluster'],
  },
  {
    name: 'kubespray with an IPv6 pod subnet: the IPv6-only stack',
    cluster: { name: 'pods6' },
    flavour: 'kubespray',
    nodes: [m1],
    podSubnet: 'fd00:10:244::/56',
    podVars: { kube_pods_subnet_ipv6: 'fd00:10:244::/56', ipv4_stack: 'false', ipv6_stack: 'true' },
    groups: {
      kube_control_plane: { hosts: ['master-1'] },
      etcd: { hosts: ['master-1'] },
      k8s_cluster: { children: ['kube_control_plane', 'kube_node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s_cluster'],
  },
  {
    name: 'kud with a pod subnet: kube_pods_subnet on every host',
    cluster: { name: 'kud-pods', clusterType: 'virtlet-vm' },
    flavour: 'kud',
    nodes: [m1, w1],
    podSubnet: '10.244.64.0/18',
    podVars: { kube_pods_subnet: '10.244.64.0/18' },
    groups: {
      'kube-master': { hosts: ['master-1'] },
      'kube-node': { hosts: ['worker-1'] },
      etcd: { hosts: ['master-1'] },
      'k8s-cluster': { children: ['kube-master', 'kube-node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s-cluster'],
  },
  {
    name: 'kud on another SSH port',
    cluster: { name: 'cluster-q', clusterType: 'virtlet-vm' },
    flavour: 'kud',
    access: { user: 'root', port: 2222 },
    nodes: [m1, w1],
    groups: {
      'kube-master': { hosts: ['master-1'] },
      'kube-node': { hosts: ['worker-1'] },
      etcd: { hosts: ['master-1'] },
      'k8s-cluster': { children: ['kube-master', 'kube-node'] },
    },
    top: ['ungrouped', 'etcd', 'k8s-cluster'],
  },
];

/** What ansible reads for a node: how to log in, Kubespray's addresses and etcd name, the version. */
function expectedVars(
  flavour: Flavour,
  node: InventoryNode,
  etcdMember: boolean,
  access: InventoryAccess = { user: 'root', port: 22 },
  version?: string,
): Record<string, unknown> {
  const { ip } = node;
  const vars: Record<string, unknown> =
    flavour === 'kud'
      ? { ansible_ssh_host: ip, ansible_ssh_port: access.port, ansible_user: access.user }
      : {
          ansible_host: ip,
          ansible_port: access.port,
          ansible_user: access.user,
          ip,
          access_ip: ip,
        };
  if (flavour === 'kubespray' && etcdMember) vars['etcd_member_name'] = node.name;
  if (version !== undefined) vars['kube_version'] = version;
  return vars;
}

function sortedGroup(g: Group): Group {
  const out: Group = {};
  if (g.hosts) out.hosts = [...g.hosts].sort();
  if (g.children) out.children = [...g.children].sort();
  return out;
}

describe('hosts.ini read by ansible-inventory', function () {
  this.timeout(120_000);
  let dir = '';

  before(function () {
    if (!onPath('ansible-inventory')) {
      console.log('ansible-inventory is not on PATH (install ansible-core); skipping');
      this.skip();
    }
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-hosts-ini-'));
  });

  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function inventory(text: string): Promise<Record<string, unknown>> {
    const home = join(dir, 'home');
    await mkdir(home);
    await writeFile(join(dir, 'hosts.ini'), text);
    const { stdout } = await run('ansible-inventory', ['-i', 'hosts.ini', '--list'], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        ANSIBLE_LOCAL_TEMP: join(dir, 'local-tmp'),
        ANSIBLE_REMOTE_TEMP: join(dir, 'remote-tmp'),
        // Only the ini parser, and a file it cannot read is an error, not an empty inventory.
        ANSIBLE_INVENTORY_ENABLED: 'ini',
        ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true',
        ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED: 'true',
        ANSIBLE_NOCOLOR: '1',
      },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  for (const c of cases) {
    it(c.name, async () => {
      const parsed = await inventory(
        renderHostsIni(c.cluster, c.nodes, c.flavour, { podSubnet: c.podSubnet, access: c.access }),
      );
      const { _meta: meta, all, ...groups } = parsed;
      const sortedActual: Record<string, Group> = {};
      for (const [k, v] of Object.entries(groups)) sortedActual[k] = sortedGroup(v as Group);
      const sortedExpected: Record<string, Group> = {};
      for (const [k, v] of Object.entries(c.groups)) sortedExpected[k] = sortedGroup(v);
      assert.deepEqual(sortedActual, sortedExpected);
      assert.deepEqual(sortedGroup(all as Group), { children: [...c.top].sort() });

      const hostvars = (meta as { hostvars: Record<string, unknown> }).hostvars;
      const expected: Record<string, unknown> = {};
      for (const n of c.nodes)
        expected[n.name] = {
          ...expectedVars(
            c.flavour,
            n,
            (c.groups['etcd']?.hosts ?? []).includes(n.name),
            c.access,
            c.cluster.kubernetesVersion,
          ),
          ...(c.podVars ?? {}),
        };
      assert.deepEqual(hostvars, expected);
    });
  }

  it('a 200-node kubespray inventory keeps every node and role', async () => {
    const nodes: InventoryNode[] = [];
    for (let i = 0; i < 200; i++) {
      nodes.push({
        name: `n${i}`,
        ip: `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        roles: i < 3 ? ['master'] : i < 5 ? ['master', 'worker'] : ['worker'],
      });
    }
    const parsed = await inventory(renderHostsIni({ name: 'big' }, nodes, 'kubespray'));
    const group = (name: string): string[] =>
      [...((parsed[name] as Group | undefined)?.hosts ?? [])].sort();
    const names = (from: number, to: number): string[] =>
      Array.from({ length: to - from }, (_, k) => `n${from + k}`).sort();
    assert.deepEqual(group('kube_control_plane'), names(0, 5));
    assert.deepEqual(group('etcd'), names(0, 5));
    assert.deepEqual(group('kube_node'), names(3, 200));
    const hostvars = (parsed._meta as { hostvars: Record<string, Record<string, unknown>> })
      .hostvars;
    assert.equal(Object.keys(hostvars).length, 200);
    assert.deepEqual(
      hostvars.n199,
      expectedVars('kubespray', { name: 'n199', ip: '10.1.0.200', roles: ['worker'] }, false),
    );
  });
});
