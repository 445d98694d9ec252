import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RECONCILE_RESULTS, TRIGGERS } from '../reconcile/summary.js';
import type { RunRecord } from './types.js';

export type WebhookResult = 'accepted' | 'unauthorized' | 'bad_request';

const WEBHOOK_RESULTS: readonly WebhookResult[] = ['accepted', 'unauthorized', 'bad_request'];

const ROLLOUT_STATES = [
  'pending',
  'cordoned',
  'drained',
  'changed',
  'healthy',
  'done',
  'failed',
] as const;

/** From a no-op poll (tens of ms) to provisioning a cluster (tens of minutes). */
const DURATION_BUCKETS = [
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600,
];

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop, GC) as bpa_process_… and bpa_nodejs_… (true). */
  defaultMetrics?: boolean;
}

/**
 * The controller's Prometheus metrics, on a registry of their own so that a library user's
 * global registry is neither polluted nor exported. Named like Flux's gotk_… metrics.
 */
export class BpaMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'result'>;
  private readonly reconciles: Counter<'result' | 'trigger'>;
  private readonly clusterReady: Gauge<'cluster'>;
  private readonly revisionInfo: Gauge<'revision'>;
  private readonly lastReconcile: Gauge;
  private readonly webhooks: Counter<'result'>;
  private readonly windowOpen: Gauge<'cluster'>;
  private readonly rolloutNodes: Gauge<'cluster' | 'state'>;
  private clusters = new Set<string>();
  private revision: string | undefined;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.duration = new Histogram({
      name: 'bpa_reconcile_duration_seconds',
      help: 'Duration of a reconcile of the site, by result.',
      labelNames: ['result'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.reconciles = new Counter({
      name: 'bpa_reconcile_total',
      help: 'Reconciles of the site, by result and by what triggered them.',
      labelNames: ['result', 'trigger'],
      registers,
    });
    this.clusterReady = new Gauge({
      name: 'bpa_cluster_ready',
      help: 'Whether a cluster of the site is Ready (1) or not (0), as of the last reconcile.',
      labelNames: ['cluster'],
      registers,
    });
    this.revisionInfo = new Gauge({
      name: 'bpa_source_revision_info',
      help: 'The source revision last applied successfully, as a label (value always 1).',
      labelNames: ['revision'],
      registers,
    });
    this.lastReconcile = new Gauge({
      name: 'bpa_last_reconcile_timestamp_seconds',
      help: 'When the last reconcile finished, whatever its result (Unix time).',
      registers,
    });
    this.webhooks = new Counter({
      name: 'bpa_webhook_requests_total',
      help: 'Webhook requests on POST /hooks/git, by result.',
      labelNames: ['result'],
      registers,
    });
    this.windowOpen = new Gauge({
      name: 'bpa_window_open',
      help: "Whether a cluster's maintenance windows are open (1) or closed (0), as of the last reconcile; clusters without windows have no series.",
      labelNames: ['cluster'],
      registers,
    });
    this.rolloutNodes = new Gauge({
      name: 'bpa_rollout_nodes',
      help: "Nodes of a cluster's last rolling change, by state (pending, cordoned, drained, changed, healthy, done, failed).",
      labelNames: ['cluster', 'state'],
      registers,
    });
    // Series that exist from the start make rate() and absent-alerts behave before the first event.
    for (const result of RECONCILE_RESULTS) {
      for (const trigger of TRIGGERS) this.reconciles.inc({ result, trigger }, 0);
    }
    for (const result of WEBHOOK_RESULTS) this.webhooks.inc({ result }, 0);
    if (options.defaultMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry, prefix: 'bpa_' });
    }
  }

  /** Records a finished reconcile; pass it as the scheduler's onRun. */
  recordRun(run: RunRecord): void {
    const { summary } = run;
    const seconds = Math.max(0, run.finishedAt - run.startedAt) / 1000;
    this.duration.observe({ result: summary.result }, seconds);
    this.reconciles.inc({ result: summary.result, trigger: run.trigger });
    this.lastReconcile.set(run.finishedAt / 1000);
    // A run that failed before it saw the clusters (git host down) says nothing about them.
    if (
      summary.clusters.length > 0 ||
      summary.result === 'applied' ||
      summary.result === 'unchanged'
    ) {
      const seen = new Set<string>();
      for (const cluster of summary.clusters) {
        seen.add(cluster.name);
        this.clusterReady.set({ cluster: cluster.name }, cluster.ready ? 1 : 0);
        if (cluster.windowOpen === undefined) this.windowOpen.remove({ cluster: cluster.name });
        else this.windowOpen.set({ cluster: cluster.name }, cluster.windowOpen ? 1 : 0);
        for (const state of ROLLOUT_STATES)
          if (cluster.rollout)
            this.rolloutNodes.set({ cluster: cluster.name, state }, cluster.rollout[state] ?? 0);
          else this.rolloutNodes.remove({ cluster: cluster.name, state });
      }
      for (const gone of this.clusters) {
        if (seen.has(gone)) continue;
        this.clusterReady.remove({ cluster: gone });
        this.windowOpen.remove({ cluster: gone });
        for (const state of ROLLOUT_STATES) this.rolloutNodes.remove({ cluster: gone, state });
      }
      this.clusters = seen;
    }
    const applied = summary.appliedRevision;
    if (applied !== undefined && applied !== this.revision) {
      if (this.revision !== undefined) this.revisionInfo.remove({ revision: this.revision });
      this.revisionInfo.set({ revision: applied }, 1);
      this.revision = applied;
    }
  }

  recordWebhook(result: WebhookResult): void {
    this.webhooks.inc({ result });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
