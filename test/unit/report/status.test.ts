import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { buildReports, type SiteStatusDoc } from '../../../src/report/status.js';
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
});
