/**
 * The Ansible inventory (hosts.ini) of one cluster, in the group layout of the installer:
 * `kud` (the ICN/KUD group names, with ovn and virtlet groups) or `kubespray` (its current
 * group names). Every host line carries how bpa itself reaches the host (address, port and
 * user), so the installer logs in exactly as bpa does (become is the installer's environment,
 * as `-b` is on Kubespray's command line: see ansibleEnv). Every
 * value written is checked first, so no name or address can add a line, a group or a
 * variable to the file.
 */
import { isIP } from 'node:net';
import { StalledError } from '../util/errors.js';
import type { Role } from '../validate/model.js';

export type Flavour = 'kud' | 'kubespray';

export interface InventoryNode {
  name: string;
  ip: string;
  roles: Role[];
}

/** How bpa logs in to the nodes (and so the installer must). */
export interface InventoryAccess {
  user: string;
  port: number;
}

export interface InventoryCluster {
  name: string;
  clusterType?: string;
  /** Kubespray's `kube_version`, e.g. `v1.27.10`; absent: the installer's default. */
  kubernetesVersion?: string;
}

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const USER = /^[a-z_][a-z0-9_-]{0,31}$/;
const VERSION = /^v\d{1,3}\.\d{1,3}\.\d{1,3}$/;

function check(
  cluster: InventoryCluster,
  nodes: readonly InventoryNode[],
  access: InventoryAccess,
): void {
  if (!SUBDOMAIN.test(cluster.name)) {
    throw new StalledError(
      'HOSTS_INI_INVALID',
      `cluster name ${JSON.stringify(cluster.name)} is not a valid Kubernetes name`,
    );
  }
  if (
    !USER.test(access.user) ||
    !Number.isInteger(access.port) ||
    access.port < 1 ||
    access.port > 65535
  ) {
    throw new StalledError(
      'HOSTS_INI_INVALID',
      `cluster ${cluster.name}: SSH user ${JSON.stringify(access.user)} or port ${JSON.stringify(access.port)} is not valid`,
    );
  }
  if (cluster.kubernetesVersion !== undefined && !VERSION.test(cluster.kubernetesVersion)) {
    throw new StalledError(
      'HOSTS_INI_INVALID',
      `cluster ${cluster.name}: Kubernetes version ${JSON.stringify(cluster.kubernetesVersion)} is not vMAJOR.MINOR.PATCH`,
    );
  }
  const seen = new Set<string>();
  for (const n of nodes) {
    if (!LABEL.test(n.name))
      throw new StalledError('HOSTS_INI_INVALID', `${where(cluster, n)} is not an RFC 1123 label`);
    if (seen.has(n.name))
      throw new StalledError('HOSTS_INI_INVALID', `${where(cluster, n)} is listed twice`);
    seen.add(n.name);
    // isIP alone admits IPv6 zone ids ("fe80::1%eth0"); an inventory wants a plain address.
    if (!/^[0-9a-fA-F:.]+$/.test(n.ip) || isIP(n.ip) === 0) {
      throw new StalledError(
        'HOSTS_INI_INVALID',
        `${where(cluster, n)}: ${JSON.stringify(n.ip)} is not an IP address`,
      );
    }
    if (!n.roles.includes('master') && !n.roles.includes('worker')) {
      throw new StalledError(
        'HOSTS_INI_INVALID',
        `${where(cluster, n)} has neither the master nor the worker role`,
      );
    }
  }
}

/** Where a node's problem is, written only for a problem: the check runs for every node. */
function where(cluster: InventoryCluster, n: InventoryNode): string {
  return `cluster ${cluster.name}: node ${JSON.stringify(n.name)}`;
}

function section(name: string, lines: readonly string[]): string {
  return lines.length ? `[${name}]\n${lines.join('\n')}\n` : `[${name}]\n`;
}

export interface HostsIniOptions {
  /**
   * Kubespray: the etcd members, an odd number of masters (default: `chooseEtcd` of the
   * masters in node order). KUD keeps ICN's layout: every master is an etcd member.
   */
  etcd?: readonly string[];
  /**
   * The cluster's pod network (Provisioning `PodSubnet`), given to Kubespray (and KUD, which
   * runs Kubespray) as a variable of the cluster group: `kube_pods_subnet`, or for an IPv6
   * network `kube_pods_subnet_ipv6` with the IPv6-only stack switches.
   */
  podSubnet?: string;
  /** How Ansible logs in: the same user and port as bpa (default root on 22). */
  access?: InventoryAccess;
}

