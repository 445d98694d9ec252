/**
 * Generates a large, valid site for benchmarks: N clusters and H BareMetalHosts, about
 * 1.2 kB of YAML per host. Half of each cluster's nodes are pinned by MAC, half chosen by
 * resources. Also writes a dnsmasq lease file with one lease per host.
 *
 *   npx tsx bench/gen-site.ts OUT_DIR [clusters=1000] [hosts=10000]
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface GeneratedSite {
  dir: string;
  clusters: number;
  hosts: number;
  files: number;
  documents: number;
  bytes: number;
  leaseFile: string;
}

const mac = (i: number): string => {
  const b = [0x52, 0x54, 0x00, (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff];
  return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
};
const ip = (i: number): string => `198.18.${(i >> 8) & 0xff}.${i & 0xff}`;

const PROFILES = [
  { cpu: 16, ram: 65536, sriov: false },
  { cpu: 32, ram: 131072, sriov: true },
  { cpu: 8, ram: 32768, sriov: false },
];

export async function generateSite(
  dir: string,
  clusters: number,
  hosts: number,
): Promise<GeneratedSite> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, 'inventory'), { recursive: true });
  await mkdir(join(dir, 'leases'), { recursive: true });
  let files = 0;
  let documents = 0;
  let bytes = 0;
  const put = async (path: string, text: string, docs: number): Promise<void> => {
    await writeFile(join(dir, path), text);
    files++;
    documents += docs;
    bytes += Buffer.byteLength(text);
  };
  const nodesPerCluster = Math.max(2, Math.floor((hosts * 0.9) / clusters));
  const masters = nodesPerCluster >= 6 ? 3 : 1;
  let nextHost = 0;
  for (let c = 0; c < clusters; c++) {
    const name = `cluster-${String(c).padStart(4, '0')}`;
    await mkdir(join(dir, 'clusters', name), { recursive: true });
    const lines: string[] = [];
    const entry = (role: string, n: number, i: number): void => {
      const byMac = i % 2 === 0;
      const host = nextHost++;
      const p = PROFILES[host % PROFILES.length]!;
      lines.push(`    - ${role}-${n}:`);
      if (byMac) lines.push(`        mac-address: "${mac(host)}"`);
      lines.push(`        cpu: ${p.cpu / 2}`, `        memory: ${p.ram / 2048}Gi`);
    };
    lines.push('  masters:');
    for (let m = 0; m < masters; m++) entry('master', m + 1, m);
    lines.push('  workers:');
    for (let w = 0; w < nodesPerCluster - masters; w++) entry('worker', w + 1, w + masters);
    await put(
      `clusters/${name}/cluster.yaml`,
      `apiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\n  labels:\n    cluster: ${name}\n    owner: bench\nspec:\n  provisioningCR: ${name}-provisioning\n  softwareCR: ${name}-software\n`,
      1,
    );
    await put(
      `clusters/${name}/provisioning.yaml`,
      `apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata:\n  name: ${name}-provisioning\n  labels:\n    cluster: ${name}\n    owner: bench\nspec:\n${lines.join('\n')}\n  KUDPlugins:\n    - emco\n  PodSubnet: 10.244.64.0/18\n`,
      1,
    );
    await put(
      `clusters/${name}/software.yaml`,
      `apiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata:\n  name: ${name}-software\n  labels:\n    cluster: ${name}\nspec:\n  masterSoftware:\n    - htop\n    - jq:\n        version: 1.6-2.1\n  workerSoftware:\n    - curl\n    - tmux\n`,
      1,
    );
  }
  const perFile = 10;
  const leases: string[] = [];
  for (let f = 0; f * perFile < hosts; f++) {
    const docs: string[] = [];
    for (let h = f * perFile; h < Math.min(hosts, (f + 1) * perFile); h++) {
      const p = PROFILES[h % PROFILES.length]!;
      docs.push(bmh(h, p));
      leases.push(`4102444800 ${mac(h)} ${ip(h)} node-${h} *`);
    }
    await put(
      `inventory/hosts-${String(f).padStart(4, '0')}.yaml`,
      docs.join('---\n'),
      docs.length,
    );
  }
  const leaseFile = join(dir, 'leases', 'dnsmasq.leases');
  await writeFile(leaseFile, leases.join('\n') + '\n');
  await writeFile(join(dir, '.bpaignore'), 'leases/\n');
  return { dir, clusters, hosts, files, documents, bytes, leaseFile };
}

function bmh(h: number, p: { cpu: number; ram: number; sriov: boolean }): string {
  return `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-${h}
  namespace: metal3
  labels:
    bpa.akraino.org/sriov: "${p.sriov}"
    rack: r${h % 40}
spec:
  online: true
  bootMACAddress: "${mac(h)}"
  bmc:
    address: ipmi://198.19.${(h >> 8) & 0xff}.${h & 0xff}
    credentialsName: node-${h}-bmc-secret
status:
  operationalStatus: OK
  poweredOn: true
  provisioning:
    state: provisioned
  hardware:
    cpu:
      arch: x86_64
      model: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz
      count: ${p.cpu}
    ramMebibytes: ${p.ram}
    nics:
      - name: eno1
        mac: "${mac(h)}"
        ip: ${ip(h)}
        model: 0x8086 0x1572
        speedGbps: 10
        pxe: true
      - name: eno2
        mac: "${mac(h + 0x800000)}"
        model: 0x8086 0x1572
        speedGbps: 10
    storage:
      - name: /dev/sda
        sizeBytes: 480103981056
        rotational: false
`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, clusters = '1000', hosts = '10000'] = process.argv.slice(2);
  if (!out) {
    console.error('usage: gen-site.ts OUT_DIR [clusters] [hosts]');
    process.exit(2);
  }
  const site = await generateSite(out, Number(clusters), Number(hosts));
  console.log(JSON.stringify(site));
}
