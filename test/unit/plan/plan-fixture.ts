import { identityMacs, type Host } from '../../../src/observe/types.js';
import { hostKey } from '../../../src/observe/inventory/hosts.js';
import type { AppliedCluster, AppliedState } from '../../../src/state/applied.js';
import type { ClusterModel, NodeSpec, PackageSpec } from '../../../src/validate/model.js';
import type { Lease } from '../../../src/observe/types.js';

/**
 * Host `n`; its key and identity MACs follow from `over`'s name, namespace, boot MAC and NICs,
 * unless it gives them.
 */
export function host(n: number, over: Partial<Host> = {}): Host {
  const mac = `52:54:00:00:00:${n.toString(16).padStart(2, '0')}`;
  const h: Omit<Host, 'key' | 'macs'> & Partial<Pick<Host, 'key' | 'macs'>> = {
    name: `node-${n}`,
    namespace: 'metal3',
    bootMac: mac,
    nics: [{ mac, ips: [] }],
    cpuCount: 16,
    ramMebibytes: 65536,
    sriov: false,
    qat: false,
    labels: {},
    eligible: true,
    origin: `hosts.yaml`,
    ...over,
  };
  return { ...h, key: h.key ?? hostKey(h), macs: h.macs ?? identityMacs(h.bootMac, h.nics) };
}

export function leasesFor(hosts: Host[]): Map<string, Lease> {
  return new Map(
    hosts.map((h, i) => [
      h.bootMac ?? '',
      { mac: h.bootMac ?? '', ip: `198.18.0.${10 + i}`, origin: `leases:${i + 1}` },
    ]),
  );
}

export function node(
  name: string,
  roles: NodeSpec['roles'],
  over: Partial<NodeSpec> = {},
): NodeSpec {
  return { name, roles, pointer: `/spec/${roles[0]}s/0/${name}`, ...over };
}

export function cluster(
  name: string,
  nodes: NodeSpec[],
  over: Partial<ClusterModel> = {},
): ClusterModel {
  return {
    name,
    provisioning: {
      name: `${name}-provisioning`,
      ref: { file: `${name}/provisioning.yaml`, doc: 0 },
    },
    software: { name: `${name}-software`, ref: { file: `${name}/software.yaml`, doc: 0 } },
    nodes,
    plugins: [],
    masterSoftware: [],
    workerSoftware: [],
    ...over,
  };
}

export function appliedFrom(clusters: AppliedCluster[]): AppliedState {
  return { clusters: new Map(clusters.map((c) => [c.cluster, c])) };
}

export function applied(
  name: string,
  nodes: AppliedCluster['nodes'],
  over: Partial<AppliedCluster> = {},
  packages: { master?: PackageSpec[]; worker?: PackageSpec[] } = {},
): AppliedCluster {
  return {
    cluster: name,
    appliedAt: '2026-11-01T00:00:00Z',
    nodes,
    plugins: [],
    packages: { master: packages.master ?? [], worker: packages.worker ?? [] },
    ...over,
  };
}
