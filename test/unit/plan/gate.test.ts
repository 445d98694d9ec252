import assert from 'node:assert/strict';
import { formatPlan } from '../../../src/cli/output/plan.js';
import { planSite, type PlanInput } from '../../../src/plan/index.js';
import type { Day2Settings, SiteModel } from '../../../src/validate/model.js';
import { applied, appliedFrom, cluster, host, leasesFor, node } from './plan-fixture.js';

const hosts = [host(1), host(2)];
const leases = leasesFor(hosts);
const saturday: Day2Settings = {
  windows: [{ days: ['sat'], start: '01:00', end: '05:00', timezone: 'Europe/Berlin' }],
  gate: 'running',
  suspend: false,
  windowsFrom: 'Site',
};
const TUESDAY = Date.parse('2026-11-24T10:00:00Z');
const SATURDAY = Date.parse('2026-11-28T02:00:00Z'); // 03:00 in Berlin

const east = (day2: Day2Settings) =>
  cluster('east', [node('master-1', ['master'], { mac: '52:54:00:00:00:01' })], {
    masterSoftware: [{ name: 'jq', version: '1.7' }],
    day2,
  });
const running = appliedFrom([
  applied(
    'east',
    [
      {
        name: 'master-1',
        roles: ['master'],
        host: 'metal3/node-1',
        mac: '52:54:00:00:00:01',
        ip: '198.18.0.10',
      },
    ],
    {},
    { master: [{ name: 'jq', version: '1.6' }] },
  ),
]);

function plan(day2: Day2Settings, over: Partial<PlanInput> = {}, state = running) {
  const model: SiteModel = { clusters: [east(day2)], inventory: [], day2 };
  return planSite({ model, hosts, leases, applied: state, prune: false, flavour: 'kud', ...over });
}

describe('plan: maintenance windows and suspend', () => {
  it("outside every window, a running cluster's actions are deferred to the next opening", () => {
    const p = plan(saturday, { now: TUESDAY });
    const c = p.clusters[0];
    assert.deepEqual(
      c?.actions.map((a) => a.kind),
      ['upgrade-packages'],
      'still planned',
    );
    assert.equal(c?.gate?.state, 'deferred');
    assert.equal(c?.gate?.reason, 'OutsideMaintenanceWindow');
    assert.equal(c?.gate?.opensAt, '2026-11-28T00:00:00Z'); // 01:00 CET
    const text = formatPlan(p);
    assert.match(text, /upgrade-packages .*\[deferred until 2026-11-28T00:00:00Z\]/);
    assert.match(text, /Held: east \(deferred until 2026-11-28T00:00:00Z\)/);
  });

  it("a whole cluster gone from the site: remove-cluster, held by the Site's windows and suspend", () => {
    const gone = (day2: Day2Settings, now: number) =>
      planSite({
        model: { clusters: [], inventory: [], day2 },
        hosts,
        leases,
        applied: running,
        prune: true,
        flavour: 'kud',
        now,
      }).clusters[0];
    const outside = gone(saturday, TUESDAY);
    assert.deepEqual(
      outside?.actions.map((a) => a.kind),
      ['remove-cluster'],
    );
    assert.equal(outside?.gate?.state, 'deferred');
    assert.equal(gone(saturday, SATURDAY)?.gate, undefined);
    assert.equal(
      gone({ ...saturday, suspend: true, suspendFrom: 'Site' }, SATURDAY)?.gate?.state,
      'suspended',
    );
  });

  it('inside a window, nothing is deferred and the apply gets the windows to check again', () => {
    const c = plan(saturday, { now: SATURDAY }).clusters[0];
    assert.equal(c?.gate, undefined);
    assert.deepEqual(c?.windows, saturday.windows);
  });

  it('the hash does not depend on the clock, the windows or a suspension', () => {
    const hashes = new Set([
      plan(saturday, { now: TUESDAY }).hash,
      plan(saturday, { now: SATURDAY }).hash,
      plan({ ...saturday, suspend: true, suspendFrom: 'Cluster' }, { now: TUESDAY }).hash,
      plan({ windows: [], gate: 'running', suspend: false }).hash,
    ]);
    assert.equal(hashes.size, 1);
  });

  it('a new cluster is provisioned outside the windows unless they gate all', () => {
    const fresh = appliedFrom([]);
    assert.equal(plan(saturday, { now: TUESDAY }, fresh).clusters[0]?.gate, undefined);
    const all = plan({ ...saturday, gate: 'all' }, { now: TUESDAY }, fresh).clusters[0];
    assert.equal(all?.gate?.state, 'deferred');
    assert.deepEqual(
      all?.actions.map((a) => a.kind),
      ['provision-cluster', 'install-packages'],
    );
  });

  it('--ignore-windows: the actions run, and the plan says they run outside the windows', () => {
    const c = plan(saturday, { now: TUESDAY, ignoreWindows: true }).clusters[0];
    assert.equal(c?.gate?.state, 'ignored');
    assert.match(c?.gate?.message ?? '', /applied anyway with --ignore-windows/);
  });

  it('a running cluster with rollout: the plan says how its nodes will change, and hashes it', () => {
    const rollout = {
      maxUnavailable: '25%',
      drain: {
        enabled: true,
        timeoutMs: 600_000,
        ignoreDaemonSets: true,
        deleteEmptyDirData: false,
      },
      healthCheck: { timeoutMs: 300_000 },
    };
    const p = plan({ ...saturday, windows: [], rollout });
    assert.deepEqual(p.clusters[0]?.rollout, rollout);
    assert.match(
      formatPlan(p),
      /rollout: masters one at a time, then workers 25% at a time; each cordoned and drained, changed, checked Ready, uncordoned/,
    );
    assert.notEqual(p.hash, plan({ ...saturday, windows: [] }).hash);
    assert.equal(
      plan({ ...saturday, rollout }, {}, appliedFrom([])).clusters[0]?.rollout,
      undefined,
      'not while provisioning',
    );
  });

  it('suspend holds everything, whatever the clock; an API suspension too', () => {
    const c = plan({ ...saturday, suspend: true, suspendFrom: 'Cluster' }, { now: SATURDAY })
      .clusters[0];
    assert.equal(c?.gate?.state, 'suspended');
    assert.equal(c?.gate?.by, 'site');
    assert.match(
      formatPlan(plan({ ...saturday, suspend: true }, { now: SATURDAY })),
      /\[held: suspended\]/,
    );
    const api = plan(saturday, {
      now: SATURDAY,
      suspended: { east: { since: '2026-11-24T09:00:00Z', reason: 'fan failure' } },
    }).clusters[0];
    assert.equal(api?.gate?.by, 'api');
    assert.equal(api?.gate?.since, '2026-11-24T09:00:00Z');
    assert.match(api?.gate?.message ?? '', /suspend API of bpa serve \(fan failure\)/);
    const all = plan(saturday, {
      now: SATURDAY,
      suspended: { '*': { since: '2026-11-24T09:00:00Z' } },
    }).clusters[0];
    assert.equal(all?.gate?.state, 'suspended');
  });
});
