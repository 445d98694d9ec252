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
    const where = `cluster ${cluster.name}: node ${JSON.stringify(n.name)}`;
    if (!LABEL.test(n.name))
      throw new StalledError('HOSTS_INI_INVALID', `${where} is not an RFC 1123 label`);
    if (seen.has(n.name)) throw new StalledError('HOSTS_INI_INVALID', `${where} is listed twice`);
    seen.add(n.name);
    // isIP alone admits IPv6 zone ids ("fe80::1%eth0"); an inventory wants a plain address.
    if (!/^[0-9a-fA-F:.]+$/.test(n.ip) || isIP(n.ip) === 0) {
      throw new StalledError(
        'HOSTS_INI_INVALID',
        `${where}: ${JSON.stringify(n.ip)} is not an IP address`,
      );
    }
    if (!n.roles.includes('master') && !n.roles.includes('worker')) {
      throw new StalledError(
        'HOSTS_INI_INVALID',
        `${where} has neither the master nor the worker role`,
      );
    }
  }
}

function section(name: string, lines: readonly string[]): string {
  return `[${name}]\n${lines.map((l) => `${l}\n`).join('')}`;
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
  access: InventoryAccess = { user: 'root', port: 22 },
): string {
  check(cluster, nodes, access);
  const masters = nodes.filter((n) => n.roles.includes('master')).map((n) => n.name);
  const workers = nodes.filter((n) => n.roles.includes('worker')).map((n) => n.name);
  const etcd = masters;
  const sections: string[] = [];
  if (flavour === 'kud') {
    sections.push(
      section(
        'all',
        nodes.map((n) => `${n.name} ansible_ssh_host=${n.ip} ${login(flavour, access)}`),
      ),
      section('kube-master', masters),
      section('kube-node', workers),
      section('etcd', etcd),
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
  } else {
    sections.push(
      section(
        'all',
        nodes.map(
          (n) =>
            `${n.name} ansible_host=${n.ip} ${login(flavour, access)} ip=${n.ip} access_ip=${n.ip}`,
        ),
      ),
      section('kube_control_plane', masters),
      section('kube_node', workers),
      // Kubespray names members etcd1, etcd2, … by their place in the group unless told:
      // a change of the group would rename members of a running etcd.
      section(
        'etcd',
        etcd.map((n) => `${n} etcd_member_name=${n}`),
      ),
      section('k8s_cluster:children', ['kube_control_plane', 'kube_node']),
    );
  }
  if (cluster.kubernetesVersion !== undefined) {
    sections.push(section('all:vars', [`kube_version=${cluster.kubernetesVersion}`]));
  }
  return `# generated by bpa for cluster ${cluster.name}; do not edit\n\n${sections.join('\n')}`;
}
