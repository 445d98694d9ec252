/**
 * Generates a large, valid site for benchmarks: N clusters and H BareMetalHosts, about
 * 1 kB of YAML per host. Half of each cluster's nodes are pinned by MAC, half chosen by
 * resources. Also writes a dnsmasq lease file with one lease per host.
 *
 * The shape is how the same site is laid out in files (see SHAPES).
 *
 *   npx tsx bench/gen-site.ts OUT_DIR [clusters=1000] [hosts=10000] [shape=block]
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SHAPES = {
  files: 'many small files: one file per host, one per cluster (its 3 documents)',
  block: 'files of ten hosts each, block style; cluster documents ten clusters to a file',
  flow: 'the same files as block, every document written as one flow mapping',
  terms:
    'the files of block over mixed hardware (three CPU models, vendors, NIC speeds, disk types; rack and tier labels), every node with a hostSelector, hardware requirements and a preferred rack',
} as const;
export type SiteShape = keyof typeof SHAPES;

export function isShape(s: string): s is SiteShape {
  return Object.hasOwn(SHAPES, s);
}

export interface GeneratedSite {
  dir: string;
  shape: SiteShape;
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

/**
 * The `terms` shape's hardware, one per profile above (same index): what metal3 would report,
 * and what a node meant for such a host requires of it.
 */
const MIXED: Array<{
  tier: string;
  cpuModel: string;
  vendor: Record<string, string>;
  speedGbps: number;
  disk: Record<string, Value>;
  needs: Record<string, Value>;
}> = [
  {
    tier: 'compute',
    cpuModel: 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz',
    vendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R640' },
    speedGbps: 25,
    disk: { name: '/dev/nvme0n1', type: 'NVME', sizeBytes: 1920383410176, rotational: false },
    needs: {
      cpu: { arch: 'x86_64', model: { matches: 'Xeon.*Gold 6[0-9]{3}' } },
      nics: [{ speedGbps: { min: 25 }, count: 2 }],
      storage: [{ type: 'NVME', sizeBytes: { min: '1.9T' } }],
    },
  },
  {
    tier: 'data',
    cpuModel: 'AMD EPYC 7302 16-Core Processor',
    vendor: { manufacturer: 'HPE', productName: 'ProLiant DL385 Gen10 Plus' },
    speedGbps: 100,
    disk: { name: '/dev/nvme0n1', type: 'NVME', sizeBytes: 3840755982336, rotational: false },
    needs: {
      cpu: { model: { matches: '^AMD EPYC 7[0-9]{3}' }, flags: ['avx2'] },
      nics: [{ speedGbps: { min: 100 } }],
      systemVendor: { manufacturer: 'HPE' },
    },
  },
  {
    tier: 'edge',
    cpuModel: 'Intel(R) Xeon(R) Silver 4210 CPU @ 2.20GHz',
    vendor: { manufacturer: 'Supermicro', productName: 'SYS-1029P-WTR' },
    speedGbps: 10,
    disk: { name: '/dev/sda', type: 'SSD', sizeBytes: 480103981056, rotational: false },
    needs: {
      cpu: { model: { matches: 'Silver' } },
      storage: [{ rotational: false, sizeBytes: { min: '400G' } }],
      systemVendor: { productName: { matches: '^SYS-' } },
    },
  },
];

type Value = string | number | boolean | Value[] | { [key: string]: Value };

