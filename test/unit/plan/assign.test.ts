import { strict as assert } from 'node:assert';
import { assignHosts, hostKey } from '../../../src/plan/assign.js';
import type { Assignment, PriorAssignment } from '../../../src/plan/assign.js';
import { identityMacs, type Host } from '../../../src/observe/types.js';
import { quantityToUnits } from '../../../src/util/quantity.js';
import type { ClusterModel, NodeSpec, Role } from '../../../src/validate/model.js';

interface HostOpts {
  cpu?: number;
  ram?: number;
  macs?: string[];
  boot?: string;
  sriov?: boolean;
  qat?: boolean;
  reason?: string;
  namespace?: string;
}

function host(name: string, o: HostOpts = {}): Host {
  const nics = (o.macs ?? []).map((mac) => ({ mac, ips: [] }));
  const h: Host = {
    name,
    key: hostKey({ name, namespace: o.namespace }),
    nics,
    macs: identityMacs(o.boot, nics),
    sriov: o.sriov ?? false,
    qat: o.qat ?? false,
    labels: {},
    eligible: o.reason === undefined,
    origin: `test:${name}`,
  };
  if (o.cpu !== undefined) h.cpuCount = o.cpu;
  if (o.ram !== undefined) h.ramMebibytes = o.ram;
  if (o.boot !== undefined) h.bootMac = o.boot;
  if (o.reason !== undefined) h.ineligibleReason = o.reason;
  if (o.namespace !== undefined) h.namespace = o.namespace;
  return h;
}

interface NodeOpts {
  mac?: string;
  cpu?: number;
  memory?: string;
  sriov?: boolean;
  qat?: boolean;
}

