import assert from 'node:assert/strict';
import { kstatus, type KStatus } from '../../../src/report/kube/kstatus.js';
import { camel, conditionsOf, history, wantedConditions } from '../../../src/report/kube/status.js';
import { statusPatch } from '../../../src/report/kube/writer.js';
import { clusterEvents } from '../../../src/report/kube/events-of.js';
import { microTime } from '../../../src/report/kube/events.js';
import type { Phase } from '../../../src/report/status.js';

type Cond = { type: string; status: string; reason?: string; message?: string };
const obj = (o: {
  generation?: number;
  observed?: number;
  deleting?: boolean;
  conditions?: Cond[];
}): Parameters<typeof kstatus>[0] => ({
  metadata: {
    ...(o.generation !== undefined ? { generation: o.generation } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-11-28T00:00:00Z' } : {}),
  },
  status: {
    ...(o.observed !== undefined ? { observedGeneration: o.observed } : {}),
    ...(o.conditions ? { conditions: o.conditions } : {}),
  },
});

describe('kstatus of bpa objects (the kstatus truth table)', () => {
  // sigs.k8s.io/cli-utils pkg/kstatus/status: generic rules, in their order, for a custom kind.
  const table: Array<[string, Parameters<typeof kstatus>[0], KStatus]> = [
    [
      'deletion wins over everything',
      obj({
        generation: 2,
        observed: 1,
        deleting: true,
        conditions: [{ type: 'Stalled', status: 'True' }],
      }),
      'Terminating',
    ],
    [
      'a generation not yet observed',
      obj({ generation: 2, observed: 1, conditions: [{ type: 'Ready', status: 'True' }] }),
      'InProgress',
    ],
    [
      'an unobserved generation wins over Stalled',
      obj({ generation: 3, observed: 2, conditions: [{ type: 'Stalled', status: 'True' }] }),
      'InProgress',
    ],
    [
      'no observedGeneration: the check is skipped',
      obj({ generation: 5, conditions: [{ type: 'Ready', status: 'True' }] }),
      'Current',
    ],
    [
      'Reconciling True',
      obj({
        generation: 1,
        observed: 1,
        conditions: [{ type: 'Reconciling', status: 'True', message: 'waiting' }],
      }),
      'InProgress',
    ],
    [
      'Stalled True',
      obj({ generation: 1, observed: 1, conditions: [{ type: 'Stalled', status: 'True' }] }),
      'Failed',
    ],
    [
      'the first of Reconciling and Stalled in the list wins',
      obj({
        generation: 1,
        observed: 1,
        conditions: [
          { type: 'Reconciling', status: 'True' },
          { type: 'Stalled', status: 'True' },
        ],
      }),
      'InProgress',
    ],
    [
      'Reconciling and Stalled False',
      obj({
        generation: 1,
        observed: 1,
        conditions: [
          { type: 'Reconciling', status: 'False' },
          { type: 'Stalled', status: 'False' },
        ],
      }),
      'Current',
    ],
    [
      'Ready False alone is Current (done, not ready)',
      obj({ generation: 1, observed: 1, conditions: [{ type: 'Ready', status: 'False' }] }),
      'Current',
    ],
    [
      'Ready True',
      obj({ generation: 1, observed: 1, conditions: [{ type: 'Ready', status: 'True' }] }),
      'Current',
    ],
    ['no status at all', { metadata: { generation: 1 } }, 'Current'],
  ];
  for (const [name, o, want] of table)
    it(`${name} → ${want}`, () => assert.equal(kstatus(o).status, want));
});

describe('conditions bpa writes for each phase', () => {
  const read = (phase: Phase, reason: string): KStatus => {
    const c = conditionsOf(wantedConditions(phase, reason, 'm'), 4, undefined, 'T');
    return kstatus({
      metadata: { generation: 4 },
      status: { observedGeneration: 4, conditions: c },
    }).status;
  };
  const table: Array<[Phase, string, string, KStatus]> = [
    ['Ready', 'Applied', 'ReconciliationSucceeded', 'Current'],
    ['Provisioning', 'NotApplied', 'Progressing', 'InProgress'],
    ['Waiting', 'OutsideMaintenanceWindow', 'OutsideMaintenanceWindow', 'InProgress'],
    ['Waiting', 'WaitingForWave', 'DependencyNotReady', 'InProgress'],
    ['Suspended', 'Suspended', 'Suspended', 'Current'],
    ['Degraded', 'NodesUnreachable', 'NodesUnreachable', 'Current'],
    ['Degraded', 'RolloutHalted', 'ReconciliationFailed', 'Failed'],
    ['Failed', 'INSTALLER_FAILED', 'ReconciliationFailed', 'Failed'],
    ['Blocked', 'PlanNotApproved', 'ReconciliationFailed', 'Failed'],
    ['Rejected', 'InvalidRevision', 'ReconciliationFailed', 'Failed'],
  ];
  for (const [phase, reason, readyReason, want] of table)
    it(`${phase} (${reason}): Ready ${readyReason}, kstatus ${want}`, () => {
      const w = wantedConditions(phase, reason, 'm');
      assert.equal(w.ready.status, phase === 'Ready' ? 'True' : 'False');
      assert.equal(w.ready.reason, readyReason);
      assert.equal(read(phase, reason), want);
    });

  it('a stalled reason is the report reason in CamelCase', () => {
    assert.equal(
      wantedConditions('Failed', 'INSTALLER_FAILED', 'm').stalled?.reason,
      'InstallerFailed',
    );
    assert.equal(camel('PlanNotApproved'), 'PlanNotApproved');
    assert.equal(camel('node-unplaced'), 'NodeUnplaced');
    assert.equal(camel('42_BAD'), 'Bpa42Bad');
  });

  it('moves a lastTransitionTime only when the status changes, and carries observedGeneration', () => {
    const first = conditionsOf(
      wantedConditions('Provisioning', 'NotApplied', 'm'),
      1,
      undefined,
      'T1',
    );
    const second = conditionsOf(wantedConditions('Ready', 'Applied', 'done'), 2, first, 'T2');
    assert.deepEqual(second, [
      {
        type: 'Ready',
        status: 'True',
        observedGeneration: 2,
        lastTransitionTime: 'T2',
        reason: 'ReconciliationSucceeded',
        message: 'done',
      },
    ]);
    const third = conditionsOf(wantedConditions('Ready', 'UpToDate', 'same'), 2, second, 'T3');
    assert.equal(third[0]?.lastTransitionTime, 'T2');
  });
});

describe('the history (Flux shape)', () => {
  it('counts reconciles of one plan and revision, newest first, at most five entries', () => {
    let h = history(undefined, {
      digest: 'sha256:a',
      revision: 'r1',
      status: 'ReconciliationSucceeded',
      now: 'T1',
    });
    h = history(h, {
      digest: 'sha256:a',
      revision: 'r1',
      status: 'ReconciliationSucceeded',
      now: 'T2',
    });
    assert.deepEqual(h, [
      {
        digest: 'sha256:a',
        firstReconciled: 'T1',
        lastReconciled: 'T2',
        lastReconciledStatus: 'ReconciliationSucceeded',
        totalReconciliations: 2,
        metadata: { revision: 'r1' },
      },
    ]);
    for (let i = 2; i <= 7; i++)
      h = history(h, {
        digest: `sha256:${i}`,
        revision: `r${i}`,
        status: 'ReconciliationFailed',
        now: `T${i + 1}`,
      });
    assert.equal(h.length, 5);
    assert.equal(h[0]?.metadata.revision, 'r7');
  });
});

describe('the status patch', () => {
  it("sets bpa's fields, removes those it no longer writes and keeps other writers' conditions", () => {
    const patch = statusPatch(
      {
        metadata: { name: 'east', uid: 'u', resourceVersion: '42' },
        status: {
          conditions: [
            {
              type: 'Reconciling',
              status: 'True',
              observedGeneration: 1,
              lastTransitionTime: 'T',
              reason: 'Progressing',
              message: '',
            },
            {
              type: 'Monitored' as 'Ready',
              status: 'True',
              observedGeneration: 1,
              lastTransitionTime: 'T',
              reason: 'Probed',
              message: '',
            },
          ],
          planHash: 'old',
        },
      },
      {
        observedGeneration: 2,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            observedGeneration: 2,
            lastTransitionTime: 'T2',
            reason: 'ReconciliationSucceeded',
            message: '',
          },
        ],
      },
    );
    assert.deepEqual(patch.metadata, { resourceVersion: '42' }, 'a concurrent write is a 409');
    const status = patch.status as Record<string, unknown>;
    assert.equal(status.planHash, null, 'no longer written: removed');
    assert.equal(status.observedGeneration, 2);
    assert.deepEqual(
      (status.conditions as Array<{ type: string }>).map((c) => c.type),
      ['Ready', 'Monitored'],
      "the ended Reconciling goes, the other writer's condition stays",
    );
    assert.ok(
      !('monitoredAt' in status),
      'other fields are not in the patch: they stay as they are',
    );
  });
});

