import assert from 'node:assert/strict';
import { BpaMetrics } from '../../../src/serve/metrics.js';
import type { ReconcileSummary } from '../../../src/reconcile/summary.js';
import type { RunRecord } from '../../../src/serve/types.js';

const T0 = Date.UTC(2026, 0, 1);
const SHA1 = '1'.repeat(40);
const SHA2 = '2'.repeat(40);

function run(
  summary: ReconcileSummary,
  seconds = 2,
  trigger: RunRecord['trigger'] = 'interval',
): RunRecord {
  return { trigger, summary, startedAt: T0, finishedAt: T0 + seconds * 1000 };
}

/** The value of one sample line, e.g. `bpa_cluster_ready{cluster="a"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('serve/metrics', () => {
  it('records reconciles, cluster readiness and the applied revision', async () => {
    const m = new BpaMetrics({ defaultMetrics: false });
    m.recordRun(
      run(
        {
          result: 'applied',
          revision: SHA1,
          appliedRevision: SHA1,
          clusters: [
            { name: 'edge-1', phase: 'Ready', ready: true },
            { name: 'edge-2', phase: 'Provisioning', ready: false },
          ],
        },
        3,
        'startup',
      ),
    );
    let text = await m.render();
    assert.equal(sample(text, 'bpa_reconcile_total{result="applied",trigger="startup"}'), 1);
    assert.equal(sample(text, 'bpa_reconcile_total{result="failed",trigger="webhook"}'), 0);
    assert.equal(sample(text, 'bpa_reconcile_duration_seconds_count{result="applied"}'), 1);
    assert.equal(sample(text, 'bpa_reconcile_duration_seconds_sum{result="applied"}'), 3);
    assert.equal(
      sample(text, 'bpa_reconcile_duration_seconds_bucket{le="2.5",result="applied"}'),
      0,
    );
    assert.equal(sample(text, 'bpa_reconcile_duration_seconds_bucket{le="5",result="applied"}'), 1);
    assert.equal(sample(text, 'bpa_cluster_ready{cluster="edge-1"}'), 1);
    assert.equal(sample(text, 'bpa_cluster_ready{cluster="edge-2"}'), 0);
    assert.equal(sample(text, `bpa_source_revision_info{revision="${SHA1}"}`), 1);
    assert.equal(sample(text, 'bpa_last_reconcile_timestamp_seconds'), T0 / 1000 + 3);

    // A failure before the clusters were seen leaves their gauges and the revision alone.
    m.recordRun(
      run({
        result: 'failed',
        clusters: [],
        error: { code: 'GIT', message: 'down', retry: 'transient' },
      }),
    );
    text = await m.render();
    assert.equal(sample(text, 'bpa_cluster_ready{cluster="edge-2"}'), 0);
    assert.equal(sample(text, 'bpa_reconcile_total{result="failed",trigger="interval"}'), 1);

    // A new revision replaces the old label set; a cluster gone from the site loses its series.
    m.recordRun(
      run({
        result: 'applied',
        revision: SHA2,
        appliedRevision: SHA2,
        clusters: [{ name: 'edge-2', phase: 'Ready', ready: true }],
      }),
    );
    text = await m.render();
    assert.equal(sample(text, `bpa_source_revision_info{revision="${SHA1}"}`), undefined);
    assert.equal(sample(text, `bpa_source_revision_info{revision="${SHA2}"}`), 1);
    assert.equal(sample(text, 'bpa_cluster_ready{cluster="edge-1"}'), undefined);
    assert.equal(sample(text, 'bpa_cluster_ready{cluster="edge-2"}'), 1);
  });

  it("exports whether each cluster's window is open and its rollout's nodes by state", async () => {
    const m = new BpaMetrics({ defaultMetrics: false });
    m.recordRun(
      run({
        result: 'failed',
        clusters: [
          {
            name: 'edge-1',
            phase: 'Degraded',
            ready: false,
            windowOpen: true,
            rollout: { done: 2, failed: 1, pending: 1 },
          },
          { name: 'edge-2', phase: 'Waiting', ready: false, windowOpen: false },
          { name: 'edge-3', phase: 'Ready', ready: true },
        ],
      }),
    );
    let text = await m.render();
    assert.equal(sample(text, 'bpa_window_open{cluster="edge-1"}'), 1);
    assert.equal(sample(text, 'bpa_window_open{cluster="edge-2"}'), 0);
    assert.equal(
      sample(text, 'bpa_window_open{cluster="edge-3"}'),
      undefined,
      'no windows: no series',
    );
    assert.equal(sample(text, 'bpa_rollout_nodes{cluster="edge-1",state="done"}'), 2);
    assert.equal(sample(text, 'bpa_rollout_nodes{cluster="edge-1",state="failed"}'), 1);
    assert.equal(sample(text, 'bpa_rollout_nodes{cluster="edge-1",state="cordoned"}'), 0);
    assert.equal(sample(text, 'bpa_rollout_nodes{cluster="edge-2",state="done"}'), undefined);
    // A cluster that left the site loses its series.
    m.recordRun(
      run({
        result: 'applied',
        clusters: [{ name: 'edge-2', phase: 'Ready', ready: true, windowOpen: true }],
      }),
    );
    text = await m.render();
    assert.equal(sample(text, 'bpa_window_open{cluster="edge-1"}'), undefined);
    assert.equal(sample(text, 'bpa_rollout_nodes{cluster="edge-1",state="done"}'), undefined);
    assert.equal(sample(text, 'bpa_window_open{cluster="edge-2"}'), 1);
  });

  it('counts webhook requests by result', async () => {
    const m = new BpaMetrics({ defaultMetrics: false });
    m.recordWebhook('accepted');
    m.recordWebhook('unauthorized');
    m.recordWebhook('unauthorized');
    const text = await m.render();
    assert.equal(sample(text, 'bpa_webhook_requests_total{result="accepted"}'), 1);
    assert.equal(sample(text, 'bpa_webhook_requests_total{result="unauthorized"}'), 2);
    assert.equal(sample(text, 'bpa_webhook_requests_total{result="bad_request"}'), 0);
  });

  it('keeps its own registry and prefixes the process metrics', async () => {
    const a = new BpaMetrics();
    const b = new BpaMetrics({ defaultMetrics: false });
    a.recordWebhook('accepted');
    const text = await a.render();
    assert.match(text, /^bpa_process_cpu_user_seconds_total /m);
    assert.match(text, /^bpa_nodejs_eventloop_lag_seconds /m);
    assert.match(a.contentType, /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(await b.render(), 'bpa_webhook_requests_total{result="accepted"}'), 0);
  });
});
