import assert from 'node:assert/strict';
import type { Observations } from '../../../src/observe/index.js';
import type { Host } from '../../../src/observe/types.js';
import type { Action, ClusterPlan, Plan, PlannedNode } from '../../../src/plan/types.js';
import { siteView } from '../../../src/reconcile/view.js';
import { emptyState } from '../../../src/state/applied.js';

/**
 * The status page shows the view's texts as they are: a problem, reason or note that quotes
 * a value from the site or a host (a password in a URL, a token) must reach it redacted,
 * as it reaches git and the status API.
 */
describe('reconcile: the status page view', () => {
  const secret = 'hunter2-Zq8vK3mR9xT1';
  const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const leak = `https://admin:${secret}@mirror.example/ password=${secret} ${token}`;

  const node: PlannedNode = {
    name: 'master-1',
    roles: ['master'],
    host: 'metal3/host-0',
    mac: '52:54:00:00:00:01',
    ip: '198.18.0.10',
    ipSource: 'inventory',
    change: 'add',
    placement: `first eligible host (${leak})`,
  };
  const action: Action = {
    kind: 'provision-cluster',
    cluster: 'east',
    nodes: ['master-1'],
    reason: `new cluster (${leak})`,
    inputs: [],
  };
  const cluster = {
    cluster: 'east',
    nodes: [node],
    actions: [action],
    notes: [`removal waits for --prune (${leak})`],
  } as Partial<ClusterPlan> as ClusterPlan;
  const plan: Plan = {
    clusters: [cluster],
    problems: [
      { code: 'NO_ELIGIBLE_HOST', severity: 'error', message: `no host for worker-1 (${leak})` },
    ],
    hash: 'abc',
  };
  const host: Host = {
    name: 'host-1',
    namespace: 'metal3',
    key: 'metal3/host-1',
    nics: [],
    macs: [],
    sriov: false,
    qat: false,
    labels: {},
    eligible: false,
    ineligibleReason: `BMC address ${leak}`,
    origin: 'hosts.yaml:1',
  };
  const observations: Observations = {
    hosts: [host],
    leases: new Map(),
    applied: emptyState(),
    problems: [],
    inventory: '1 BareMetalHost from the site',
  };

  it('passes every message and reason through redact', () => {
    const view = siteView({ plan, observations });
    const texts = [
      ...(view?.plan?.problems.map((p) => p.message) ?? []),
      ...(view?.plan?.clusters.flatMap((c) => [
        ...c.notes,
        ...c.actions.map((a) => a.reason),
        ...c.nodes.map((n) => n.placement),
      ]) ?? []),
      ...(view?.inventory?.hosts.map((h) => h.reason ?? '') ?? []),
    ];
    assert.equal(texts.length, 5);
    for (const text of texts) {
      assert.ok(!text.includes(secret), `not redacted: ${text}`);
      assert.ok(!text.includes(token), `not redacted: ${text}`);
      assert.match(text, /\*\*\*/);
      assert.match(text, /mirror\.example/, 'the rest stays readable');
    }
  });
});