describe('Events of an apply', () => {
  it('started, finished, failed, drained, waiting and approval, with stable reasons and no installer output', () => {
    const events = clusterEvents({
      result: {
        planHash: 'h',
        ok: false,
        interrupted: false,
        clusters: [
          {
            cluster: 'east',
            result: 'failed',
            actions: [
              {
                kind: 'upgrade-packages',
                nodes: ['w1'],
                result: 'done',
                startedAt: 'S1',
                endedAt: 'E1',
                steps: [],
                rollout: [
                  { node: 'w1', state: 'done' },
                  { node: 'w2', state: 'pending' },
                ],
              },
              {
                kind: 'add-nodes',
                nodes: ['w3'],
                result: 'failed',
                startedAt: 'S2',
                endedAt: 'E2',
                steps: [],
                error: {
                  code: 'INSTALLER_FAILED',
                  message: 'fatal: token=abc',
                  step: 'installer',
                  exitCode: 2,
                },
              },
            ],
          },
          {
            cluster: 'west',
            result: 'waiting',
            waitingUntil: '2026-11-28T01:00:00Z',
            actions: [{ kind: 'upgrade-cluster', nodes: [], result: 'not-run', steps: [] }],
          },
        ],
      },
      approval: {
        reason: 'PlanNotApproved',
        code: 'PLAN_NOT_APPROVED',
        message: 'no Bpa-Approved-Plan trailer',
        planHash: 'h',
        pending: [{ cluster: 'north', action: 'provision-cluster', nodes: [], reason: 'new' }],
      },
    });
    assert.deepEqual(
      events.map((e) => [e.cluster, e.reason, e.type]),
      [
        ['east', 'ActionStarted', 'Normal'],
        ['east', 'NodeDrained', 'Normal'],
        ['east', 'ActionSucceeded', 'Normal'],
        ['east', 'ActionStarted', 'Normal'],
        ['east', 'ActionFailed', 'Warning'],
        ['west', 'WaitingForWindow', 'Normal'],
        ['north', 'ApprovalMissing', 'Warning'],
      ],
    );
    const failed = events.find((e) => e.reason === 'ActionFailed');
    assert.equal(failed?.note, 'add-nodes failed at step installer: INSTALLER_FAILED, exit 2');
    assert.equal(failed?.at, 'E2');
    assert.match(
      events.find((e) => e.reason === 'WaitingForWindow')?.note ?? '',
      /opens at 2026-11-28T01:00:00Z/,
    );
  });

  it('writes MicroTime with six digits', () => {
    assert.equal(microTime('2026-11-28T01:02:03.456Z'), '2026-11-28T01:02:03.456000Z');
  });
});

