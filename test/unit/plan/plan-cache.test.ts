import assert from 'node:assert/strict';
import type { ExecutionSettings } from '../../../src/config/execution.js';
import type { NodeFacts } from '../../../src/observe/facts.js';
import type { Host, Lease } from '../../../src/observe/types.js';
import { canonicalJson, clusterHashText, planHash, sha256Hex } from '../../../src/plan/hash.js';
import {
  PlanCache,
  planSite,
  type ClusterPlan,
  type Plan,
  type PlanInput,
} from '../../../src/plan/index.js';
import { emptyState, type AppliedState } from '../../../src/state/applied.js';
import type { ClusterModel, Day2Settings, SiteModel } from '../../../src/validate/model.js';
import { applied, appliedFrom, cluster, host, leasesFor, node } from './plan-fixture.js';
import { withDerivedKept } from '../util/derived-kept.js';

const hosts = Array.from({ length: 8 }, (_, i) => host(i + 1));
const leases = leasesFor(hosts);
/** Saturday 01:00–05:00 Berlin (UTC+1 in January). */
const day2: Day2Settings = {
  windows: [{ days: ['sat'], start: '01:00', end: '05:00', timezone: 'Europe/Berlin' }],
  gate: 'running',
  suspend: false,
  windowsFrom: 'Site',
};
const SATURDAY_0200 = Date.parse('2026-01-03T01:00:00Z');
const FRIDAY = Date.parse('2026-01-02T12:00:00Z');
const east = cluster(
  'east',
  [node('master-1', ['master'], { mac: '52:54:00:00:00:01' }), node('worker-1', ['worker'])],
  { workerSoftware: [{ name: 'curl' }], day2 },
);
const west = cluster('west', [node('master-1', ['master']), node('worker-1', ['worker'])], {
  plugins: ['emco'],
  day2,
});
const settings = (user: string): ExecutionSettings =>
  ({
    installer: { flavour: 'kud', mode: 'local', commands: { addon: 'addon {plugins}' } },
    ssh: { user, port: 22 },
  }) as unknown as ExecutionSettings;

interface World {
  clusters: ClusterModel[];
  hosts: Host[];
  leases: Map<string, Lease>;
  applied: AppliedState;
  facts?: Map<string, NodeFacts>;
  settings?: ExecutionSettings;
  now?: number;
  suspended?: PlanInput['suspended'];
}

function input(w: World, cache?: PlanCache): PlanInput {
  const model: SiteModel = { clusters: w.clusters, inventory: [], day2 };
  return {
    model,
    hosts: w.hosts,
    leases: w.leases,
    applied: w.applied,
    prune: false,
    flavour: 'kud',
    ...(w.facts ? { facts: w.facts } : {}),
    ...(w.settings ? { settings: w.settings } : {}),
    ...(w.now !== undefined ? { now: w.now } : {}),
    ...(w.suspended ? { suspended: w.suspended } : {}),
    ...(cache ? { cache } : {}),
  };
}

/** A plan through the cache, checked against one made without it; how many clusters were kept. */
function planBoth(cache: PlanCache, w: World): { plan: Plan; reused: number } {
  const warm = planSite(input(w, cache));
  const cold = planSite(input(w));
  assert.equal(warm.hash, cold.hash);
  assert.deepEqual(warm, cold);
  return { plan: warm, reused: cache.reused };
}

/** The applied state of both clusters, as a plan of them would leave it. */
function running(p: Plan): AppliedState {
  return appliedFrom(
    p.clusters.map((c) =>
      applied(
        c.cluster,
        c.nodes.map((n) => ({ name: n.name, roles: n.roles, host: n.host, mac: n.mac, ip: n.ip })),
      ),
    ),
  );
}