export async function generateSite(
  dir: string,
  clusters: number,
  hosts: number,
  shape: SiteShape = 'block',
): Promise<GeneratedSite> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, 'inventory'), { recursive: true });
  await mkdir(join(dir, 'clusters'), { recursive: true });
  await mkdir(join(dir, 'leases'), { recursive: true });
  const emit = shape === 'flow' ? flowDocument : blockDocument;
  let files = 0;
  let documents = 0;
  let bytes = 0;
  const put = async (path: string, docs: Value[]): Promise<void> => {
    const text = docs.map(emit).join('---\n');
    await writeFile(join(dir, path), text);
    files++;
    documents += docs.length;
    bytes += Buffer.byteLength(text);
  };
  const perFile = shape === 'files' ? 1 : 10;

  const nodesPerCluster = Math.max(2, Math.floor((hosts * 0.9) / clusters));
  const masters = nodesPerCluster >= 6 ? 3 : 1;
  let nextHost = 0;
  let pending: Value[] = [];
  for (let c = 0; c < clusters; c++) {
    const name = `cluster-${String(c).padStart(4, '0')}`;
    const entry = (role: string, n: number, i: number): Value => {
      const host = nextHost++;
      const p = PROFILES[host % PROFILES.length]!;
      const needs: Record<string, Value> = {};
      if (i % 2 === 0) needs['mac-address'] = mac(host);
      needs.cpu = p.cpu / 2;
      needs.memory = `${p.ram / 2048}Gi`;
      if (shape === 'terms') {
        const m = MIXED[host % MIXED.length]!;
        needs.hostSelector = {
          matchLabels: { tier: m.tier },
          matchExpressions: [{ key: 'maintenance', operator: 'DoesNotExist' }],
        };
        needs.hardware = m.needs;
        needs.preferred = [{ weight: 10, hostSelector: { matchLabels: { rack: `r${c % 40}` } } }];
      }
      return { [`${role}-${n}`]: needs };
    };
    const labels = { cluster: name, owner: 'bench' };
    pending.push(
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Cluster',
        metadata: { name, labels },
        spec: { provisioningCR: `${name}-provisioning`, softwareCR: `${name}-software` },
      },
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Provisioning',
        metadata: { name: `${name}-provisioning`, labels },
        spec: {
          masters: Array.from({ length: masters }, (_, m) => entry('master', m + 1, m)),
          workers: Array.from({ length: nodesPerCluster - masters }, (_, w) =>
            entry('worker', w + 1, w + masters),
          ),
          KUDPlugins: ['emco'],
          PodSubnet: '10.244.64.0/18',
        },
      },
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Software',
        metadata: { name: `${name}-software`, labels: { cluster: name } },
        spec: {
          masterSoftware: ['htop', { jq: { version: '1.6-2.1' } }],
          workerSoftware: ['curl', 'tmux'],
        },
      },
    );
    if ((c + 1) % perFile === 0 || c === clusters - 1) {
      const file =
        perFile === 1 ? name : `clusters-${String(Math.floor(c / perFile)).padStart(4, '0')}`;
      await put(`clusters/${file}.yaml`, pending);
      pending = [];
    }
  }
  const leases: string[] = [];
  for (let f = 0; f * perFile < hosts; f++) {
    const docs: Value[] = [];
    for (let h = f * perFile; h < Math.min(hosts, (f + 1) * perFile); h++) {
      docs.push(bmh(h, PROFILES[h % PROFILES.length]!, shape === 'terms'));
      leases.push(`4102444800 ${mac(h)} ${ip(h)} node-${h} *`);
    }
    await put(`inventory/hosts-${String(f).padStart(5, '0')}.yaml`, docs);
  }
  const leaseFile = join(dir, 'leases', 'dnsmasq.leases');
  await writeFile(leaseFile, leases.join('\n') + '\n');
  await writeFile(join(dir, '.bpaignore'), 'leases/\n');
  return { dir, shape, clusters, hosts, files, documents, bytes, leaseFile };
}

