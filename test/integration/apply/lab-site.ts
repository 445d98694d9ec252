import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LabHost } from '../../lab/lab.js';

export interface LabSiteNode {
  name: string;
  roles: Array<'master' | 'worker'>;
  /** Index into lab.hosts of the host it is pinned to. */
  host: number;
}

export interface LabSiteOptions {
  cluster?: string;
  nodes: LabSiteNode[];
  plugins?: string[];
  podSubnet?: string;
  /** spec.kubernetesVersion of the Provisioning. */
  kubernetesVersion?: string;
  masterSoftware?: string[];
  workerSoftware?: string[];
  extraSite?: string;
  /** Lines added to the Cluster document's spec (indented two spaces). */
  clusterSpec?: string[];
}

/**
 * Writes a site for lab hosts: a BareMetalHost per lab host (eligible, its MAC and some
 * hardware) and one cluster whose nodes are pinned to hosts by MAC. Returns the directory.
 */
export async function writeLabSite(
  hosts: readonly LabHost[],
  opts: LabSiteOptions,
  dir?: string,
): Promise<string> {
  const root = dir ?? (await mkdtemp(join(tmpdir(), 'bpa-lab-site-')));
  await mkdir(join(root, 'inventory'), { recursive: true });
  await writeFile(join(root, 'inventory', 'hosts.yaml'), hosts.map((h) => bmh(h)).join('---\n'));
  await updateLabSite(root, hosts, opts);
  return root;
}

/** Rewrites the cluster documents (a person's pull request). */
export async function updateLabSite(
  root: string,
  hosts: readonly LabHost[],
  opts: LabSiteOptions,
): Promise<void> {
  const cluster = opts.cluster ?? 'lab';
  const entry = (n: LabSiteNode): string =>
    `    - ${n.name}:\n        mac-address: "${hosts[n.host]?.mac}"\n`;
  const masters = opts.nodes.filter((n) => n.roles.includes('master'));
  const workers = opts.nodes.filter((n) => n.roles.includes('worker'));
  const list = (items: string[]): string =>
    items.length ? items.map((s) => `    - ${s}\n`).join('') : '    []\n';
  await writeFile(
    join(root, 'cluster.yaml'),
    `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata:
  name: ${cluster}
  labels:
    cluster: ${cluster}
spec:
  provisioningCR: ${cluster}-provisioning
  softwareCR: ${cluster}-software
${(opts.clusterSpec ?? []).map((l) => `${l}\n`).join('')}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: ${cluster}-provisioning
  labels:
    cluster: ${cluster}
spec:
  masters:
${masters.map(entry).join('')}${workers.length ? `  workers:\n${workers.map(entry).join('')}` : ''}${opts.plugins?.length ? `  KUDPlugins:\n${opts.plugins.map((p) => `    - ${p}\n`).join('')}` : ''}${opts.podSubnet ? `  PodSubnet: ${opts.podSubnet}\n` : ''}${opts.kubernetesVersion ? `  kubernetesVersion: ${opts.kubernetesVersion}\n` : ''}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata:
  name: ${cluster}-software
  labels:
    cluster: ${cluster}
spec:
  masterSoftware:
${list(opts.masterSoftware ?? [])}  workerSoftware:
${list(opts.workerSoftware ?? [])}${opts.extraSite ? `---\n${opts.extraSite}` : ''}`,
  );
}

function bmh(h: LabHost): string {
  return `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: ${h.name}
  namespace: lab
spec:
  online: true
  bootMACAddress: "${h.mac}"
status:
  poweredOn: true
  operationalStatus: OK
  errorMessage: ""
  errorCount: 0
  provisioningFailCount: 0
  provisioning:
    ID: 6f1e0c2a-3b4d-4e5f-8a9b-${h.mac.replaceAll(':', '')}
    state: externally provisioned
  hardware:
    cpu:
      count: 4
    ramMebibytes: 8192
    nics:
      - name: eth0
        mac: "${h.mac}"
        ip: ${h.ip}
`;
}
