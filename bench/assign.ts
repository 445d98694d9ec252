/**
 * Role assignment at site scale: N hosts and N nodes in clusters of 10, half the nodes pinned
 * by MAC and half placed by resources, hosts drawn from a few hardware profiles, 2% of hosts
 * ineligible. Times a first run (no applied state) and a re-run fed the first run's result
 * (every node sticky): the median and the fastest of five after a warm-up (the machine is
 * shared; the fastest is the cost without interference). A last line shows the degenerate
 * case where every host has a different capacity and every node a different need, so
 * classes do not compress (listed out, the class graph would have ~5·10^7 edges), and one
 * where every resource-placed node selects its own host by a label (hostSelector) and
 * prefers a rack: a node class per node, placed by the min-cost flow of placement terms.
 *
 *   npx tsx bench/assign.ts
 */
import { performance } from 'node:perf_hooks';
import { assignHosts, hostKey } from '../src/plan/assign.js';
import type { PriorAssignment } from '../src/plan/assign.js';
import { identityMacs, type Host } from '../src/observe/types.js';
import type { ClusterModel, NodeSpec } from '../src/validate/model.js';

const PROFILES = [
  { cpu: 16, ram: 65536, sriov: false, qat: false },
  { cpu: 32, ram: 131072, sriov: true, qat: false },
  { cpu: 64, ram: 262144, sriov: true, qat: true },
  { cpu: 96, ram: 524288, sriov: false, qat: false },
];
const NEEDS: Partial<NodeSpec>[] = [
  { cpu: 8, memoryBytes: 16n << 30n, memory: '16Gi' },
  { cpu: 16, memoryBytes: 64n << 30n, memory: '64Gi' },
  { cpu: 32, sriov: true },
  { cpu: 48, memoryBytes: 256n << 30n, memory: '256Gi' },
  {},
];

function mac(i: number, nic: number): string {
  const hex = (i * 4 + nic).toString(16).padStart(10, '0');
  return `02:${hex.match(/../g)?.join(':')}`;
}

function site(
  n: number,
  distinct: boolean,
  selectors = false,
): { clusters: ClusterModel[]; hosts: Host[] } {
  const hosts: Host[] = [];
  for (let i = 0; i < n; i++) {
    const p = PROFILES[i % PROFILES.length] as (typeof PROFILES)[number];
    const nics = [0, 1, 2].map((k) => ({ mac: mac(i, k), ips: [] }));
    const h: Host = {
      name: `host-${i}`,
      namespace: 'metal3',
      key: `metal3/host-${i}`,
      bootMac: mac(i, 0),
      nics,
      macs: identityMacs(mac(i, 0), nics),
      cpuCount: distinct ? p.cpu + (i % 1000) : p.cpu,
      ramMebibytes: distinct ? p.ram + i : p.ram,
      sriov: p.sriov,
      qat: p.qat,
      labels: selectors ? { 'kubernetes.io/hostname': `host-${i}`, rack: `r${i % 40}` } : {},
      eligible: i % 50 !== 7,
      origin: `bench:${i}`,
    };
    if (!h.eligible) h.ineligibleReason = 'powered off';
    hosts.push(h);
  }
  const clusters: ClusterModel[] = [];
  for (let c = 0; c * 10 < n; c++) {
    const nodes: NodeSpec[] = [];
    for (let k = 0; k < 10 && c * 10 + k < n; k++) {
      const i = c * 10 + k;
      const node: NodeSpec = {
        name: `node-${k}`,
        roles: k < 3 ? ['master'] : ['worker'],
        pointer: `/spec/${k}`,
      };
      // Even nodes are pinned to even hosts; odd nodes take what fits among the rest.
      if (i % 2 === 0) node.mac = mac(i, 1);
      else if (selectors) {
        node.hostSelector = {
          matchLabels: { 'kubernetes.io/hostname': `host-${i}` },
          matchExpressions: [],
        };
        node.preferred = [
          { weight: 10, hostSelector: { matchLabels: { rack: 'r1' }, matchExpressions: [] } },
        ];
      } else if (distinct) {
        node.cpu = 1 + ((i * 7) % 100);
        node.memoryBytes = BigInt(1 + (i % 50000)) << 20n;
      } else Object.assign(node, NEEDS[i % NEEDS.length]);
      nodes.push(node);
    }
    clusters.push({
      name: `cluster-${String(c).padStart(5, '0')}`,
      provisioning: { name: `p-${c}`, ref: { file: 'bench', doc: c } },
      nodes,
      plugins: [],
      masterSoftware: [],
      workerSoftware: [],
    });
  }
  return { clusters, hosts };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function time(run: () => unknown): string {
  run();
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    run();
    samples.push(performance.now() - t);
  }
  return `${median(samples).toFixed(0)}/${Math.min(...samples).toFixed(0)} ms`.padStart(14);
}

console.log('hosts   nodes   placed  unplaced  first run (median/min)  sticky re-run (median/min)');
for (const [n, distinct, selectors] of [
  [1000, false, false],
  [10000, false, false],
  [20000, false, false],
  [10000, true, false],
  [10000, false, true],
] as const) {
  const { clusters, hosts } = site(n, distinct, selectors);
  const first = assignHosts(clusters, hosts, []);
  const prior: PriorAssignment[] = first.placements.map((p) => ({
    cluster: p.cluster,
    node: p.node,
    host: hostKey(p.host),
  }));
  const cold = time(() => assignHosts(clusters, hosts, []));
  const warm = time(() => assignHosts(clusters, hosts, prior));
  const label = distinct
    ? ' (all capacities and needs distinct)'
    : selectors
      ? ' (each node selects its own host by a label)'
      : '';
  console.log(
    `${String(n).padEnd(8)}${String(n).padEnd(8)}${String(first.placements.length).padEnd(8)}` +
      `${String(first.unplaced.length).padEnd(10)}${cold}${' '.repeat(12)}${warm}${label}`,
  );
}