describe('a Site status after a run that looked at nothing new', () => {
  it('keeps the revision last attempted and the request last handled', async () => {
    const { siteObjectStatus } = await import('../../../src/report/kube/status.js');
    const report = {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'SiteStatus' as const,
      metadata: { name: 's' },
      status: {
        phase: 'Ready' as const,
        conditions: [],
        source: { revision: 'status-commit', appliedRevision: 'r1' },
        clusters: [],
      },
    };
    const s = siteObjectStatus(report, {
      generation: 1,
      now: 'T',
      previous: { lastAttemptedRevision: 'r1', lastHandledReconcileAt: 'x' },
    });
    assert.equal(s.lastAttemptedRevision, 'r1');
    assert.equal(s.lastHandledReconcileAt, 'x');
    assert.equal(s.lastAppliedRevision, 'r1');
  });
});

describe('the Site object is Stalled only for what needs a person at the site level', () => {
  const site = async (phase: Phase, reason: string): Promise<Array<[string, string, string]>> => {
    const { siteObjectStatus } = await import('../../../src/report/kube/status.js');
    const s = siteObjectStatus(
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'SiteStatus',
        metadata: { name: 's' },
        status: {
          phase,
          conditions: [
            { type: 'Ready', status: 'False', reason, message: 'm', lastTransitionTime: 'T' },
          ],
          source: {},
          clusters: [],
        },
      },
      { generation: 1, now: 'T', previous: undefined },
    );
    return s.conditions.map((c) => [c.type, c.status, c.reason]);
  };
  const table: Array<[Phase, string, Array<[string, string, string]>]> = [
    [
      'Rejected',
      'InvalidRevision',
      [
        ['Ready', 'False', 'ReconciliationFailed'],
        ['Stalled', 'True', 'InvalidRevision'],
      ],
    ],
    [
      'Blocked',
      'PlanNotApproved',
      [
        ['Ready', 'False', 'ReconciliationFailed'],
        ['Stalled', 'True', 'PlanNotApproved'],
      ],
    ],
    // Retried with back-off by serve: not stalled.
    ['Failed', 'INVENTORY_UNAVAILABLE', [['Ready', 'False', 'ReconciliationFailed']]],
    // The failed cluster says Stalled itself.
    ['Failed', 'ClustersFailed', [['Ready', 'False', 'ReconciliationFailed']]],
    ['Degraded', 'ClustersDegraded', [['Ready', 'False', 'ClustersDegraded']]],
  ];
  for (const [phase, reason, want] of table)
    it(`${phase} ${reason}`, async () => assert.deepEqual(await site(phase, reason), want));
});

