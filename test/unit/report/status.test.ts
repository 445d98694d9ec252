import assert from 'node:assert/strict';
import { parse } from 'yaml';
import {
  buildReports,
  keptReports,
  type ClusterStatusDoc,
  type SiteStatusDoc,
} from '../../../src/report/status.js';
import { emptyState } from '../../../src/state/applied.js';

describe('report/status: what a status report may carry', () => {
  const now = '2026-03-01T12:00:00.000Z';

  it('a failure before the plan: the site Failed with its code, the clusters as last reported, no state path', () => {
    const previous = new Map<string, unknown>([
      [
        'status/east.yaml',
        {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'ClusterStatus',
          metadata: { name: 'east' },
          status: { phase: 'Degraded', conditions: [], source: {}, nodes: [], plugins: [] },
        },
      ],
    ]);
    const files = buildReports({
      revision: 'b'.repeat(40),
      failure: {
        code: 'JOURNAL_CORRUPT',
        message: 'cannot read /var/lib/bpa-7/clusters/east/journal.json: bad JSON',
      },
      applied: emptyState(),
      previous,
      stateDir: '/var/lib/bpa-7',
      now,
    });
    assert.deepEqual([...files.keys()], ['status/site.yaml'], 'the cluster report is kept as is');
    const text = files.get('status/site.yaml') ?? '';
    assert.ok(!text.includes('/var/lib/bpa-7'), text);
    const site = parse(text) as SiteStatusDoc;
    assert.equal(site.status.phase, 'Failed');
    assert.deepEqual(site.status.clusters, [{ name: 'east', phase: 'Degraded' }]);
    const ready = site.status.conditions.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'JOURNAL_CORRUPT');
    assert.match(ready?.message ?? '', /cannot read <stateDir>\/clusters\/east\/journal\.json/);
    assert.equal(site.status.conditions.find((c) => c.type === 'Stalled')?.status, 'True');
    assert.deepEqual(site.status.errors, [
      {
        code: 'JOURNAL_CORRUPT',
        message: 'cannot read <stateDir>/clusters/east/journal.json: bad JSON',
      },
    ]);
  });

  describe('operations an older bpa wrote with installer output in them', () => {
    const leaked =
      'installer exited 2 (log: /var/lib/bpa/clusters/east/logs/p.log): fatal: [m1] "-p","hunter2"';
    const previous = (): Map<string, unknown> =>
      new Map<string, unknown>([
        [
          'status/east.yaml',
          {
            apiVersion: 'bpa.akraino.org/v1alpha1',
            kind: 'ClusterStatus',
            metadata: { name: 'east' },
            status: {
              phase: 'Degraded',
              conditions: [],
              source: {},
              nodes: [],
              plugins: [],
              lastOperation: [
                {
                  action: 'provision',
                  nodes: ['m1'],
                  startedAt: '2026-02-01T00:00:00.000Z',
                  endedAt: '2026-02-01T00:10:00.000Z',
                  result: 'failed',
                  step: 'installer',
                  code: 'INSTALLER_FAILED',
                  exitCode: 2,
                  log: 'east/p.log',
                  message: leaked,
                  output: 'TASK [x] fatal: hunter2',
                },
              ],
            },
          },
        ],
      ]);
    const wanted = [
      {
        action: 'provision',
        nodes: ['m1'],
        startedAt: '2026-02-01T00:00:00.000Z',
        endedAt: '2026-02-01T00:10:00.000Z',
        result: 'failed',
        step: 'installer',
        code: 'INSTALLER_FAILED',
        exitCode: 2,
        log: 'east/p.log',
      },
    ];
    const applied = (): ReturnType<typeof emptyState> => {
      const state = emptyState();
      state.clusters.set('east', {
        cluster: 'east',
        appliedAt: now,
        nodes: [],
        plugins: [],
        packages: { master: [], worker: [] },
      });
      return state;
    };

    it('a cluster no action ran on carries its operations without their message', () => {
      const files = buildReports({
        revision: 'c'.repeat(40),
        applied: applied(),
        previous: previous(),
        stateDir: '/var/lib/bpa',
        now,
      });
      const text = files.get('status/east.yaml') ?? '';
      assert.ok(!text.includes('hunter2') && !text.includes('fatal'), text);
      const doc = parse(text) as ClusterStatusDoc;
      assert.deepEqual(doc.status.lastOperation, wanted);
    });

    for (const why of ['rejected', 'failed'] as const) {
      it(`a ${why} reconcile writes the kept report again without them, and serves none`, () => {
        const prev = previous();
        const files = buildReports({
          revision: 'd'.repeat(40),
          ...(why === 'rejected'
            ? {
                rejected: [
                  { code: 'YAML_PARSE', severity: 'error' as const, message: 'bad', file: 'x' },
                ],
              }
            : { failure: { code: 'JOURNAL_CORRUPT', message: 'bad JSON' } }),
          applied: applied(),
          previous: prev,
          stateDir: '/var/lib/bpa',
          now,
        });
        const text = files.get('status/east.yaml') ?? '';
        assert.ok(!text.includes('hunter2') && !text.includes('fatal'), text);
        const doc = parse(text) as ClusterStatusDoc;
        assert.deepEqual(doc.status.lastOperation, wanted);
        assert.equal(doc.status.phase, 'Degraded');
        // What the status API and the page serve for the clusters the reconcile left as they were.
        const kept = keptReports(prev, new Map());
        const served = kept.get('status/east.yaml') ?? '';
        assert.ok(!served.includes('hunter2') && !served.includes('fatal'), served);
        assert.deepEqual((parse(served) as ClusterStatusDoc).status.lastOperation, wanted);
      });
    }

    it('a kept report with nothing to drop is not written again (no commit)', () => {
      const prev = previous();
      const doc = prev.get('status/east.yaml') as ClusterStatusDoc;
      doc.status.lastOperation = wanted;
      const files = buildReports({
        revision: 'e'.repeat(40),
        failure: { code: 'JOURNAL_CORRUPT', message: 'bad JSON' },
        applied: applied(),
        previous: prev,
        now,
      });
      assert.deepEqual([...files.keys()], ['status/site.yaml']);
    });
  });
});