/** The group variables that carry a pod subnet, checked so nothing else can reach the file. */
export function podSubnetVars(cluster: string, cidr: string): string[] {
  const slash = cidr.indexOf('/');
  const addr = cidr.slice(0, slash);
  const bits = Number(cidr.slice(slash + 1));
  const family = /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(cidr) ? isIP(addr) : 0;
  if (family === 0 || bits > (family === 4 ? 32 : 128)) {
    throw new StalledError(
      'HOSTS_INI_INVALID',
      `cluster ${cluster}: pod subnet ${JSON.stringify(cidr)} is not a CIDR`,
    );
  }
  return family === 4
    ? [`kube_pods_subnet=${cidr}`]
    : [`kube_pods_subnet_ipv6=${cidr}`, 'ipv4_stack=false', 'ipv6_stack=true'];
}

/**
 * The etcd members of a Kubespray cluster: every master when their number is odd, else all
 * but one. Kubespray refuses an even etcd group (its inventory check fails once the run has
 * started), and an even member count tolerates no more failures than one member less.
 * Members of `prefer` (masters already running etcd) are kept first, then masters in the
 * order given; the result is in the order given.
 */
export function chooseEtcd(
  masters: readonly string[],
  prefer: ReadonlySet<string> = new Set(),
): string[] {
  const count = masters.length % 2 === 1 ? masters.length : masters.length - 1;
  const ranked = [
    ...masters.filter((m) => prefer.has(m)),
    ...masters.filter((m) => !prefer.has(m)),
  ];
  const chosen = new Set(ranked.slice(0, Math.max(count, 0)));
  return masters.filter((m) => chosen.has(m));
}

function checkEtcd(cluster: string, etcd: readonly string[], masters: readonly string[]): void {
  // No master at all is not an etcd question (validation and placement report it).
  const odd = etcd.length % 2 === 1 || (masters.length === 0 && etcd.length === 0);
  const stray = etcd.find((e) => !masters.includes(e));
  if (!odd || stray !== undefined || new Set(etcd).size !== etcd.length) {
    throw new StalledError(
      'HOSTS_INI_INVALID',
      `cluster ${cluster}: etcd members ${etcd.join(', ') || '(none)'} must be an odd number of distinct masters`,
    );
  }
}

/** The variables of a host line that say how to log in: port and user. */
function login(flavour: Flavour, access: InventoryAccess): string {
  const port = flavour === 'kud' ? 'ansible_ssh_port' : 'ansible_port';
  return `${port}=${access.port} ansible_user=${access.user}`;
}

export function renderHostsIni(
  cluster: InventoryCluster,
  nodes: readonly InventoryNode[],
  flavour: Flavour,
  opts: HostsIniOptions = {},
): string {
  const access = opts.access ?? { user: 'root', port: 22 };
  check(cluster, nodes, access);
  const auth = login(flavour, access);
  const masters = nodes.filter((n) => n.roles.includes('master')).map((n) => n.name);
  const workers = nodes.filter((n) => n.roles.includes('worker')).map((n) => n.name);
  const sections: string[] = [];
  if (flavour === 'kud') {
    sections.push(
      section(
        'all',
        nodes.map((n) => `${n.name} ansible_ssh_host=${n.ip} ${auth}`),
      ),
      section('kube-master', masters),
      section('kube-node', workers),
      section('etcd', masters),
    );
    // A virtlet-vm cluster runs its workloads in VMs, without the ovn network or virtlet.
    if (cluster.clusterType !== 'virtlet-vm') {
      sections.push(
        section('ovn-central', masters),
        section('ovn-controller', workers),
        section('virtlet', workers),
      );
    }
    sections.push(section('k8s-cluster:children', ['kube-node', 'kube-master']));
    if (opts.podSubnet !== undefined)
      sections.push(section('k8s-cluster:vars', podSubnetVars(cluster.name, opts.podSubnet)));
  } else {
    const etcd = opts.etcd ?? chooseEtcd(masters);
    checkEtcd(cluster.name, etcd, masters);
    sections.push(
      section(
        'all',
        nodes.map((n) => `${n.name} ansible_host=${n.ip} ${auth} ip=${n.ip} access_ip=${n.ip}`),
      ),
      section('kube_control_plane', masters),
      section('kube_node', workers),
      // Kubespray names members etcd1, etcd2, … by their place in the group unless told:
      // a change of the group would rename members of a running etcd.
      section(
        'etcd',
        masters.filter((m) => etcd.includes(m)).map((n) => `${n} etcd_member_name=${n}`),
      ),
      section('k8s_cluster:children', ['kube_control_plane', 'kube_node']),
    );
    if (opts.podSubnet !== undefined)
      sections.push(section('k8s_cluster:vars', podSubnetVars(cluster.name, opts.podSubnet)));
  }
  if (cluster.kubernetesVersion !== undefined) {
    sections.push(section('all:vars', [`kube_version=${cluster.kubernetesVersion}`]));
  }
  return `# generated by bpa for cluster ${cluster.name}; do not edit\n\n${sections.join('\n')}`;
}
