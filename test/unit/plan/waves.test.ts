import assert from 'node:assert/strict';
import { planSite, type Plan } from '../../../src/plan/index.js';
import type { AppliedState } from '../../../src/state/applied.js';
import type { ClusterModel, SiteModel, Waves } from '../../../src/validate/model.js';
import { applied, appliedFrom, cluster, host, leasesFor, node } from './plan-fixture.js';

const hosts = [host(1), host(2), host(3)];
const leases = leasesFor(hosts);
const NOW = Date.parse('2026-11-24T10:00:00Z');
const soak = 30 * 60_000;

function c(
  name: string,
  n: number,
  version: string,
  labels: Record<string, string> = {},
): ClusterModel {
  const mac = `52:54:00:00:00:0${n}`;
  return cluster(name, [node('master-1', ['master'], { mac })], {
    masterSoftware: [{ name: 'jq', version }],
    labels,
  });
}
function running(appliedAt: Record<string, string>): AppliedState {
  return appliedFrom(
    Object.entries(appliedAt).map(([name, at], i) =>
      applied(
        name,
        [
          {
            name: 'master-1',
            roles: ['master'],
            host: `metal3/node-${i + 1}`,
            mac: `52:54:00:00:00:0${i + 1}`,
            ip: `198.18.0.${10 + i}`,
          },
        ],
        { appliedAt: at },
        { master: [{ name: 'jq', version: '1.6' }] },
      ),
    ),
  );
}
function plan(clusters: ClusterModel[], state: AppliedState, waves: Waves): Plan {
  const model: SiteModel = { clusters, inventory: [], waves };
  return planSite({ model, hosts, leases, applied: state, prune: false, flavour: 'kud', now: NOW });
}
const gate = (p: Plan, name: string) => p.clusters.find((x) => x.cluster === name)?.gate;

describe('plan: waves across clusters', () => {
  const waves: Waves = { waves: [['a'], ['b', 'c']], soakMs: soak };
  const longAgo = {
    a: '2026-11-23T00:00:00Z',
    b: '2026-11-23T00:00:00Z',
    c: '2026-11-23T00:00:00Z',
  };

  it('a change to every cluster runs wave by wave: only the first wave now', () => {
    const p = plan([c('a', 1, '1.7'), c('b', 2, '1.7'), c('c', 3, '1.7')], running(longAgo), waves);
    assert.equal(gate(p, 'a'), undefined);
    assert.equal(gate(p, 'b')?.reason, 'WaitingForWave');
    assert.match(
      gate(p, 'b')?.message ?? '',
      /wave 2 waits for the waves before it: a \(upgrade-packages to apply first\)/,
    );
    assert.equal(gate(p, 'c')?.state, 'deferred');
  });

  it('the next wave waits until the one before has stayed Ready for the soak', () => {
    // a was changed 10 minutes ago and has nothing left to do; b and c still have.
    const state = running({ ...longAgo, a: '2026-11-24T09:50:00Z' });
    const p = plan([c('a', 1, '1.6'), c('b', 2, '1.7'), c('c', 3, '1.7')], state, waves);
    assert.equal(gate(p, 'b')?.opensAt, '2026-11-24T10:20:00Z');
    const later = plan(
      [c('a', 1, '1.6'), c('b', 2, '1.7'), c('c', 3, '1.7')],
      running({ ...longAgo, a: '2026-11-24T09:20:00Z' }),
      waves,
    );
    assert.equal(gate(later, 'b'), undefined, 'soaked: wave 2 goes');
    assert.equal(gate(later, 'c'), undefined);
  });

  it('a wave with a blocked cluster stops the rest; clusters in no wave come last', () => {
    const unplaced = cluster('a', [node('master-1', ['master'], { mac: '52:54:00:00:00:99' })]);
    const p = plan([unplaced, c('b', 2, '1.7'), c('d', 3, '1.7')], running(longAgo), {
      waves: [['a'], ['b']],
      soakMs: 0,
    });
    assert.match(gate(p, 'b')?.message ?? '', /a \(blocked\)/);
    assert.equal(gate(p, 'd')?.reason, 'WaitingForWave');
  });

  it('waves by label selector', () => {
    const p = plan(
      [
        c('a', 1, '1.7', { ring: 'canary' }),
        c('b', 2, '1.7', { ring: 'main' }),
        c('c', 3, '1.6', { ring: 'main' }),
      ],
      running(longAgo),
      {
        waves: [{ matchLabels: { ring: 'canary' } }, { matchLabels: { ring: 'main' } }],
        soakMs: 0,
      },
    );
    assert.equal(gate(p, 'a'), undefined);
    assert.equal(gate(p, 'b')?.reason, 'WaitingForWave');
  });

  it('the hash does not depend on the waves (the clock decides them)', () => {
    const models = [c('a', 1, '1.7'), c('b', 2, '1.7'), c('c', 3, '1.7')];
    assert.equal(
      plan(models, running(longAgo), waves).hash,
      plan(models, running(longAgo), { waves: [], soakMs: 0 }).hash,
    );
  });
});
