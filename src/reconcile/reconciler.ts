import { parse as yamlParse } from 'yaml';
import type { Config } from '../config/options.js';
import type { SiteSource } from '../source/site-source.js';
import { runApply, type ApplyPorts, type ApplyRun } from '../apply/run.js';
import { buildReports, type ClusterStatusDoc, type SiteStatusDoc } from '../report/status.js';
import type { ClusterSummary, ReconcileSummary, Trigger } from './summary.js';
import { StateLock } from '../state/lock.js';
import { StateStore } from '../state/store.js';
import { BpaError, messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { redact } from '../util/redact.js';
import { error, hasErrors, type Problem } from '../util/problem.js';
import { rebuildState } from './rebuild.js';
import { readSourceState, writeSourceState } from './source-state.js';

export interface ReconcilerOptions {
  source: SiteSource;
  stateDir: string;
  config: (site: Record<string, unknown> | undefined) => Config;
  env: NodeJS.ProcessEnv;
  log: Logger;
  now?: () => number;
  /** A full reconcile (nodes observed, drift repaired) at least this often, even with no new input. */
  resyncIntervalMs: number;
  onLine?: (line: string) => void;
  /** The outside world to apply through instead of what the configuration names (tests). */
  ports?: ApplyPorts;
}

/**
 * One reconcile: source → load → validate → observe → plan → apply → report. The report is
 * written in a `finally`, whatever happened before (Flux's finalizeStatus), and nothing is
 * done when the input did not change (a status-only commit, a commit outside the site).
 */
export class Reconciler {
  private last: ReconcileSummary | undefined;
  private lastStatus: Map<string, string> | undefined;

  constructor(private readonly opts: ReconcilerOptions) {}

  async reconcile(trigger: Trigger, signal?: AbortSignal): Promise<ReconcileSummary> {
    const now = this.opts.now ?? Date.now;
    const log = this.opts.log.child({ trigger });
    const state = await readSourceState(this.opts.stateDir);
    const { siteDir, revision, digest } = await this.opts.source.sync();
    state.fetched = { revision, at: new Date(now()).toISOString() };
    const full =
      !state.lastFullAt || now() - Date.parse(state.lastFullAt) >= this.opts.resyncIntervalMs;
    // The same input again: nothing to do, unless a periodic full reconcile is due (never for
    // a rejected input, which stays rejected until it changes) or the last attempt failed (a
    // failed revision is tried again, with backoff under serve, until it applies).
    const same = state.attempted?.digest === digest && state.attempted.result !== 'failed';
    // …except that a signed commit of an input rejected for its signature is checked again
    // (a person re-signed it); bpa's own status commits on top of it are never signed.
    const resigned =
      same &&
      state.attempted?.result === 'rejected' &&
      state.verifiedDigest !== digest &&
      (await this.opts.source.signed?.(revision)) === true;
    if (
      same &&
      !resigned &&
      trigger !== 'startup' &&
      (!full || state.attempted?.result === 'rejected')
    ) {
      await writeSourceState(this.opts.stateDir, state);
      log.debug({ revision }, 'no new input');
      return (this.last = {
        ...(this.last ?? { clusters: [] }),
        result: 'skipped',
        revision,
        appliedRevision: state.applied?.revision,
      });
    }
    log.info({ revision, source: this.opts.source.describe() }, 'reconcile started');
    let outcome: ApplyRun | undefined;
    let failure: unknown;
    let refused: Problem | undefined;
    let interrupted = false;
    try {
      // bpa's own status commits are not signed: an input already verified is not checked again.
      if (state.verifiedDigest !== digest) {
        await this.opts.source.verify?.(revision);
        if (this.opts.source.verify) state.verifiedDigest = digest;
      }
    } catch (err: unknown) {
      if (!(err instanceof BpaError) || err.retry !== 'stalled') throw err;
      refused = error(err.code, err.message);
    }
    // Held from before the state is rebuilt to after the report: while another bpa applies
    // with this state directory, this reconcile changes nothing at all, not even a report.
    const lock = new StateLock(this.opts.stateDir);
    try {
      await lock.acquire();
    } catch (err: unknown) {
      log.warn({ err: messageOf(err) }, 'reconcile not started: the state directory is locked');
      return (this.last = {
        result: 'failed',
        revision,
        appliedRevision: state.applied?.revision,
        clusters: this.last?.clusters ?? [],
        error:
          err instanceof BpaError
            ? {
                ...err.toJSON(),
                ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
              }
            : { code: 'STATE_LOCK_FAILED', message: redact(messageOf(err)), retry: 'transient' },
      });
    }
    try {
      // A lost state directory (a new volume) is rebuilt from the reports in the repository,
      // so running clusters are not provisioned again.
      if (!refused) {
        const reports = await this.opts.source.previousReports(siteDir);
        await rebuildState(new StateStore(this.opts.stateDir), reports, siteDir, log);
      }
      // A refused commit is reported like an invalid revision, and nothing of it is applied.
      if (!refused)
        outcome = await runApply(siteDir, this.opts.config, {
          env: this.opts.env,
          now: now(),
          log,
          // Whatever the installer (a process or a Job) prints goes to logs only redacted.
          onLine: this.opts.onLine && ((line) => this.opts.onLine?.(redact(line))),
          signal,
          lock,
          ports: this.opts.ports,
        });
    } catch (err: unknown) {
      failure = err;
    } finally {
      // Stopped half-way (SIGTERM, leadership lost): not a failure, and nothing to report
      // yet; the journal keeps the step, and the next start resumes it and reports.
      const applied = outcome && 'result' in outcome ? outcome.result : undefined;
      interrupted =
        signal?.aborted === true && (failure !== undefined || applied?.interrupted === true);
      if (!interrupted)
        await this.report(siteDir, revision, digest, state, outcome, failure, now, refused).catch(
          (err: unknown) => {
            log.error({ err: messageOf(err) }, 'status report failed');
            failure ??= err;
          },
        );
      await lock.release();
    }
    if (interrupted) {
      log.warn({ revision }, 'reconcile interrupted: the next start resumes it');
      return (this.last = {
        result: 'interrupted',
        revision,
        appliedRevision: state.applied?.revision,
        clusters: this.last?.clusters ?? [],
        error: {
          code: 'APPLY_INTERRUPTED',
          message: 'bpa stopped during the apply; the next start resumes it',
          retry: 'transient',
        },
      });
    }
    const summary = refused
      ? {
          result: 'rejected' as const,
          revision,
          appliedRevision: state.applied?.revision,
          clusters: this.last?.clusters ?? [],
          error: { code: refused.code, message: refused.message, retry: 'stalled' as const },
        }
      : this.summarize(outcome, failure, revision, state.applied?.revision);
    log.info({ revision, result: summary.result }, 'reconcile finished');
    return (this.last = summary);
  }

  private async report(
    siteDir: string,
    revision: string,
    digest: string,
    state: Awaited<ReturnType<typeof readSourceState>>,
    outcome: ApplyRun | undefined,
    failure: unknown,
    now: () => number,
    refused?: Problem,
  ): Promise<void> {
    const at = new Date(now()).toISOString();
    const run = outcome;
    const rejected = refused
      ? [refused]
      : run && run.run.validated.problems.some((p) => p.severity === 'error')
        ? run.run.validated.problems
        : undefined;
    const result = rejected
      ? 'rejected'
      : failure
        ? 'failed'
        : run?.result?.ok === false
          ? 'failed'
          : 'applied';
    state.attempted = { revision, digest, at, result };
    if (run?.result?.ok && !hasErrors(run.run.problems)) {
      state.applied = { revision, digest, at };
    }
    if (run?.result) state.lastFullAt = at;
    const applied = await new StateStore(this.opts.stateDir).readApplied();
    const reports = buildReports({
      revision,
      appliedRevision: state.applied?.revision,
      model: run?.run.validated.model,
      rejected,
      plan: run?.run.plan,
      result: run?.result,
      applied,
      facts: run?.facts ?? run?.run.facts,
      previous: await this.opts.source.previousReports(siteDir),
      now: at,
    });
    const planHash = run?.run.plan?.hash;
    const message = `bpa: ${commitSummary(result, run, failure)} @ ${revision.replace(/^sha256:/, '').slice(0, 7)}\n\nBpa-Source: ${revision}\nBpa-Plan: ${planHash ?? 'none'}\n`;
    const commit = await this.opts.source.publish(siteDir, reports, message);
    if (commit) this.opts.log.info({ commit }, 'status committed');
    await writeSourceState(this.opts.stateDir, state);
    this.lastStatus = reports;
  }

  /** The reports of the last reconcile, for the status API. */
  status(): Map<string, string> | undefined {
    return this.lastStatus;
  }

  private summarize(
    outcome: ApplyRun | undefined,
    failure: unknown,
    revision: string,
    appliedRevision: string | undefined,
  ): ReconcileSummary {
    const docs = [...(this.lastStatus?.values() ?? [])].map((t) => parseYamlSafe(t));
    const site = docs.find(
      (d): d is SiteStatusDoc => (d as SiteStatusDoc | undefined)?.kind === 'SiteStatus',
    );
    const clusters: ClusterSummary[] = docs
      .filter(
        (d): d is ClusterStatusDoc => (d as ClusterStatusDoc | undefined)?.kind === 'ClusterStatus',
      )
      .map((d) => ({
        name: d.metadata.name,
        phase: d.status.phase,
        ready: d.status.phase === 'Ready',
      }));
    const status = {
      site,
      clusters: docs.filter((d) => (d as ClusterStatusDoc | undefined)?.kind === 'ClusterStatus'),
    };
    const base = { revision, appliedRevision, clusters, status };
    if (failure) {
      const err = failure instanceof BpaError ? failure : undefined;
      return {
        result: 'failed',
        ...base,
        error: {
          code: err?.code ?? 'RECONCILE_FAILED',
          message: redact(messageOf(failure)),
          retry: err?.retry ?? 'transient',
          ...(err?.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
        },
      };
    }
    if (!outcome) {
      return {
        result: 'failed',
        ...base,
        error: { code: 'RECONCILE_FAILED', message: 'no site was read', retry: 'transient' },
      };
    }
    if (!outcome.result) {
      const n = outcome.run.problems.filter((p) => p.severity === 'error').length;
      return {
        result: 'rejected',
        ...base,
        error: {
          code: 'REVISION_REJECTED',
          message: `nothing applied: the site has ${n} error${n === 1 ? '' : 's'}`,
          retry: 'stalled',
        },
      };
    }
    const ok = outcome.result?.ok !== false && !hasErrors(outcome.run.problems);
    const changed = outcome.result?.clusters.some((c) => c.result !== 'unchanged') ?? false;
    return {
      result: !ok ? 'failed' : changed ? 'applied' : 'unchanged',
      ...base,
      appliedRevision: ok ? revision : appliedRevision,
      ...(ok
        ? {}
        : {
            error: {
              code: 'APPLY_FAILED',
              message: firstError(outcome),
              retry: 'transient' as const,
            },
          }),
    };
  }
}

function firstError(outcome: ApplyRun): string {
  const action = outcome.result?.clusters.flatMap((c) => c.actions).find((a) => a.error);
  if (action?.error) return redact(`${action.kind}: ${action.error.message}`);
  const problem = outcome.run.problems.find((p) => p.severity === 'error');
  return redact(problem?.message ?? 'apply failed');
}

function commitSummary(result: string, run: ApplyRun | undefined, failure: unknown): string {
  if (failure) return `reconcile failed (${failure instanceof BpaError ? failure.code : 'error'})`;
  if (result === 'rejected') {
    const n = run?.run.validated.problems.filter((p) => p.severity === 'error').length ?? 0;
    return `rejected revision (${n} error${n === 1 ? '' : 's'})`;
  }
  const done = run?.result?.clusters.filter((c) => c.result !== 'unchanged') ?? [];
  if (!done.length) return 'status';
  return done
    .map(
      (c) =>
        `${c.cluster} ${c.result === 'applied' ? c.actions.map((a) => a.kind).join('+') : 'failed'}`,
    )
    .join(', ');
}

function parseYamlSafe(text: string): unknown {
  try {
    return yamlParse(text);
  } catch {
    return undefined;
  }
}
