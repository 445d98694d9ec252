import assert from 'node:assert/strict';
import { assignHosts, hostKey, type Assignment } from '../../../src/plan/assign.js';
import {
  describeFailure,
  failures,
  passes,
  requirementsOf,
  weightOf,
} from '../../../src/plan/assign/requirements.js';
import type { HardwareFacts, Host } from '../../../src/observe/types.js';
import type {
  ClusterModel,
  HardwareRequirements,
  HostSelector,
  NodeSpec,
  PreferredTerm,
} from '../../../src/validate/model.js';

function host(
  name: string,
  o: {
    labels?: Record<string, string>;
    hw?: HardwareFacts;
    cpu?: number;
    ram?: number;
    off?: boolean;
  } = {},
): Host {
  const h: Host = {
    name,
    key: name,
    nics: [],
    macs: [],
    sriov: false,
    qat: false,
    labels: o.labels ?? {},
    eligible: o.off !== true,
    origin: `test:${name}`,
  };
  if (o.off) h.ineligibleReason = 'powered off';
  if (o.hw) h.hardware = o.hw;
  const cpu = o.cpu ?? o.hw?.cpu?.count;
  if (cpu !== undefined) h.cpuCount = cpu;
  const ram = o.ram ?? o.hw?.ramMebibytes;
  if (ram !== undefined) h.ramMebibytes = ram;
  return h;
}

function node(
  name: string,
  o: {
    hostSelector?: Partial<HostSelector>;
    hardware?: HardwareRequirements;
    preferred?: PreferredTerm[];
    cpu?: number;
  } = {},
): NodeSpec {
  const n: NodeSpec = { name, roles: ['worker'], pointer: `/spec/workers/0/${name}` };
  if (o.hostSelector)
    n.hostSelector = {
      matchLabels: o.hostSelector.matchLabels ?? {},
      matchExpressions: o.hostSelector.matchExpressions ?? [],
    };
  if (o.hardware) n.hardware = o.hardware;
  if (o.preferred) n.preferred = o.preferred;
  if (o.cpu !== undefined) n.cpu = o.cpu;
  return n;
}

function cluster(name: string, nodes: NodeSpec[]): ClusterModel {
  return {
    name,
    provisioning: { name, ref: { file: 'site.yaml', doc: 0 } },
    nodes,
    plugins: [],
    masterSoftware: [],
    workerSoftware: [],
  };
}

function placed(a: Assignment): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of a.placements) out[`${p.cluster}/${p.node}`] = hostKey(p.host);
  return out;
}

const sel = (labels: Record<string, string>): Partial<HostSelector> => ({ matchLabels: labels });

describe('placement terms: label selectors', () => {
  const h = host('h', { labels: { rack: 'r1', gen: '4', zone: 'a' } });
  const cases: Array<[string, Partial<HostSelector>, boolean]> = [
    ['matchLabels equal', sel({ rack: 'r1' }), true],
    ['matchLabels other value', sel({ rack: 'r2' }), false],
    ['matchLabels missing label', sel({ pool: 'x' }), false],
    ['In', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }, true],
    [
      'In missing label',
      { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] },
      false,
    ],
    ['NotIn', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, false],
    [
      'NotIn missing label passes',
      { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['a'] }] },
      true,
    ],
    ['Exists', { matchExpressions: [{ key: 'gen', operator: 'Exists', values: [] }] }, true],
    [
      'DoesNotExist',
      { matchExpressions: [{ key: 'gen', operator: 'DoesNotExist', values: [] }] },
      false,
    ],
    ['Gt', { matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['3'] }] }, true],
    [
      'Gt equal fails',
      { matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['4'] }] },
      false,
    ],
    ['Lt', { matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['10'] }] }, true],
    [
      'Gt over a label that is not an integer',
      { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['0'] }] },
      false,
    ],
    [
      'Gt over a missing label',
      { matchExpressions: [{ key: 'pool', operator: 'Gt', values: ['0'] }] },
      false,
    ],
  ];
  for (const [name, s, want] of cases) {
    it(name, () => assert.equal(passes(requirementsOf(node('n', { hostSelector: s })), h), want));
  }
});

