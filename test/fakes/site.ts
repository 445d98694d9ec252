/**
 * A small site on disk for tests that run the real pipeline over in-memory ports: embedded
 * BareMetalHosts (addresses from their inventory, no lease file) and one cluster.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OPTIONS, resolveConfig, type Config, type OptionName } from '../../src/config/options.js';

export interface SiteNode {
  name: string;
  roles: Array<'master' | 'worker'>;
  /** Index of the host it is pinned to (by MAC). */
  host: number;
}

export interface SiteSpec {
  cluster?: string;
  nodes: SiteNode[];
  /** `name` or `name=version`. */
  masterSoftware?: string[];
  workerSoftware?: string[];
  plugins?: string[];
  /** Provisioning spec.PodSubnet and spec.kubernetesVersion. */
  podSubnet?: string;
  kubernetesVersion?: string;
  /** Lines added to the Cluster document's spec (indented two spaces), e.g. "  suspend: true". */
  clusterSpec?: string[];
  /** A Site document with these spec lines (indented two spaces); absent: no Site document. */
  siteSpec?: string[];
  /** Another cluster of the same site (in a subdirectory): no inventory, no Site document. */
  extraCluster?: boolean;
}

export const HOSTS = 6;

export function hostMac(i: number): string {
  return `52:54:00:aa:00:${(i + 1).toString(16).padStart(2, '0')}`;
}

export function hostIp(i: number): string {
  return `198.18.7.${i + 11}`;
}

/** Writes (or rewrites) the site in `dir`: the inventory and the cluster's documents. */
export async function writeSite(dir: string, spec: SiteSpec): Promise<void> {
  await mkdir(join(dir, 'inventory'), { recursive: true });
  if (!spec.extraCluster)
    await writeFile(
      join(dir, 'inventory', 'hosts.yaml'),
      Array.from({ length: HOSTS }, (_, i) => bmh(i)).join('---\n'),
    );
  const cluster = spec.cluster ?? 'east';
  const entry = (n: SiteNode): string =>
    `    - ${n.name}:\n        mac-address: "${hostMac(n.host)}"\n`;
  const masters = spec.nodes.filter((n) => n.roles.includes('master'));
  const workers = spec.nodes.filter((n) => n.roles.includes('worker'));
  const software = (items: string[] | undefined): string =>
    items?.length
      ? items
          .map((s) => {
            const [name, version] = s.split('=');
            return version ? `    - ${name}:\n        version: "${version}"\n` : `    - ${name}\n`;
          })
          .join('')
      : '    []\n';
  await writeFile(
    join(dir, 'cluster.yaml'),
    `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata:
  name: ${cluster}
  labels:
    cluster: ${cluster}
spec:
  provisioningCR: ${cluster}-provisioning
  softwareCR: ${cluster}-software
${(spec.clusterSpec ?? []).map((l) => `${l}\n`).join('')}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: ${cluster}-provisioning
  labels:
    cluster: ${cluster}
spec:
  masters:
${masters.map(entry).join('')}${workers.length ? `  workers:\n${workers.map(entry).join('')}` : ''}${spec.plugins?.length ? `  KUDPlugins:\n${spec.plugins.map((p) => `    - ${p}\n`).join('')}` : ''}${spec.podSubnet ? `  PodSubnet: ${spec.podSubnet}\n` : ''}${spec.kubernetesVersion ? `  kubernetesVersion: ${spec.kubernetesVersion}\n` : ''}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata:
  name: ${cluster}-software
  labels:
    cluster: ${cluster}
spec:
  masterSoftware:
${software(spec.masterSoftware)}  workerSoftware:
${software(spec.workerSoftware)}`,
  );
  const siteFile = join(dir, 'site.yaml');
  if (spec.extraCluster) return;
  if (spec.siteSpec)
    await writeFile(
      siteFile,
      `apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: test-site\nspec:\n${spec.siteSpec.map((l) => `${l}\n`).join('')}`,
    );
  else await rm(siteFile, { force: true });
}

/** The configuration a command would resolve, with these flags given. */
export function configWith(
  flags: Partial<Record<OptionName, unknown>>,
): (site: Record<string, unknown> | undefined) => Config {
  const names = Object.keys(OPTIONS) as OptionName[];
  return (site) => resolveConfig(names, flags, {}, site);
}

function bmh(i: number): string {
  return `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-${i + 1}
  namespace: metal3
spec:
  online: true
  bootMACAddress: "${hostMac(i)}"
status:
  poweredOn: true
  operationalStatus: OK
  errorMessage: ""
  errorCount: 0
  provisioningFailCount: 0
  provisioning:
    ID: 6f1e0c2a-3b4d-4e5f-8a9b-${String(i + 1).padStart(12, '0')}
    state: externally provisioned
  hardware:
    cpu:
      count: 8
    ramMebibytes: 16384
    nics:
      - name: eth0
        mac: "${hostMac(i)}"
        ip: ${hostIp(i)}
`;
}
