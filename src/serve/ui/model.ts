import type { SiteView } from '../../reconcile/view.js';
import type { ClusterStatusDoc, SiteStatusDoc } from '../../report/status.js';
import type { HistoryEntry } from '../../source/history.js';
import { redact } from '../../util/redact.js';
import type { Scheduler } from '../scheduler.js';
import type { RunRecord } from '../types.js';
import type { LiveBus } from './live.js';

/** One finished reconcile, as the history shows it. */
export interface RunRow {
  trigger: string;
  result: string;
  revision?: string;
  startedAt: string;
  finishedAt: string;
  error?: { code: string; message: string };
  /** The actions that ran, per cluster: "cluster-a: provision-cluster, install-packages". */
  did: string[];
}

/** Everything a page is rendered from, taken at one instant. */
export interface UiSnapshot {
  site?: SiteStatusDoc;
  clusters: ClusterStatusDoc[];
  view?: SiteView;
  controller: {
    running: boolean;
    runningSince?: string;
    queued: boolean;
    paused: boolean;
    lastResult?: string;
    lastFinishedAt?: string;
    nextRunAt?: string;
    consecutiveFailures: number;
    error?: { code: string; message: string };
  };
  runs: RunRow[];
  /** What the installer of the reconcile in flight has printed about: clusters, cluster/node. */
  active: { clusters: string[]; nodes: string[] };
}

export interface UiModelOptions {
  scheduler: Scheduler;
  bus: LiveBus;
  /** The site repository's recent commits (none for a watched directory). */
  history?: (limit: number) => Promise<HistoryEntry[]>;
  /** How often the scheduler's state is looked at for changes to announce (500 ms). */
  pollMs?: number;
  /** Finished reconciles kept for the history (100). */
  keepRuns?: number;
}

/**
 * The status page's view of the controller: the last reports and plan, the reconciles that
 * ran, and a `state` event on the live bus whenever a reconcile starts or finishes. It only
 * reads the scheduler; nothing here can change what bpa does.
 */
export class UiModel {
  private site: SiteStatusDoc | undefined;
  private clusters: ClusterStatusDoc[] = [];
  private view: SiteView | undefined;
  private readonly runs: RunRow[] = [];
  private seen: RunRecord | undefined;
  private lastKey = '';
  private timer: NodeJS.Timeout | undefined;
  private historyCache: { at: number; entries: HistoryEntry[] } | undefined;
  private readonly activeClusters = new Set<string>();
  private readonly activeNodes = new Set<string>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly opts: UiModelOptions) {}

  start(): void {
    this.unsubscribe = this.opts.bus.subscribe((event) => {
      if (event.type !== 'line' || !event.line.cluster) return;
      this.activeClusters.add(event.line.cluster);
      if (event.line.node) this.activeNodes.add(`${event.line.cluster}/${event.line.node}`);
    });
    this.poll();
    this.timer = setInterval(() => this.poll(), this.opts.pollMs ?? 500);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.unsubscribe?.();
  }

  /** Takes in what changed since the last look; announces it when anything did. */
  poll(): void {
    const state = this.opts.scheduler.state();
    const run = state.lastRun;
    if (run && run !== this.seen) {
      this.seen = run;
      this.take(run);
    }
    if (!state.running) {
      this.activeClusters.clear();
      this.activeNodes.clear();
    }
    const key = JSON.stringify([state.running, state.queued, state.paused, state.completedRuns]);
    if (key !== this.lastKey) {
      this.lastKey = key;
      this.opts.bus.changed();
    }
  }

  snapshot(): UiSnapshot {
    const state = this.opts.scheduler.state();
    const last = state.lastRun;
    const error = last?.summary.error;
    return {
      site: this.site,
      clusters: this.clusters,
      view: this.view,
      controller: {
        running: state.running,
        ...(state.runningSince !== undefined ? { runningSince: iso(state.runningSince) } : {}),
        queued: state.queued,
        paused: state.paused,
        ...(last ? { lastResult: last.summary.result, lastFinishedAt: iso(last.finishedAt) } : {}),
        ...(state.nextRunAt !== undefined ? { nextRunAt: iso(state.nextRunAt) } : {}),
        consecutiveFailures: state.consecutiveFailures,
        ...(error ? { error: { code: error.code, message: redact(error.message) } } : {}),
      },
      runs: [...this.runs],
      active: { clusters: [...this.activeClusters], nodes: [...this.activeNodes] },
    };
  }

  /** The repository's recent commits, read at most every few seconds. */
  async history(limit = 100): Promise<HistoryEntry[]> {
    const read = this.opts.history;
    if (!read) return [];
    const now = Date.now();
    if (this.historyCache && now - this.historyCache.at < 5_000) return this.historyCache.entries;
    const entries = await read(limit).catch(() => this.historyCache?.entries ?? []);
    this.historyCache = { at: now, entries };
    return entries;
  }

  private take(run: RunRecord): void {
    const s = run.summary;
    const status = s.status as { site?: SiteStatusDoc; clusters?: ClusterStatusDoc[] } | undefined;
    // A run that did not get to report (skipped, locked out, source down) keeps the last reports.
    if (status?.site) this.site = status.site;
    if (status?.clusters) this.clusters = status.clusters;
    if (s.view) this.view = s.view;
    const did = this.clusters
      .filter((c) =>
        c.status.lastOperation?.some((o) => o.endedAt && o.endedAt >= iso(run.startedAt)),
      )
      .map(
        (c) =>
          `${c.metadata.name}: ${(c.status.lastOperation ?? []).map((o) => `${o.action} ${o.result}`).join(', ')}`,
      );
    this.runs.unshift({
      trigger: run.trigger,
      result: s.result,
      ...(s.revision ? { revision: s.revision } : {}),
      startedAt: iso(run.startedAt),
      finishedAt: iso(run.finishedAt),
      ...(s.error ? { error: { code: s.error.code, message: redact(s.error.message) } } : {}),
      did,
    });
    const keep = this.opts.keepRuns ?? 100;
    if (this.runs.length > keep) this.runs.length = keep;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