const GOLD: HardwareFacts = {
  cpu: {
    arch: 'x86_64',
    model: 'Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz',
    count: 40,
    clockMegahertz: 2000,
    flags: ['avx512f', 'vmx'],
  },
  ramMebibytes: 262144,
  nics: [
    { name: 'eno1', mac: '00:00:00:00:00:01', speedGbps: 25, pxe: true, vlans: [100] },
    { name: 'eno2', mac: '00:00:00:00:00:02', speedGbps: 25, pxe: false },
    { name: 'eno3', mac: '00:00:00:00:00:03', speedGbps: 1 },
  ],
  storage: [
    {
      name: '/dev/nvme0n1',
      type: 'NVME',
      sizeBytes: 1.92e12,
      rotational: false,
      vendor: 'Samsung',
      model: 'PM983',
    },
    { name: '/dev/sda', type: 'HDD', sizeBytes: 4e12, rotational: true },
  ],
  systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R640' },
  firmware: { bios: { vendor: 'Dell Inc.', version: '2.1.7', date: '12/17/2018' } },
};
const SILVER: HardwareFacts = {
  cpu: {
    arch: 'x86_64',
    model: 'Intel(R) Xeon(R) Silver 4210 CPU @ 2.20GHz',
    count: 20,
    flags: ['vmx'],
  },
  ramMebibytes: 65536,
  nics: [{ name: 'eno1', speedGbps: 10, pxe: true }],
  storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 480e9, rotational: false }],
  systemVendor: { manufacturer: 'Supermicro', productName: 'SYS-1029P' },
};

