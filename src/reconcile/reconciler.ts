import { resolve } from 'node:path';
import { parseReport } from '../source/site-source.js';
import { INVENTORY_REPORT } from '../source/site-path.js';
import type { ApplyPorts } from '../apply/ports.js';
import type { ConfigFor } from '../config/options.js';
import {
  describeFailure,
  withoutStateDir,
  type ClusterStatusDoc,
  type SiteStatusDoc,
} from '../report/status.js';
import type { SiteSource } from '../source/site-source.js';
import { BpaError, messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { pluralize } from '../util/pluralize.js';
import { redact } from '../util/redact.js';
import { hasErrors } from '../util/problem.js';
import { createRun, warmCache, type RunContext, type WarmCache } from './context.js';
import { windowStatus } from '../plan/windows.js';
import { runSteps } from './steps.js';
import type { ClusterSummary, ReconcileSummary, Trigger } from './summary.js';
import { siteView } from './view.js';
import type { KubeStatusInput, KubeStatusWriter } from '../report/kube/writer.js';

export interface ReconcilerOptions {
  source: SiteSource;
  /** The settings, resolved with the Site document's spec once it is read. */
  configFor: ConfigFor;
  env: NodeJS.ProcessEnv;
  log: Logger;
  now?: () => number;
  /** A full reconcile (nodes observed, drift repaired) at least this often, even with no new input. */
  resyncIntervalMs: number;
  onLine?: (line: string) => void;
  /** The outside world to apply through instead of what the configuration names (tests). */
  ports?: ApplyPorts;
  /** --kube-status: the site's objects, status and Events in the bootstrap cluster. */
  kubeStatus?: KubeStatusWriter;
}

/**
 * Reconciles a site source again and again (`bpa serve`, `bpa reconcile --once --repo`): each
 * call runs every step (reconcile/steps.ts), the report included, and sums the run up for the
 * controller, its metrics and the status API. It remembers the last summary and reports, so a
 * run that changes nothing (skipped, locked out) still shows the site as it is.
 */
export class Reconciler {
  private last: ReconcileSummary | undefined;
  /**
   * The status reports of the last reconcile, for the summary and the objects' status: the
   * site's and each cluster's. Not the inventory (every host, MiBs of text), which neither reads.
   */
  private lastStatus: Map<string, string> | undefined;
  /** The clusters of the site as last read and checked (a rejected read keeps the ones before). */
  private siteClusters: string[] | undefined;
  /** The site as last read, parsed and checked: a commit re-reads only what it changed. */
  private readonly cache: WarmCache = warmCache();
  /** The site as last read without errors: the objects --kube-status keeps in the cluster. */
  private lastSite: KubeStatusInput['site'];
  /** The progress write of the running reconcile, which its final write waits for. */
  private progressWrite: Promise<void> | undefined;

  constructor(private readonly opts: ReconcilerOptions) {}

  async reconcile(trigger: Trigger, signal?: AbortSignal): Promise<ReconcileSummary> {
    // A reconcile asked for on the Site object is a full one, whatever woke it.
    const request = await this.pendingRequest();
    if (request !== undefined) trigger = 'requested';
    const log = this.opts.log.child({ trigger });
    const ctx = createRun({
      site: {
        kind: 'source',
        source: this.opts.source,
        trigger,
        resyncIntervalMs: this.opts.resyncIntervalMs,
      },
      configFor: this.opts.configFor,
      env: this.opts.env,
      log,
      now: this.opts.now,
      signal,
      // Whatever the installer (a process or a Job) prints goes to logs only redacted.
      onLine: this.opts.onLine && ((line) => this.opts.onLine?.(redact(line))),
      ports: this.opts.ports,
      cache: this.cache,
      // Known as soon as the site is read, not after an apply that may take an hour: the
      // suspend API checks a cluster's name against these while the installer runs.
      onSiteRead: (run) => {
        if (run.model) this.siteClusters = run.model.clusters.map((c) => c.name);
      },
      onPlan: (run) => this.startProgress(run),
    });
    try {
      await runSteps(ctx, 'report');
    } catch (err: unknown) {
      // A revision that could not be fetched or checked: nothing was done, nothing reported.
      if (ctx.step === 'source') throw err;
    }
    if (ctx.reports) {
      this.lastStatus = new Map(ctx.reports);
      this.lastStatus.delete(INVENTORY_REPORT);
    }
    const summary = this.summarize(ctx);
    if (summary.error)
      summary.error = { ...summary.error, message: hideStateDir(summary.error.message, ctx) };
    // A run that stopped before planning still shows the last plan and inventory.
    const view = siteView(ctx) ?? this.last?.view;
    if (view) summary.view = view;
    if (ctx.lock && !ctx.interrupted)
      log.info({ revision: ctx.revision, result: summary.result }, 'reconcile finished');
    await this.writeKubeStatus(ctx, request);
    return (this.last = summary);
  }

  /**
   * The clusters with work about to start read Reconciling in the bootstrap cluster while the
   * apply runs (it may take an hour). Never waited for by the apply: the write finishes
   * beside it, and the report's write waits for it.
   */
  private startProgress(run: RunContext): void {
    const writer = this.opts.kubeStatus;
    if (!writer || !run.model || !run.loaded || !run.revision || !run.plan) return;
    const working = new Map<string, string[]>();
    for (const c of run.plan.clusters)
      if (c.actions.length && c.gate?.state !== 'suspended' && c.gate?.state !== 'deferred')
        working.set(
          c.cluster,
          c.actions.map((a) => a.kind),
        );
    if (!working.size) return;
    const site = { model: run.model, documents: run.loaded.documents, revision: run.revision };
    this.progressWrite = writer.progress(site, working).catch((err: unknown) => {
      this.opts.log.warn({ err: messageOf(err) }, 'progress in the bootstrap cluster not written');
    });
  }

  /** The requestedAt annotation of the Site object when it differs from the one last handled. */
  private async pendingRequest(): Promise<string | undefined> {
    const name = this.lastSite?.model.site?.name;
    if (!this.opts.kubeStatus || !name) return undefined;
    try {
      const r = await this.opts.kubeStatus.requestState(name);
      return r.requested !== undefined && r.requested !== r.handled ? r.requested : undefined;
    } catch (err: unknown) {
      this.opts.log.warn({ err: messageOf(err) }, 'reconcile request not read');
      return undefined;
    }
  }

  /**
   * The site's objects, their status and the run's Events in the bootstrap cluster: a view,
   * so a failure there is logged and never fails the reconcile (the next one writes again).
   */
  private async writeKubeStatus(ctx: RunContext, request: string | undefined): Promise<void> {
    if (ctx.loaded && ctx.model && ctx.revision && !hasErrors(ctx.validation))
      this.lastSite = { model: ctx.model, documents: ctx.loaded.documents, revision: ctx.revision };
    await this.progressWrite;
    this.progressWrite = undefined;
    if (!this.opts.kubeStatus || !this.lastStatus || ctx.interrupted) return;
    try {
      await this.opts.kubeStatus.sync({
        site: this.lastSite,
        // A skipped run looked at nothing new (often bpa's own status commit).
        ...(ctx.skipped ? {} : { attemptedRevision: ctx.revision }),
        reports: this.lastStatus,
        ...(ctx.skipped ? {} : { result: ctx.result, plan: ctx.plan, approval: ctx.approval }),
        ...(request !== undefined ? { handledRequest: request } : {}),
      });
    } catch (err: unknown) {
      this.opts.log.warn({ err: messageOf(err) }, 'status in the bootstrap cluster not written');
    }
  }

  /**
   * The names of the site's clusters: those of the site as last read and those last reported
   * (a cluster just removed still has a report and may still be held). Undefined until a
   * reconcile has read the site.
   */
  clusterNames(): string[] | undefined {
    if (this.siteClusters === undefined && this.lastStatus === undefined) return undefined;
    const reported = this.last?.clusters.map((c) => c.name) ?? [];
    return [...new Set([...(this.siteClusters ?? []), ...reported])];
  }

  private summarize(ctx: RunContext): ReconcileSummary {
    const revision = ctx.revision;
    const appliedRevision = ctx.sourceState?.applied?.revision;
    const clusters = this.last?.clusters ?? [];
    if (ctx.skipped)
      return { ...(this.last ?? { clusters }), result: 'skipped', revision, appliedRevision };
    if (!ctx.lock) {
      // Another bpa applies with this state directory: this reconcile changed nothing at all.
      const err = ctx.failure;
      ctx.log.warn({ err: messageOf(err) }, 'reconcile not started: the state directory is locked');
      return {
        result: 'failed',
        revision,
        appliedRevision,
        clusters,
        error:
          err instanceof BpaError
            ? {
                ...err.toJSON(),
                ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
              }
            : { code: 'STATE_LOCK_FAILED', message: redact(messageOf(err)), retry: 'transient' },
      };
    }
    if (ctx.interrupted) {
      ctx.log.warn({ revision }, 'reconcile interrupted: the next start resumes it');
      return {
        result: 'interrupted',
        revision,
        appliedRevision,
        clusters,
        error: {
          code: 'APPLY_INTERRUPTED',
          message: 'bpa stopped during the apply; the next start resumes it',
          retry: 'transient',
        },
      };
    }
    if (ctx.refused) {
      return {
        result: 'rejected',
        revision,
        appliedRevision,
        clusters,
        error: { code: ctx.refused.code, message: ctx.refused.message, retry: 'stalled' },
      };
    }
    return this.outcome(ctx, revision, appliedRevision);
  }

  /** What a run that got to read the site did: failed, rejected, applied or unchanged. */
  private outcome(
    ctx: RunContext,
    revision: string | undefined,
    appliedRevision: string | undefined,
  ): ReconcileSummary {
    const docs = [...(this.lastStatus?.values() ?? [])].map((t) => parseYamlSafe(t));
    const site = docs.find(
      (d): d is SiteStatusDoc => (d as SiteStatusDoc | undefined)?.kind === 'SiteStatus',
    );
    const clusterDocs = docs.filter(
      (d): d is ClusterStatusDoc => (d as ClusterStatusDoc | undefined)?.kind === 'ClusterStatus',
    );
    const clusters: ClusterSummary[] = clusterDocs.map((d) => {
      const day2 = ctx.model?.clusters.find((c) => c.name === d.metadata.name)?.day2;
      const counts: Record<string, number> = {};
      for (const n of d.status.rollout?.nodes ?? []) counts[n.state] = (counts[n.state] ?? 0) + 1;
      return {
        name: d.metadata.name,
        phase: d.status.phase,
        ready: d.status.phase === 'Ready',
        ...(day2?.windows.length ? { windowOpen: windowStatus(day2.windows, ctx.now()).open } : {}),
        ...(d.status.rollout ? { rollout: counts } : {}),
      };
    });
    const base = { revision, appliedRevision, clusters, status: { site, clusters: clusterDocs } };
    if (ctx.failure) {
      const err = ctx.failure instanceof BpaError ? ctx.failure : undefined;
      return {
        result: 'failed',
        ...base,
        error: {
          code: err?.code ?? 'RECONCILE_FAILED',
          message: redact(messageOf(ctx.failure)),
          retry: err?.retry ?? 'transient',
          ...(err?.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
        },
      };
    }
    if (ctx.approval) {
      return {
        result: 'blocked',
        ...base,
        error: { code: ctx.approval.code, message: ctx.approval.message, retry: 'stalled' },
      };
    }
    if (!ctx.result) {
      const n = ctx.problems.filter((p) => p.severity === 'error').length;
      return {
        result: 'rejected',
        ...base,
        error: {
          code: 'REVISION_REJECTED',
          message: `nothing applied: the site has ${pluralize(n, 'error')}`,
          retry: 'stalled',
        },
      };
    }
    const ok = ctx.result.ok && !hasErrors(ctx.problems);
    const changed = ctx.result.clusters.some(
      (c) =>
        c.result === 'applied' ||
        c.result === 'failed' ||
        c.result === 'interrupted' ||
        c.actions.some((a) => a.result === 'done'),
    );
    const wakeAt = wakeTime(ctx);
    return {
      result: !ok ? 'failed' : changed ? 'applied' : 'unchanged',
      ...base,
      ...(wakeAt !== undefined ? { wakeAt } : {}),
      appliedRevision: ok ? revision : appliedRevision,
      ...(ok
        ? {}
        : {
            error: { code: 'APPLY_FAILED', message: firstError(ctx), retry: 'transient' as const },
          }),
    };
  }
}

/** The earliest opening of a maintenance window that a cluster's changes wait for. */
export function wakeTime(ctx: Pick<RunContext, 'result'>): number | undefined {
  const times = (ctx.result?.clusters ?? [])
    .filter((c) => c.result === 'waiting' && c.waitingUntil)
    .map((c) => Date.parse(c.waitingUntil as string));
  return times.length ? Math.min(...times) : undefined;
}

/**
 * What the status API (open to anyone who reaches it) says of a failed apply: an action's
 * step, code, exit and log, as the report in git does; its output is for the page only.
 */
function firstError(ctx: RunContext): string {
  const cluster = ctx.result?.clusters.find((c) => c.actions.some((a) => a.error));
  const action = cluster?.actions.find((a) => a.error);
  if (cluster && action?.error)
    return `cluster ${cluster.cluster}: ${describeFailure(action.kind, action.error)}`;
  const problem = ctx.problems.find((p) => p.severity === 'error');
  return redact(problem?.message ?? 'apply failed');
}

/**
 * The status API is open to anyone who reaches it: an error there names a file of the state
 * directory as the reports do, `<stateDir>/…`, never by its path.
 */
function hideStateDir(message: string, ctx: RunContext): string {
  let text = message;
  for (const dir of new Set([ctx.operator.stateDir, ctx.config?.stateDir]))
    if (dir) text = withoutStateDir(text, resolve(dir));
  return text;
}

function parseYamlSafe(text: string): unknown {
  try {
    // js-yaml: the reports include status/inventory.yaml, every host (source/site-source.ts).
    return parseReport(text);
  } catch {
    return undefined;
  }
}