describe("the objects made from a site's documents", () => {
  it('one per Site, Cluster, Provisioning and Software document, in the namespace, labelled and annotated', async () => {
    const { parseFile, DEFAULT_LIMITS } = await import('../../../src/load/index.js');
    const { validateSite } = await import('../../../src/validate/index.js');
    const { desiredObjects } = await import('../../../src/report/kube/objects.js');
    const text = `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata: {name: edge, namespace: elsewhere, annotations: {note: kept-out}}
spec: {}
---
apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: east-provisioning, labels: {cluster: east, owner: ops}}
spec:
  masters:
    - m1: {mac-address: "52:54:00:aa:00:01"}
`;
    const documents = parseFile('site.yaml', text, DEFAULT_LIMITS).documents;
    const result = validateSite({ documents, problems: [], incomplete: false });
    assert.ok(result.model, JSON.stringify(result.problems));
    const objects = desiredObjects(result.model, documents, 'bpa-system', 'abc123');
    assert.deepEqual(
      objects.map((o) => [o.object.kind, o.object.metadata.name, o.cluster]),
      [
        ['Site', 'edge', undefined],
        // ICN allows a bare Provisioning: its cluster is named by the label.
        ['Provisioning', 'east-provisioning', 'east'],
      ],
    );
    const prov = objects[1]?.object;
    assert.deepEqual(prov?.metadata, {
      name: 'east-provisioning',
      namespace: 'bpa-system',
      labels: {
        cluster: 'east',
        owner: 'ops',
        'app.kubernetes.io/managed-by': 'bpa',
        'bpa.akraino.org/cluster': 'east',
      },
      annotations: { 'bpa.akraino.org/revision': 'abc123', 'bpa.akraino.org/source': 'site.yaml' },
    });
    assert.deepEqual(
      objects[0]?.object.metadata.namespace,
      'bpa-system',
      "the document's namespace is the site's affair",
    );
    assert.deepEqual(objects[0]?.object.metadata.annotations['note'], undefined);
  });
});