function bmh(h: number, p: { cpu: number; ram: number; sriov: boolean }, mixed = false): Value {
  const m = MIXED[h % MIXED.length]!;
  const labels: Record<string, string> = {
    'bpa.akraino.org/sriov': String(p.sriov),
    rack: `r${h % 40}`,
  };
  if (mixed) labels['tier'] = m.tier;
  const speedGbps = mixed ? m.speedGbps : 10;
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name: `node-${h}`,
      namespace: 'metal3',
      labels,
    },
    spec: {
      online: true,
      bootMACAddress: mac(h),
      bmc: {
        address: `ipmi://198.19.${(h >> 8) & 0xff}.${h & 0xff}`,
        credentialsName: `node-${h}-bmc-secret`,
      },
    },
    status: {
      operationalStatus: 'OK',
      errorMessage: '',
      errorCount: 0,
      provisioningFailCount: 0,
      poweredOn: true,
      provisioning: {
        ID: `6f1e0c2a-3b4d-4e5f-8a9b-${String(h).padStart(12, '0')}`,
        state: 'provisioned',
      },
      hardware: {
        cpu: mixed
          ? {
              arch: 'x86_64',
              model: m.cpuModel,
              count: p.cpu,
              clockMegahertz: 2100,
              flags: ['avx2', 'sse4_2', 'vmx'],
            }
          : { arch: 'x86_64', model: 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz', count: p.cpu },
        ramMebibytes: p.ram,
        nics: [
          {
            name: 'eno1',
            mac: mac(h),
            ip: ip(h),
            model: '0x8086 0x1572',
            speedGbps,
            pxe: true,
          },
          { name: 'eno2', mac: mac(h + 0x800000), model: '0x8086 0x1572', speedGbps },
        ],
        storage: [
          mixed ? m.disk : { name: '/dev/sda', sizeBytes: 480103981056, rotational: false },
        ],
        ...(mixed ? { systemVendor: m.vendor } : {}),
      },
    },
  };
}

/** A scalar as YAML: plain where that reads back as the same string, else double-quoted. */
function scalar(v: string | number | boolean): string {
  if (typeof v !== 'string') return String(v);
  const plain =
    /^[A-Za-z/][A-Za-z0-9 _./()@-]*$/.test(v) &&
    !v.endsWith(' ') &&
    !/^(?:true|false|null|yes|no|on|off|~)$/i.test(v);
  return plain ? v : JSON.stringify(v);
}

function blockDocument(doc: Value): string {
  const lines: string[] = [];
  const write = (v: Value, indent: string, lead: string): void => {
    if (Array.isArray(v)) {
      for (const item of v) {
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
          const entries = Object.entries(item);
          entries.forEach(([k, x], i) =>
            writeEntry(k, x, i === 0 ? `${indent}- ` : `${indent}  `, `${indent}    `),
          );
        } else {
          lines.push(`${indent}- ${scalar(item as string)}`);
        }
      }
    } else if (typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) writeEntry(k, x, indent, `${indent}  `);
    } else {
      lines.push(`${lead}${scalar(v)}`);
    }
  };
  const writeEntry = (k: string, x: Value, at: string, inner: string): void => {
    if (x !== null && typeof x === 'object') {
      lines.push(`${at}${scalar(k)}:`);
      write(x, Array.isArray(x) ? inner : inner, '');
    } else {
      lines.push(`${at}${scalar(k)}: ${scalar(x)}`);
    }
  };
  write(doc, '', '');
  return lines.join('\n') + '\n';
}

function flowDocument(doc: Value): string {
  const flow = (v: Value): string => {
    if (Array.isArray(v)) return `[${v.map(flow).join(', ')}]`;
    if (typeof v === 'object')
      return `{${Object.entries(v)
        .map(([k, x]) => `${scalar(k)}: ${flow(x)}`)
        .join(', ')}}`;
    return scalar(v);
  };
  const top = Object.entries(doc as Record<string, Value>).map(
    ([k, x]) => `${scalar(k)}: ${flow(x)}`,
  );
  return `{${top.join(',\n  ')}}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, clusters = '1000', hosts = '10000', shape = 'block'] = process.argv.slice(2);
  if (!out || !isShape(shape)) {
    console.error(
      `usage: gen-site.ts OUT_DIR [clusters] [hosts] [${Object.keys(SHAPES).join('|')}]`,
    );
    process.exit(2);
  }
  const site = await generateSite(out, Number(clusters), Number(hosts), shape);
  console.log(JSON.stringify(site));
}