function node(name: string, roles: Role[], o: NodeOpts = {}): NodeSpec {
  const n: NodeSpec = { name, roles, pointer: `/spec/${name}` };
  if (o.mac !== undefined) n.mac = o.mac;
  if (o.cpu !== undefined) n.cpu = o.cpu;
  if (o.memory !== undefined) {
    n.memory = o.memory;
    n.memoryBytes = quantityToUnits(o.memory);
  }
  if (o.sriov !== undefined) n.sriov = o.sriov;
  if (o.qat !== undefined) n.qat = o.qat;
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

/** cluster/node → host key, plus unplaced messages: the whole outcome in comparable form. */
function summary(a: Assignment): {
  placed: Record<string, string>;
  unplaced: Record<string, string>;
} {
  const placed: Record<string, string> = {};
  for (const p of a.placements) placed[`${p.cluster}/${p.node}`] = hostKey(p.host);
  const unplaced: Record<string, string> = {};
  for (const u of a.unplaced) unplaced[`${u.cluster}/${u.node}`] = u.message;
  return { placed, unplaced };
}

function priorOf(a: Assignment): PriorAssignment[] {
  return a.placements.map((p) => ({ cluster: p.cluster, node: p.node, host: hostKey(p.host) }));
}

/** A small seeded generator, so a failing random case can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(list: T[], rand: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const M = ['master'] as Role[];
const W = ['worker'] as Role[];
const MW = ['master', 'worker'] as Role[];

describe('assignHosts', () => {
  describe('placement rules', () => {
    interface Case {
      name: string;
      clusters: ClusterModel[];
      hosts: Host[];
      placed: Record<string, string>;
      reasons?: Record<string, string>;
      unplaced?: Record<string, string>;
    }
    const cases: Case[] = [
      {
        name: 'MAC only: each node gets the host carrying its MAC (boot or NIC)',
        clusters: [
          cluster('c1', [
            node('master-1', M, { mac: '52:54:00:00:00:01' }),
            node('worker-1', W, { mac: '52:54:00:00:00:12' }),
          ]),
        ],
        hosts: [
          host('h2', {
            boot: '52:54:00:00:00:02',
            macs: ['52:54:00:00:00:02', '52:54:00:00:00:12'],
          }),
          host('h1', { boot: '52:54:00:00:00:01' }),
        ],
        placed: { 'c1/master-1': 'h1', 'c1/worker-1': 'h2' },
        reasons: { 'c1/master-1': 'mac 52:54:00:00:00:01', 'c1/worker-1': 'mac 52:54:00:00:00:12' },
      },
      {
        name: 'resources only: the smallest sufficient host, big hosts kept for big nodes',
        clusters: [
          cluster('c1', [
            node('master-1', M, { cpu: 8, memory: '16Gi' }),
            node('worker-1', W, { cpu: 32, memory: '64Gi' }),
          ]),
        ],
        hosts: [
          host('big', { cpu: 64, ram: 262144 }),
          host('fit', { cpu: 32, ram: 65536 }),
          host('small', { cpu: 16, ram: 32768 }),
          host('tiny', { cpu: 4, ram: 65536 }),
        ],
        placed: { 'c1/master-1': 'small', 'c1/worker-1': 'fit' },
        reasons: {
          'c1/master-1': 'resources: cpu 16>=8, memory 32Gi>=16Gi',
          'c1/worker-1': 'resources: cpu 32>=32, memory 64Gi>=64Gi',
        },
      },
      {
        name: 'MAC and resources: a host that meets them is placed, a mismatch names the shortfall',
        clusters: [
          cluster('c1', [
            node('master-1', M, { mac: 'aa:00:00:00:00:01', cpu: 8, memory: '8Gi', sriov: true }),
            node('worker-1', W, { mac: 'aa:00:00:00:00:02', cpu: 10 }),
            node('worker-2', W, { mac: 'aa:00:00:00:00:03', memory: '16Gi', qat: true }),
          ]),
        ],
        hosts: [
          host('node-1', { boot: 'aa:00:00:00:00:01', cpu: 8, ram: 8192, sriov: true }),
          host('node-3', { boot: 'aa:00:00:00:00:02', cpu: 8, ram: 8192 }),
          host('node-4', { boot: 'aa:00:00:00:00:03', cpu: 8, ram: 8192 }),
        ],
        placed: { 'c1/master-1': 'node-1' },
        unplaced: {
          'c1/worker-1': 'worker-1: host node-3 (mac aa:00:00:00:00:02) has cpu 8, needs >=10',
          'c1/worker-2':
            'worker-2: host node-4 (mac aa:00:00:00:00:03) has memory 8Gi, needs >=16Gi; has no qat',
        },
      },
      {
        name: 'MAC pins: unknown MAC, ineligible host, MAC on two hosts',
        clusters: [
          cluster('c1', [
            node('w-1', W, { mac: 'ba:00:00:00:00:09' }),
            node('w-2', W, { mac: 'ba:00:00:00:00:02' }),
            node('w-3', W, { mac: 'ba:00:00:00:00:03' }),
          ]),
        ],
        hosts: [
          host('h2', { boot: 'ba:00:00:00:00:02', reason: 'powered off' }),
          host('h3', { boot: 'ba:00:00:00:00:03' }),
          host('h4', { macs: ['ba:00:00:00:00:03'] }),
        ],
        placed: {},
        unplaced: {
          'c1/w-1': 'w-1: no host has mac ba:00:00:00:00:09',
          'c1/w-2': 'w-2: host h2 (mac ba:00:00:00:00:02) is not eligible: powered off',
          'c1/w-3': 'w-3: mac ba:00:00:00:00:03 belongs to more than one host: h3, h4',
        },
      },
      {
        name: 'first-fit fails, matching succeeds: the master moves off the only sriov host',
        // A is the smaller host, so first-fit gives it to the master listed first; only A
        // has sriov, which the worker needs.
        clusters: [
          cluster('c1', [
            node('master-1', M, { cpu: 8 }),
            node('worker-1', W, { cpu: 8, sriov: true }),
          ]),
        ],
        hosts: [host('A', { cpu: 8, ram: 16384, sriov: true }), host('B', { cpu: 16, ram: 16384 })],
        placed: { 'c1/master-1': 'B', 'c1/worker-1': 'A' },
      },
      {
        name: 'first-fit fails in two dimensions: cpu-heavy and memory-heavy nodes cross',
        clusters: [
          cluster('c1', [
            node('cpu-heavy', W, { cpu: 8, memory: '4Gi' }),
            node('mem-heavy', W, { cpu: 4, memory: '16Gi' }),
          ]),
        ],
        hosts: [host('H1', { cpu: 8, ram: 16384 }), host('H2', { cpu: 16, ram: 4096 })],
        placed: { 'c1/cpu-heavy': 'H2', 'c1/mem-heavy': 'H1' },
      },
      {
        name: 'ICN dual-role shapes: a name in masters and workers is one node on one host',
        clusters: [
          cluster('icn', [
            node('node-a', MW, { cpu: 4 }),
            node('node-b', MW, { cpu: 4 }),
            node('node-c', W),
          ]),
        ],
        hosts: [
          host('h1', { cpu: 8, ram: 1 }),
          host('h2', { cpu: 8, ram: 1 }),
          host('h3', { cpu: 8, ram: 1 }),
        ],
        placed: { 'icn/node-a': 'h1', 'icn/node-b': 'h2', 'icn/node-c': 'h3' },
      },
      {
        name: 'memory is compared exactly: 8G is 8e9 bytes, 4Gi is 4096 MiB',
        clusters: [
          cluster('c1', [
            node('n-8g', W, { memory: '8G' }),
            node('n-4gi', W, { memory: '4Gi' }),
            node('n-4gi-b', W, { memory: '4Gi' }),
          ]),
        ],
        hosts: [
          host('r7629', { cpu: 1, ram: 7629 }), // 7629 MiB = 7 999 586 304 bytes < 8e9
          host('r7630', { cpu: 1, ram: 7630 }),
          host('r4096', { cpu: 1, ram: 4096 }),
          host('r4095', { cpu: 1, ram: 4095 }),
        ],
        placed: { 'c1/n-8g': 'r7630', 'c1/n-4gi': 'r4096', 'c1/n-4gi-b': 'r7629' },
      },
      {
        name: 'hosts without hardware data never meet a requirement on what they lack',
        clusters: [cluster('c1', [node('w-1', W, { cpu: 2 }), node('w-2', W)])],
        hosts: [host('nodata')],
        placed: { 'c1/w-2': 'nodata' },
        unplaced: {
          'c1/w-1':
            'w-1: needs cpu>=2; no eligible host qualifies; nearest: nodata has cpu unknown',
        },
      },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const a = assignHosts(c.clusters, c.hosts, []);
        const s = summary(a);
        assert.deepEqual(s.placed, c.placed);
        assert.deepEqual(s.unplaced, c.unplaced ?? {});
        for (const [k, reason] of Object.entries(c.reasons ?? {})) {
          assert.equal(a.placements.find((p) => `${p.cluster}/${p.node}` === k)?.reason, reason, k);
        }
        assert.ok(a.placements.every((p) => !p.sticky));
      });
    }
  });

  describe('diagnostics when hosts run short', () => {
    it('names the need, the hosts that qualify and who took them, and the nearest miss', () => {
      const clusters = [
        cluster('c1', [
          node('worker-1', W, { cpu: 20, memory: '8Gi' }),
          node('worker-2', W, { cpu: 20, memory: '8Gi' }),
          node('worker-3', W, { cpu: 20, memory: '8Gi' }),
        ]),
      ];
      const hosts = [
        host('node-5', { cpu: 24, ram: 16384 }),
        host('node-6', { cpu: 32, ram: 16384 }),
        host('node-7', { cpu: 16, ram: 16384 }),
        host('node-8', { cpu: 2, ram: 1024 }),
      ];
      const a = assignHosts(clusters, hosts, []);
      assert.deepEqual(summary(a), {
        placed: { 'c1/worker-1': 'node-5', 'c1/worker-2': 'node-6' },
        unplaced: {
          'c1/worker-3':
            'worker-3: needs cpu>=20, memory>=8Gi; 2 hosts qualify, all taken by c1/worker-1, c1/worker-2; nearest: node-7 has cpu 16',
        },
      });
    });

    it('lists at most three takers, counts ineligible hosts and their reasons', () => {
      const nodes = ['a', 'b', 'c', 'd', 'e'].map((n) => node(n, W, { cpu: 4, sriov: true }));
      const hosts = [
        ...['h1', 'h2', 'h3', 'h4'].map((n) => host(n, { cpu: 4, ram: 4096, sriov: true })),
        host('node-8', { cpu: 8, ram: 4096 }),
        host('node-9', { cpu: 8, ram: 4096, sriov: true, reason: 'powered off' }),
        host('node-10', { reason: "provisioning state 'inspecting'" }),
      ];
      const a = assignHosts([cluster('c1', nodes)], hosts, []);
      assert.equal(a.placements.length, 4);
      assert.deepEqual(a.unplaced, [
        {
          cluster: 'c1',
          node: 'e',
          message:
            "e: needs cpu>=4, sriov; 4 hosts qualify, all taken by c1/a, c1/b, c1/c, and 1 more; nearest: node-8 has no sriov. 2 hosts ineligible: node-10 provisioning state 'inspecting'; node-9 powered off",
        },
      ]);
    });

    it('leaves the nodes latest in site order unplaced, whatever the input order of clusters', () => {
      const clusters = [
        cluster('zeta', [node('w', W, { cpu: 4 })]),
        cluster('alpha', [node('m', M, { cpu: 4 }), node('w', W, { cpu: 2 })]),
      ];
      const hosts = [host('h1', { cpu: 4, ram: 1 }), host('h2', { cpu: 8, ram: 1 })];
      const a = assignHosts(clusters, hosts, []);
      assert.deepEqual(
        a.placements.map((p) => `${p.cluster}/${p.node}`),
        ['alpha/m', 'alpha/w'],
      );
      assert.equal(a.unplaced[0]?.cluster, 'zeta');
      assert.match(
        a.unplaced[0]?.message ?? '',
        /^w: needs cpu>=4; 2 hosts qualify, all taken by alpha\/m, alpha\/w$/,
      );
    });
  });

  describe('stickiness', () => {
    const clusters = [
      cluster('c1', [node('master-1', M, { cpu: 8 }), node('worker-1', W, { cpu: 8 })]),
    ];

    it('keeps a prior placement even when a better host appears', () => {
      const first = assignHosts(
        clusters,
        [host('h16', { cpu: 16, ram: 1 }), host('h32', { cpu: 32, ram: 1 })],
        [],
      );
      assert.deepEqual(summary(first).placed, { 'c1/master-1': 'h16', 'c1/worker-1': 'h32' });
      const hosts = [
        host('h8', { cpu: 8, ram: 1 }),
        host('h16', { cpu: 16, ram: 1 }),
        host('h32', { cpu: 32, ram: 1 }),
      ];
      const second = assignHosts(clusters, hosts, priorOf(first));
      assert.deepEqual(summary(second).placed, { 'c1/master-1': 'h16', 'c1/worker-1': 'h32' });
      assert.ok(second.placements.every((p) => p.sticky && p.reason === 'kept from applied state'));
    });

    it('re-places a node whose host became ineligible, saying why it moved', () => {
      const prior = [
        { cluster: 'c1', node: 'master-1', host: 'h16' },
        { cluster: 'c1', node: 'worker-1', host: 'h32' },
      ];
      const hosts = [
        host('h8', { cpu: 8, ram: 1 }),
        host('h16', { cpu: 16, ram: 1 }),
        host('h32', { cpu: 32, ram: 1, reason: 'powered off' }),
      ];
      const a = assignHosts(clusters, hosts, prior);
      assert.deepEqual(
        a.placements.map((p) => [p.node, hostKey(p.host), p.sticky, p.reason]),
        [
          ['master-1', 'h16', true, 'kept from applied state'],
          [
            'worker-1',
            'h8',
            false,
            'moved from h32 (not eligible: powered off); resources: cpu 8>=8',
          ],
        ],
      );
    });

    it('re-places a node whose requirements grew past its host, or whose host is gone', () => {
      const grown = [
        cluster('c1', [node('master-1', M, { cpu: 24 }), node('worker-1', W, { cpu: 8 })]),
      ];
      const prior = [
        { cluster: 'c1', node: 'master-1', host: 'h16' },
        { cluster: 'c1', node: 'worker-1', host: 'gone' },
      ];
      const a = assignHosts(
        grown,
        [host('h16', { cpu: 16, ram: 1 }), host('h32', { cpu: 32, ram: 1 })],
        prior,
      );
      assert.deepEqual(
        a.placements.map((p) => [p.node, hostKey(p.host), p.sticky, p.reason]),
        [
          [
            'master-1',
            'h32',
            false,
            'moved from h16 (has cpu 16, needs >=24); resources: cpu 32>=24',
          ],
          [
            'worker-1',
            'h16',
            false,
            'moved from gone (no longer in the inventory); resources: cpu 16>=8',
          ],
        ],
      );
    });

    it('an unplaceable moved node says where it was; a sticky node keeps a host a new MAC pin wants', () => {
      const cl = [
        cluster('c1', [
          node('old', W, { cpu: 4 }),
          node('pinned', W, { mac: 'cc:00:00:00:00:01' }),
        ]),
        cluster('c2', [node('lost', W, { cpu: 4 })]),
      ];
      const prior = [
        { cluster: 'c1', node: 'old', host: 'metal3/h1' },
        { cluster: 'c2', node: 'lost', host: 'metal3/h2' },
      ];
      const hosts = [
        host('h1', { namespace: 'metal3', cpu: 4, ram: 1, boot: 'cc:00:00:00:00:01' }),
        host('h2', {
          namespace: 'metal3',
          cpu: 4,
          ram: 1,
          reason: 'has error: registration error',
        }),
      ];
      const a = assignHosts(cl, hosts, prior);
      assert.deepEqual(summary(a), {
        placed: { 'c1/old': 'metal3/h1' },
        unplaced: {
          'c1/pinned':
            'pinned: host metal3/h1 (mac cc:00:00:00:00:01) is taken by c1/old (kept from applied state)',
          'c2/lost':
            'lost: was on metal3/h2 (not eligible: has error: registration error); needs cpu>=4; 1 host qualifies, all taken by c1/old. 1 host ineligible: metal3/h2 has error: registration error',
        },
      });
    });

    it('a MAC-pinned node whose MAC now names another host moves there', () => {
      const cl = [cluster('c1', [node('m', M, { mac: 'dc:00:00:00:00:02' })])];
      const hosts = [
        host('h1', { boot: 'dc:00:00:00:00:01' }),
        host('h2', { boot: 'dc:00:00:00:00:02' }),
      ];
      const a = assignHosts(cl, hosts, [{ cluster: 'c1', node: 'm', host: 'h1' }]);
      assert.deepEqual(
        a.placements.map((p) => [hostKey(p.host), p.sticky, p.reason]),
        [
          [
            'h2',
            false,
            'moved from h1 (it does not have mac dc:00:00:00:00:02); mac dc:00:00:00:00:02',
          ],
        ],
      );
    });

    it('is stable across repeated runs fed their own output', () => {
      const rand = rng(7);
      const { clusters: cl, hosts } = randomSite(rand, 40, 50);
      let prior: PriorAssignment[] = [];
      const first = assignHosts(cl, hosts, prior);
      prior = priorOf(first);
      for (let run = 0; run < 3; run++) {
        const next = assignHosts(cl, shuffle(hosts, rand), prior);
        assert.deepEqual(summary(next).placed, summary(first).placed);
        assert.ok(next.placements.every((p) => p.sticky));
      }
    });
  });

  describe('determinism and maximality', () => {
    it('gives the same outcome for any order of the hosts', () => {
      const rand = rng(42);
      const { clusters: cl, hosts } = randomSite(rand, 120, 100);
      const expected = assignHosts(cl, hosts, []);
      assert.ok(expected.placements.length > 50, 'the fixture places a fair share of nodes');
      assert.ok(expected.unplaced.length > 0, 'the fixture leaves some nodes unplaced');
      for (let i = 0; i < 5; i++) {
        const again = assignHosts(cl, shuffle(hosts, rand), []);
        assert.deepEqual(
          again.placements.map((p) => [p.cluster, p.node, hostKey(p.host), p.reason]),
          expected.placements.map((p) => [p.cluster, p.node, hostKey(p.host), p.reason]),
        );
        assert.deepEqual(again.unplaced, expected.unplaced);
      }
    });

    it('writes every placement and diagnostic in printable ASCII', () => {
      // One character beyond Latin-1 in one placement makes a whole JSON plan a two-byte string
      // (docs/PERFORMANCE.md): the texts say ">=", not "≥".
      const { clusters: cl, hosts } = randomSite(rng(7), 120, 100);
      const a = assignHosts(cl, hosts, []);
      const texts = [...a.placements.map((p) => p.reason), ...a.unplaced.map((u) => u.message)];
      assert.ok(
        texts.some((t) => t.startsWith('resources: cpu ')),
        'some nodes placed by resources',
      );
      assert.ok(
        texts.some((t) => t.includes('nearest: ')),
        'some nodes unplaced, with a nearest miss',
      );
      for (const t of texts) assert.match(t, /^[\x20-\x7e]*$/);
    });

    it('places as many nodes as a brute-force maximum matching, on 400 random sites', () => {
      const rand = rng(2024);
      for (let round = 0; round < 400; round++) {
        const wide = round % 4 === 3;
        const size = wide ? 40 : 8;
        const { clusters: cl, hosts } = randomSite(
          rand,
          1 + Math.floor(rand() * size),
          1 + Math.floor(rand() * size),
          wide,
        );
        const a = assignHosts(cl, hosts, []);
        const nodes = cl.flatMap((c) => c.nodes);
        assert.equal(a.placements.length, bruteForceMax(nodes, hosts), `round ${round}`);
        assert.equal(a.placements.length + a.unplaced.length, nodes.length);
        const used = new Set(a.placements.map((p) => hostKey(p.host)));
        assert.equal(used.size, a.placements.length, 'a host serves one node');
        for (const p of a.placements) {
          const n = nodes.find((x) => x.name === p.node) as NodeSpec;
          assert.ok(qualifies(n, p.host), `round ${round}: ${p.node} on ${p.host.name}`);
        }
      }
    });
  });
});

/** Random nodes and hosts from a few profiles, with some eligible-host noise. */
function randomSite(
  rand: () => number,
  nodeCount: number,
  hostCount: number,
  wide = false,
): { clusters: ClusterModel[]; hosts: Host[] } {
  // Narrow: a few profiles, as real sites have. Wide: nearly every host and node different.
  const pick = <T>(list: readonly T[]): T =>
    wide && typeof list[0] === 'number'
      ? (Math.max(1, Math.round(rand() * 2 * (list[list.length - 1] as number))) as T)
      : (list[Math.floor(rand() * list.length)] as T);
  const hosts: Host[] = [];
  for (let i = 0; i < hostCount; i++) {
    const o: HostOpts = {
      cpu: pick([4, 8, 16, 32]),
      ram: pick([4096, 8192, 32768]),
      sriov: rand() < 0.3,
      qat: rand() < 0.2,
    };
    if (rand() < 0.1) o.reason = 'powered off';
    hosts.push(host(`host-${String(i).padStart(3, '0')}`, o));
  }
  const clusters: ClusterModel[] = [];
  let c: NodeSpec[] = [];
  for (let i = 0; i < nodeCount; i++) {
    const o: NodeOpts = {};
    if (rand() < 0.7) o.cpu = pick([2, 4, 8, 16, 32]);
    if (rand() < 0.6) {
      o.memory = wide ? `${1 + Math.floor(rand() * 32768)}Mi` : pick(['2Gi', '4Gi', '8G', '16Gi']);
    }
    if (rand() < 0.3) o.sriov = true;
    if (rand() < 0.2) o.qat = true;
    c.push(node(`n-${i}`, rand() < 0.3 ? M : W, o));
    if (c.length === 4 || i === nodeCount - 1) {
      clusters.push(cluster(`cl-${clusters.length}`, c));
      c = [];
    }
  }
  return { clusters: shuffle(clusters, rand), hosts };
}

function qualifies(n: NodeSpec, h: Host): boolean {
  if (!h.eligible) return false;
  if (n.cpu !== undefined && (h.cpuCount ?? -1) < n.cpu) return false;
  if (n.memoryBytes !== undefined && BigInt(h.ramMebibytes ?? 0) * 1048576n < n.memoryBytes)
    return false;
  if (n.sriov && !h.sriov) return false;
  if (n.qat && !h.qat) return false;
  return true;
}

/** Kuhn's augmenting paths over the explicit node × host graph: slow, obviously right. */
function bruteForceMax(nodes: NodeSpec[], hosts: Host[]): number {
  const owner = new Array<number>(hosts.length).fill(-1);
  const tryNode = (i: number, seen: boolean[]): boolean => {
    for (let j = 0; j < hosts.length; j++) {
      if (seen[j] || !qualifies(nodes[i] as NodeSpec, hosts[j] as Host)) continue;
      seen[j] = true;
      if (owner[j] === -1 || tryNode(owner[j] as number, seen)) {
        owner[j] = i;
        return true;
      }
    }
    return false;
  };
  let count = 0;
  for (let i = 0; i < nodes.length; i++)
    if (tryNode(i, new Array<boolean>(hosts.length).fill(false))) count++;
  return count;
}