describe('placement terms: hardware requirements', () => {
  const gold = host('gold', { hw: GOLD });
  const silver = host('silver', { hw: SILVER });
  const bare = host('bare');
  const cases: Array<[string, HardwareRequirements, [boolean, boolean, boolean]]> = [
    ['cpu.arch exact', { cpu: { arch: { equals: 'x86_64' } } }, [true, true, false]],
    [
      'cpu.model regex',
      { cpu: { model: { matches: 'Xeon.*Gold 6[0-9]{3}' } } },
      [true, false, false],
    ],
    ['cpu.count range', { cpu: { count: { min: 32 } } }, [true, false, false]],
    ['cpu.count max', { cpu: { count: { max: 32 } } }, [false, true, false]],
    ['cpu.clockMegahertz', { cpu: { clockMegahertz: { min: 1800 } } }, [true, false, false]],
    ['cpu.flags all', { cpu: { flags: ['avx512f', 'vmx'] } }, [true, false, false]],
    ['ramMebibytes', { ramMebibytes: { min: 131072 } }, [true, false, false]],
    ['two 25 Gb NICs', { nics: [{ speedGbps: { min: 25 }, count: 2 }] }, [true, false, false]],
    ['three 25 Gb NICs', { nics: [{ speedGbps: { min: 25 }, count: 3 }] }, [false, false, false]],
    [
      'a PXE NIC on VLAN 100',
      { nics: [{ pxe: true, vlans: [100], count: 1 }] },
      [true, false, false],
    ],
    [
      'an NVMe of 1.9T or more',
      { storage: [{ type: 'NVME', sizeBytes: { min: 1.9e12 }, count: 1 }] },
      [true, false, false],
    ],
    ['a non-rotational disk', { storage: [{ rotational: false, count: 1 }] }, [true, true, false]],
    [
      'a disk by vendor regex',
      { storage: [{ vendor: { matches: '^Sams' }, count: 1 }] },
      [true, false, false],
    ],
    [
      'systemVendor.manufacturer',
      { systemVendor: { manufacturer: { equals: 'Dell Inc.' } } },
      [true, false, false],
    ],
    [
      'firmware.bios.version',
      { firmware: { bios: { version: { matches: '^2\\.' } } } },
      [true, false, false],
    ],
  ];
  for (const [name, hw, want] of cases) {
    it(name, () => {
      const req = requirementsOf(node('n', { hardware: hw }));
      assert.deepEqual(
        [gold, silver, bare].map((h) => passes(req, h)),
        want,
      );
    });
  }

  it('explains each failing requirement with the value the host has', () => {
    const req = requirementsOf(
      node('n', {
        cpu: 32,
        hardware: {
          cpu: { model: { matches: 'Gold' }, flags: ['avx512f'] },
          nics: [{ speedGbps: { min: 25 }, count: 2 }],
          storage: [{ type: 'NVME', count: 1 }],
        },
      }),
    );
    assert.deepEqual(failures(req, silver).map(describeFailure), [
      'cpu.count: has 20, needs >=32',
      'cpu.model: has "Intel(R) Xeon(R) Silver 4210 CPU @ 2.20GHz", needs matches /Gold/',
      'cpu.flags: has no avx512f, needs avx512f',
      'nics[0]: has 0 matching of 1 NIC, needs 2 with speedGbps >=25',
      'storage[0]: has 0 matching of 1 disk, needs 1 with type NVME',
    ]);
    assert.deepEqual(failures(req, bare).map(describeFailure), [
      'cpu.count: not reported, needs >=32',
      'cpu.model: not reported, needs matches /Gold/',
      'cpu.flags: not reported, needs avx512f',
      'nics[0]: has no NICs reported, needs 2 with speedGbps >=25',
      'storage[0]: has no disks reported, needs 1 with type NVME',
    ]);
  });

  it('the ICN shorthands are checks of the same mechanism', () => {
    const n = node('n', { cpu: 24 });
    n.memory = '128Gi';
    n.memoryBytes = 128n * 2n ** 30n;
    const req = requirementsOf(n);
    assert.equal(req.extended, false);
    assert.deepEqual(
      [passes(req, host('gold', { hw: GOLD })), passes(req, host('silver', { hw: SILVER }))],
      [true, false],
    );
    assert.deepEqual(failures(req, host('silver', { hw: SILVER })).map(describeFailure), [
      'cpu.count: has 20, needs >=24',
      'ramMebibytes: has 64Gi, needs >=128Gi',
    ]);
  });

  it('preferred weights add up over the terms a host passes', () => {
    const req = requirementsOf(
      node('n', {
        preferred: [
          { weight: 10, hostSelector: { matchLabels: { rack: 'r1' }, matchExpressions: [] } },
          { weight: 5, hardware: { cpu: { model: { matches: 'Gold' } } } },
        ],
      }),
    );
    assert.equal(weightOf(req, host('a', { hw: GOLD, labels: { rack: 'r1' } })), 15);
    assert.equal(weightOf(req, host('b', { hw: GOLD })), 5);
    assert.equal(weightOf(req, host('c', { hw: SILVER })), 0);
  });
});

/** What a first-come, first-served placer does: each node in order takes its best free host. */
function greedy(nodes: NodeSpec[], hosts: Host[]): { placed: number; weight: number } {
  const taken = new Set<Host>();
  let placedCount = 0;
  let weight = 0;
  for (const n of nodes) {
    const req = requirementsOf(n);
    let best: Host | undefined;
    for (const h of hosts) {
      if (taken.has(h) || !passes(req, h)) continue;
      if (!best || weightOf(req, h) > weightOf(req, best)) best = h;
    }
    if (best) {
      taken.add(best);
      placedCount++;
      weight += weightOf(req, best);
    }
  }
  return { placed: placedCount, weight };
}

function total(a: Assignment, clusters: ClusterModel[]): { placed: number; weight: number } {
  let weight = 0;
  for (const p of a.placements) {
    const n = clusters.find((c) => c.name === p.cluster)?.nodes.find((x) => x.name === p.node);
    weight += weightOf(requirementsOf(n as NodeSpec), p.host);
  }
  return { placed: a.placements.length, weight };
}