describe('plan cache: a cluster whose inputs are the same objects keeps its plan', () => {
  withDerivedKept();
  const base: World = { clusters: [east, west], hosts, leases, applied: emptyState() };

  it('the same inputs: every cluster reused, the same plan and hash as without the cache', () => {
    const cache = new PlanCache();
    assert.equal(planBoth(cache, base).reused, 0);
    assert.equal(planBoth(cache, base).reused, 2);
    assert.equal(planBoth(cache, { ...base, hosts: [...hosts] }).reused, 2);
  });

  it('a new object for a placed host, another lease map, another model: only what they touch', () => {
    const cache = new PlanCache();
    const first = planBoth(cache, base).plan;
    // A label changed on the host of east's master: a new object, the same for assignment.
    const changed = hosts.map((h) => (h.name === 'node-1' ? { ...h, labels: { rack: 'r9' } } : h));
    assert.equal(planBoth(cache, { ...base, hosts: changed }).reused, 1);
    // The address of west's master moves.
    const westHost = first.clusters.find((c) => c.cluster === 'west')?.nodes[0]?.host;
    const moved = new Map(leases);
    const mac = hosts.find((h) => `metal3/${h.name}` === westHost)?.bootMac as string;
    moved.set(mac, { mac, ip: '198.18.0.99', origin: 'leases:99' });
    const w = { ...base, hosts: changed, leases: moved };
    const p = planBoth(cache, w);
    assert.equal(p.reused, 0, 'a new map: every address looked up again');
    assert.notEqual(p.plan.hash, first.hash);
    assert.equal(planBoth(cache, w).reused, 2);
    // A cluster's model replaced (its documents changed): that one only.
    const west2 = { ...west, workerSoftware: [{ name: 'tmux' }] };
    assert.equal(planBoth(cache, { ...w, clusters: [east, west2] }).reused, 1);
  });

  it('the applied state, facts and settings are inputs', () => {
    const cache = new PlanCache();
    const first = planBoth(cache, base).plan;
    const state = running(first);
    assert.equal(planBoth(cache, { ...base, applied: state }).reused, 0);
    // Read again from disk: equal content, new objects.
    const reread = appliedFrom([...state.clusters.values()].map((c) => structuredClone(c)));
    assert.equal(planBoth(cache, { ...base, applied: reread }).reused, 2);
    const eastApplied = state.clusters.get('east');
    assert.ok(eastApplied);
    const fewer = appliedFrom([
      { ...eastApplied, plugins: ['emco'] },
      state.clusters.get('west') as NonNullable<typeof eastApplied>,
    ]);
    assert.equal(planBoth(cache, { ...base, applied: fewer }).reused, 1);
    const facts = new Map<string, NodeFacts>([
      ['east/worker-1', { reachable: true, installed: { curl: null } }],
    ]);
    const withFacts = planBoth(cache, { ...base, applied: fewer, facts });
    assert.equal(withFacts.reused, 1, 'east has facts now');
    assert.equal(planBoth(cache, { ...base, applied: fewer, facts: new Map(facts) }).reused, 2);
    const installed = new Map<string, NodeFacts>([
      ['east/worker-1', { reachable: true, installed: { curl: '8.5.0-2' } }],
    ]);
    const p = planBoth(cache, { ...base, applied: fewer, facts: installed });
    assert.equal(p.reused, 1);
    assert.notEqual(p.plan.hash, withFacts.plan.hash);
    const s = { ...base, applied: fewer, facts: installed, settings: settings('ubuntu') };
    assert.equal(planBoth(cache, s).reused, 0);
    assert.equal(planBoth(cache, { ...s, settings: settings('ubuntu') }).reused, 2);
    assert.equal(planBoth(cache, { ...s, settings: settings('admin') }).reused, 0);
  });

  it('gating is done again every time and never changes a kept plan', () => {
    const cache = new PlanCache();
    const state = running(planBoth(cache, base).plan);
    const changed = appliedFrom(
      [...state.clusters.values()].map((c) => ({ ...c, plugins: ['other'] })),
    );
    const w = { ...base, applied: changed };
    const outside = planBoth(cache, { ...w, now: FRIDAY }).plan;
    assert.ok(outside.clusters.every((c) => c.gate?.state === 'deferred'));
    const inside = planBoth(cache, { ...w, now: SATURDAY_0200 });
    assert.equal(inside.reused, 2);
    assert.ok(inside.plan.clusters.every((c) => c.gate === undefined && c.windows));
    const suspended = planBoth(cache, {
      ...w,
      now: SATURDAY_0200,
      suspended: { west: { since: '2026-01-03T00:00:00Z' } },
    });
    assert.equal(suspended.reused, 2);
    assert.equal(
      suspended.plan.clusters.find((c) => c.cluster === 'west')?.gate?.state,
      'suspended',
    );
    const resumed = planBoth(cache, { ...w, now: SATURDAY_0200 }).plan;
    assert.ok(resumed.clusters.every((c) => c.gate === undefined));
    // The kept plans themselves were never gated.
    for (const entry of cache.clusters.values()) {
      assert.equal(entry.plan.gate, undefined);
      assert.equal(entry.plan.windows, undefined);
    }
  });

  it('a plan problem of a kept cluster is reported every time, as a fresh object', () => {
    const cache = new PlanCache();
    // No address for east's master: NO_IP, east blocked.
    const noLease = new Map(leases);
    noLease.delete('52:54:00:00:00:01');
    const w = { ...base, leases: noLease };
    const a = planBoth(cache, w).plan;
    const b = planSite(input(w, cache));
    assert.equal(cache.reused, 2);
    assert.deepEqual(
      b.problems.map((p) => p.code),
      ['NO_IP'],
    );
    assert.notEqual(b.problems[0], a.problems[0]);
  });
});

