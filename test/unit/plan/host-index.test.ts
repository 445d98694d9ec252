import assert from 'node:assert/strict';
import { identityMacs, type Host } from '../../../src/observe/types.js';
import { hostKey } from '../../../src/observe/inventory/hosts.js';
import { assignHosts, type Assignment, type PriorAssignment } from '../../../src/plan/assign.js';
import type { ClusterModel } from '../../../src/validate/model.js';
import {
  hostClasses,
  indexHosts,
  neutralPatch,
  type HostIndex,
} from '../../../src/plan/assign/site-hosts.js';
import { cluster, host, node } from './plan-fixture.js';
import { withDerivedKept } from '../util/derived-kept.js';

const hosts: Host[] = Array.from({ length: 12 }, (_, i) =>
  host(i + 1, i % 3 === 0 ? { cpuCount: 32 } : i === 10 ? { eligible: false } : {}),
);
const clusters = [
  cluster('east', [
    node('master-1', ['master'], { mac: '52:54:00:00:00:02' }),
    node('worker-1', ['worker'], { cpu: 24 }),
  ]),
  cluster('west', [node('master-1', ['master']), node('worker-1', ['worker'])]),
];

/** What an index says, as plain data: every host's entry, lookups and classes. */
function view(index: HostIndex): unknown {
  return {
    all: index.all.map((e) => [e.host.key, e.host, e.cap]),
    entries: index.entries.map((e) => e.host),
    byKey: hosts.map((h) => index.byKey.get(`metal3/${h.name}`)?.host),
    byMac: hosts.map((h) => index.byMac.get(h.bootMac as string)?.map((e) => e.host)),
    ineligible: index.ineligible.map((e) => e.host),
    classes: hostClasses(index).map((c) => [c.cap, c.hosts.map((e) => e.host)]),
  };
}

/** `hosts` with host `n` (1-based) replaced by a new object with `over`. */
function replace(list: Host[], n: number, over: Partial<Host>): Host[] {
  return list.map((h, i) => {
    if (i !== n - 1) return h;
    const next = { ...h, ...over };
    return { ...next, key: hostKey(next), macs: identityMacs(next.bootMac, next.nics) };
  });
}

const plain = (a: Assignment): unknown => ({ placements: a.placements, unplaced: a.unplaced });

describe('host index: kept between plans while the hosts are the same objects', () => {
  withDerivedKept();
  it('the same host objects give the same index; another list of them too', () => {
    const first = indexHosts(hosts);
    hostClasses(first);
    assert.equal(indexHosts(hosts, first), first);
    assert.equal(indexHosts([...hosts], first), first);
  });

  it('a host replaced by a new object: patched, as a fresh index would be', () => {
    const first = indexHosts(hosts);
    hostClasses(first);
    for (const [what, over] of [
      ['a label', { labels: { rack: 'r2' } }],
      ['capacity', { cpuCount: 64 }],
      ['eligibility', { eligible: false, ineligibleReason: 'powered off' }],
    ] as const) {
      const next = replace(hosts, 5, over);
      const patched = indexHosts(next, first);
      assert.notEqual(patched, first, what);
      assert.deepEqual(view(patched), view(indexHosts(next)), what);
      // Only a change assignment does not look at lets it reuse its placements.
      assert.equal(neutralPatch(patched)?.from === first, what === 'a label', what);
    }
  });

  it('an index forgets how it was patched once patched again (no chain of old indexes kept)', () => {
    const first = indexHosts(hosts);
    const second = indexHosts(replace(hosts, 5, { labels: { rack: 'r2' } }), first);
    assert.equal(neutralPatch(second)?.from, first);
    const third = indexHosts(
      replace(second.hosts as Host[], 6, { labels: { rack: 'r3' } }),
      second,
    );
    assert.equal(neutralPatch(third)?.from, second);
    assert.equal(neutralPatch(second), undefined);
  });

  it('a new MAC, another key, another number of hosts: built again', () => {
    const first = indexHosts(hosts);
    for (const next of [
      replace(hosts, 3, { bootMac: '52:54:00:00:00:99', nics: [] }),
      replace(hosts, 3, { name: 'renamed' }),
      hosts.slice(1),
    ]) {
      const again = indexHosts(next, first);
      assert.equal(neutralPatch(again), undefined);
      assert.deepEqual(view(again), view(indexHosts(next)));
    }
  });

  it('patched many times over (its lookups made plain again on the way): as a fresh index', () => {
    let list: Host[] = Array.from({ length: 400 }, (_, i) => host(i + 1));
    let index = indexHosts(list);
    for (let round = 0; round < 600; round++) {
      list = replace(list, (round % 400) + 1, { labels: { round: String(round) } });
      index = indexHosts(list, index);
      if (round % 97 === 0) {
        const fresh = indexHosts(list);
        for (const h of list) {
          assert.equal(index.byKey.get(`metal3/${h.name}`)?.host, h);
          assert.deepEqual(
            index.byMac.get(h.bootMac as string)?.map((e) => e.host),
            fresh.byMac.get(h.bootMac as string)?.map((e) => e.host),
          );
        }
      }
    }
    assert.deepEqual(
      index.all.map((e) => e.host),
      indexHosts(list).all.map((e) => e.host),
    );
  });
});

describe('assignment: kept between plans while clusters, prior placements and hosts are the same', () => {
  withDerivedKept();
  it('the same inputs give the same assignment', () => {
    const first = assignHosts(clusters, hosts, []);
    assert.equal(assignHosts(clusters, hosts, [], first), first);
    assert.equal(assignHosts([...clusters], [...hosts], [], first), first);
  });

  it('a host changed where assignment does not look: the placements on the new host object', () => {
    const first = assignHosts(clusters, hosts, []);
    const placed = first.placements[0]?.host as Host;
    const n = hosts.indexOf(placed) + 1;
    const next = replace(hosts, n, { labels: { rack: 'r7' } });
    const again = assignHosts(clusters, next, [], first);
    assert.equal(again.unplaced, first.unplaced, 'kept');
    assert.equal(again.placements[0]?.host, next[n - 1]);
    assert.deepEqual(plain(again), plain(assignHosts(clusters, next, [])));
  });

  it('other hosts, clusters or prior placements: assigned again, as from nothing', () => {
    const first = assignHosts(clusters, hosts, []);
    const placed = first.placements.find((p) => p.node === 'worker-1' && p.cluster === 'east');
    assert.ok(placed);
    const n = hosts.indexOf(placed.host) + 1;
    const cases: Array<[string, [ClusterModel[], Host[], PriorAssignment[]]]> = [
      ['the host now too small', [clusters, replace(hosts, n, { cpuCount: 8 }), []]],
      ['the host ineligible', [clusters, replace(hosts, n, { eligible: false }), []]],
      ['a cluster model', [[clusters[0], { ...clusters[1] }] as typeof clusters, hosts, []]],
      [
        'a prior placement',
        [clusters, hosts, [{ cluster: 'west', node: 'worker-1', host: 'metal3/node-12' }]],
      ],
    ];
    for (const [what, args] of cases) {
      const again = assignHosts(...args, first);
      assert.notEqual(again, first, what);
      assert.deepEqual(plain(again), plain(assignHosts(...args)), what);
    }
    const moved = assignHosts(clusters, replace(hosts, n, { cpuCount: 8 }), [], first);
    assert.notEqual(
      moved.placements.find((p) => p.node === 'worker-1' && p.cluster === 'east')?.host.name,
      placed.host.name,
    );
  });
});