describe('placement terms: site-wide assignment', () => {
  it('places more nodes than a greedy choice: the node that prefers a host yields it to one that needs it', () => {
    const fast = host('h1', { labels: { nic: '25g' } });
    const slow = host('h2', { labels: { nic: '1g' } });
    const nodes = [
      node('a', {
        preferred: [
          { weight: 50, hostSelector: { matchLabels: { nic: '25g' }, matchExpressions: [] } },
        ],
      }),
      node('b', { hostSelector: sel({ nic: '25g' }) }),
    ];
    const clusters = [cluster('c', nodes)];
    assert.deepEqual(greedy(nodes, [fast, slow]), { placed: 1, weight: 50 });
    const a = assignHosts(clusters, [fast, slow], []);
    assert.deepEqual(placed(a), { 'c/a': 'h2', 'c/b': 'h1' });
    assert.deepEqual(total(a, clusters), { placed: 2, weight: 0 });
  });

  it('gets more preference weight than a greedy choice', () => {
    const r1 = host('h1', { labels: { rack: 'r1', gpu: 'yes' } });
    const r2 = host('h2', { labels: { rack: 'r2' } });
    const pref = (w: number, labels: Record<string, string>): PreferredTerm => ({
      weight: w,
      hostSelector: { matchLabels: labels, matchExpressions: [] },
    });
    const nodes = [
      node('a', { preferred: [pref(10, { rack: 'r1' })] }),
      node('b', { preferred: [pref(60, { gpu: 'yes' })] }),
    ];
    const clusters = [cluster('c', nodes)];
    assert.deepEqual(greedy(nodes, [r1, r2]), { placed: 2, weight: 10 });
    const a = assignHosts(clusters, [r1, r2], []);
    assert.deepEqual(placed(a), { 'c/a': 'h2', 'c/b': 'h1' });
    assert.deepEqual(total(a, clusters), { placed: 2, weight: 60 });
  });

  it('places as many nodes, then as much weight, as a brute force, on 300 random sites', () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const racks = ['r1', 'r2', 'r3'];
    for (let site = 0; site < 300; site++) {
      const hosts = Array.from({ length: 1 + rnd(6) }, (_, i) =>
        host(`h${i}`, {
          labels: { rack: racks[rnd(3)] as string },
          hw: {
            cpu: {
              count: [8, 16, 32][rnd(3)] as number,
              model: rnd(2) ? 'Gold 6138' : 'Silver 4210',
            },
          },
        }),
      );
      const nodes = Array.from({ length: 1 + rnd(5) }, (_, i) => {
        const o: Parameters<typeof node>[1] = {};
        const pick = rnd(4);
        if (pick === 1)
          o.hostSelector = {
            matchExpressions: [
              { key: 'rack', operator: 'NotIn', values: [racks[rnd(3)] as string] },
            ],
          };
        else if (pick === 2)
          o.hostSelector = {
            matchExpressions: [
              {
                key: 'rack',
                operator: 'In',
                values: [racks[rnd(3)] as string, racks[rnd(3)] as string],
              },
            ],
          };
        else if (pick === 3) o.hostSelector = { matchLabels: { rack: racks[rnd(3)] as string } };
        if (rnd(2)) o.hardware = { cpu: { count: { min: [8, 16, 32][rnd(3)] as number } } };
        if (rnd(2))
          o.preferred = [
            { weight: 1 + rnd(100), hardware: { cpu: { model: { matches: 'Gold' } } } },
            {
              weight: 1 + rnd(100),
              hostSelector: {
                matchLabels: { rack: racks[rnd(3)] as string },
                matchExpressions: [],
              },
            },
          ];
        return node(`n${i}`, o);
      });
      const clusters = [cluster('c', nodes)];
      const got = total(assignHosts(clusters, hosts, []), clusters);
      assert.deepEqual(got, brute(nodes, hosts), `site ${site}`);
    }
  });

  it('is sticky: a node keeps its applied host while it passes, even when a better one appears', () => {
    const nodes = [
      node('a', {
        hostSelector: sel({ pool: 'edge' }),
        preferred: [{ weight: 100, hardware: { cpu: { model: { matches: 'Gold' } } } }],
      }),
    ];
    const hosts = [
      host('old', { labels: { pool: 'edge' }, hw: SILVER }),
      host('new', { labels: { pool: 'edge' }, hw: GOLD }),
    ];
    const a = assignHosts([cluster('c', nodes)], hosts, [{ cluster: 'c', node: 'a', host: 'old' }]);
    assert.deepEqual(placed(a), { 'c/a': 'old' });
    assert.equal(a.placements[0]?.sticky, true);
    const fresh = assignHosts([cluster('c', nodes)], hosts, []);
    assert.deepEqual(placed(fresh), { 'c/a': 'new' });
  });

  it('re-inspection: a host that no longer passes keeps its node (and says why) unless pruning, then the node moves', () => {
    const nodes = [node('a', { hardware: { storage: [{ type: 'NVME', count: 1 }] } })];
    const prior = [{ cluster: 'c', node: 'a', host: 'h1' }];
    // h1 was inspected again: its NVMe disk is gone.
    const hosts = [host('h1', { hw: SILVER }), host('h2', { hw: GOLD })];
    const kept = assignHosts([cluster('c', nodes)], hosts, prior, undefined, { keepFailing: true });
    assert.deepEqual(placed(kept), { 'c/a': 'h1' });
    assert.deepEqual(kept.placements[0]?.failing?.map(describeFailure), [
      'storage[0]: has 0 matching of 1 disk, needs 1 with type NVME',
    ]);
    const moved = assignHosts([cluster('c', nodes)], hosts, prior, undefined, {
      keepFailing: false,
    });
    assert.deepEqual(placed(moved), { 'c/a': 'h2' });
    assert.match(
      moved.placements[0]?.reason ?? '',
      /^moved from h1 \(storage\[0\]: has 0 matching of 1 disk/,
    );
  });

  it('why not: the closest eligible hosts, each failing requirement with its value', () => {
    const nodes = [
      node('w', {
        hostSelector: sel({ rack: 'r1' }),
        hardware: { cpu: { model: { matches: 'Xeon.*Gold 6[0-9]{3}' }, count: { min: 32 } } },
      }),
    ];
    const hosts = [
      host('a', { hw: SILVER, labels: { rack: 'r1' } }),
      host('b', { hw: GOLD, labels: { rack: 'r2' } }),
      host('c', { hw: SILVER, labels: { rack: 'r3' } }),
      host('d', { hw: GOLD, labels: { rack: 'r1' }, off: true }),
      host('e', { hw: SILVER }),
    ];
    const a = assignHosts([cluster('c', nodes)], hosts, []);
    const u = a.unplaced[0];
    assert.ok(u);
    assert.deepEqual(u.closest, [
      { host: 'b', failures: [{ requirement: 'label rack', has: '"r2"', needs: '"r1"' }] },
      {
        host: 'a',
        failures: [
          {
            requirement: 'cpu.model',
            has: '"Intel(R) Xeon(R) Silver 4210 CPU @ 2.20GHz"',
            needs: 'matches /Xeon.*Gold 6[0-9]{3}/',
          },
          { requirement: 'cpu.count', has: '20', needs: '>=32' },
        ],
      },
      {
        host: 'c',
        failures: [
          { requirement: 'label rack', has: '"r3"', needs: '"r1"' },
          {
            requirement: 'cpu.model',
            has: '"Intel(R) Xeon(R) Silver 4210 CPU @ 2.20GHz"',
            needs: 'matches /Xeon.*Gold 6[0-9]{3}/',
          },
          { requirement: 'cpu.count', has: '20', needs: '>=32' },
        ],
      },
    ]);
    assert.match(
      u.message,
      /^w: needs label rack "r1", cpu\.model matches .*; no eligible host passes its required terms; closest: b \(label rack "r2", needs "r1"\), a \(/,
    );
    assert.match(u.message, /1 host ineligible: d powered off$/);
  });

  it('a label changed on a new host object is seen by nodes with selectors (the last assignment is not reused)', () => {
    const clusters = [cluster('c', [node('a', { hostSelector: sel({ pool: 'x' }) })])];
    const first = assignHosts(clusters, [host('h1', { labels: { pool: 'x' } }), host('h2')], []);
    assert.deepEqual(placed(first), { 'c/a': 'h1' });
    const relabelled = [host('h1'), host('h2', { labels: { pool: 'x' } })];
    assert.deepEqual(placed(assignHosts(clusters, relabelled, [], first)), { 'c/a': 'h2' });
  });

  it('when hosts run short, the nodes left unplaced are the later ones in site order', () => {
    const hosts = [host('h1', { labels: { pool: 'x', rack: 'r1' } })];
    for (const order of [
      ['a', 'b'],
      ['b', 'a'],
    ]) {
      const nodes = order.map((n) =>
        node(
          n,
          n === 'a' ? { hostSelector: sel({ pool: 'x' }) } : { hostSelector: sel({ rack: 'r1' }) },
        ),
      );
      const a = assignHosts([cluster('c', nodes)], hosts, []);
      assert.deepEqual(placed(a), { [`c/${order[0]}`]: 'h1' });
      assert.deepEqual(
        a.unplaced.map((u) => u.node),
        [order[1]],
      );
    }
  });

  it('nodes that each select one host by a label get exactly that host', () => {
    const hosts = Array.from({ length: 600 }, (_, i) =>
      host(`h${String(i).padStart(3, '0')}`, {
        labels: { 'kubernetes.io/hostname': `h${i}`, rack: `r${i % 7}` },
      }),
    );
    const nodes = Array.from({ length: 500 }, (_, i) =>
      node(`n${i}`, {
        hostSelector: sel({ 'kubernetes.io/hostname': `h${(i * 7) % 600}` }),
        preferred: [
          { weight: 5, hostSelector: { matchLabels: { rack: 'r0' }, matchExpressions: [] } },
        ],
      }),
    );
    const a = assignHosts([cluster('c', nodes)], hosts, []);
    assert.equal(a.unplaced.length, 0);
    for (const p of a.placements) {
      const i = Number(p.node.slice(1));
      assert.equal(p.host.labels['kubernetes.io/hostname'], `h${(i * 7) % 600}`);
    }
  });

  it('a MAC-pinned node is checked against its terms', () => {
    const n = node('p', { hardware: { cpu: { arch: { equals: 'aarch64' } } } });
    n.mac = '00:00:00:00:00:01';
    const h = host('h', { hw: GOLD });
    h.nics = [{ mac: '00:00:00:00:00:01', ips: [] }];
    h.macs = ['00:00:00:00:00:01'];
    const a = assignHosts([cluster('c', [n])], [h], []);
    assert.equal(a.placements.length, 0);
    assert.equal(
      a.unplaced[0]?.message,
      'p: host h (mac 00:00:00:00:00:01) cpu.arch: has "x86_64", needs "aarch64"',
    );
  });
});

/** The best (placed, weight) over every injective assignment of nodes to passing hosts. */
function brute(nodes: NodeSpec[], hosts: Host[]): { placed: number; weight: number } {
  let best = { placed: 0, weight: 0 };
  const used = new Set<number>();
  const walk = (i: number, placedCount: number, weight: number): void => {
    if (i === nodes.length) {
      if (placedCount > best.placed || (placedCount === best.placed && weight > best.weight))
        best = { placed: placedCount, weight };
      return;
    }
    const req = requirementsOf(nodes[i] as NodeSpec);
    walk(i + 1, placedCount, weight);
    hosts.forEach((h, j) => {
      if (used.has(j) || !passes(req, h)) return;
      used.add(j);
      walk(i + 1, placedCount + 1, weight + weightOf(req, h));
      used.delete(j);
    });
  };
  walk(0, 0, 0);
  return best;
}