/** What the plan hash covers of a cluster, as an object (planHash's definition). */
function hashedEntry(c: ClusterPlan): unknown {
  return {
    actions: c.actions.map((a) => ({
      kind: a.kind,
      nodes: a.nodes,
      packages: a.packages,
      plugins: a.plugins,
    })),
    cluster: c.cluster,
    desired: c.desired,
    etcd: c.etcd,
    flavour: c.flavour,
    hostsIni: c.hostsIni,
    nodes: c.nodes.map((n) => ({
      change: n.change,
      host: n.host,
      ip: n.ip,
      mac: n.mac,
      name: n.name,
      roles: n.roles,
    })),
    podSubnet: c.podSubnet,
    rollout: c.rollout,
  };
}

describe('plan hash from per-cluster entries', () => {
  it('is the SHA-256 of the canonical JSON of the whole hashed plan, as before', () => {
    const p = planSite(input({ clusters: [east, west], hosts, leases, applied: emptyState() }));
    for (const s of [undefined, settings('ubuntu')]) {
      const whole = sha256Hex(
        canonicalJson({
          clusters: p.clusters.map(hashedEntry),
          settings: s,
        }),
      );
      assert.equal(planHash(p.clusters, s), whole);
    }
    assert.equal(planHash([], undefined), sha256Hex('{"clusters":[]}'));
  });
});

describe('clusterHashText', () => {
  const reference = (c: ClusterPlan): string => canonicalJson(hashedEntry(c));

  it('writes the same text as canonicalJson over the entry, for generated clusters', () => {
    let seed = 7;
    const r = (): number =>
      (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) / 0x7fffffff;
    const maybe = <T>(v: T): T | undefined => (r() < 0.3 ? undefined : v);
    const text = (): string =>
      ['a', 'b"q', 'ü\n', '\u2028', 'x\\y', ''][Math.floor(r() * 6)] as string;
    for (let i = 0; i < 500; i++) {
      const c = {
        cluster: text(),
        flavour: 'kubespray',
        actions: Array.from({ length: Math.floor(r() * 3) }, () => ({
          kind: 'provision-cluster',
          nodes: maybe([text(), text()]),
          // Package changes as the plan makes them (every key of PackageChange, hashed), in
          // either key order.
          packages: maybe([
            r() < 0.5
              ? { node: text(), name: text(), from: maybe(text()), to: maybe(text()) }
              : { unheld: maybe(true), to: maybe(text()), name: text(), node: text() },
          ]),
          plugins: maybe([text()]),
          reason: text(),
        })),
        desired: {
          software: { worker: [{ name: text() }], master: [] },
          plugins: [text()],
          ...(r() < 0.5 ? { kubernetesVersion: text() } : {}),
        },
        etcd: maybe([text()]),
        hostsIni: text(),
        nodes: Array.from({ length: Math.floor(r() * 4) }, () => ({
          roles: [text()],
          name: text(),
          mac: maybe(text()),
          ip: maybe(text()),
          host: maybe(text()),
          change: 'keep',
          placement: text(),
        })),
        podSubnet: maybe(text()),
        rollout: maybe({
          maxUnavailable: 1,
          drainTimeoutSeconds: 60,
          health: { command: [text()] },
        }),
        notes: [],
      } as unknown as ClusterPlan;
      assert.equal(clusterHashText(c), reference(c), JSON.stringify(c));
    }
  });
});
