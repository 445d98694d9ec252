import { BpaError, TransientError, messageOf } from '../util/errors.js';
import { redact, sanitize } from '../util/redact.js';
import { type Logger, silentLogger } from '../util/log.js';
import { isSuccess, type ReconcileSummary, type Trigger } from '../reconcile/summary.js';
import type { ReconcileFn, RunRecord } from './types.js';

/** The clock and timers the scheduler uses; tests pass a fake one. */
export interface SchedulerTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: SchedulerTimers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface SchedulerOptions {
  reconcile: ReconcileFn;
  /** Pause between reconciles when all is well, and the cap on every backoff. */
  intervalMs: number;
  /** Fraction of the interval to vary it by, both ways (0.1 → interval ± 10 %). */
  jitter?: number;
  /** First delay after a transient failure; it doubles per consecutive failure (5 s). */
  backoffBaseMs?: number;
  /** How long stop() waits for the reconcile in flight after aborting it (60 s). */
  graceMs?: number;
  /** When leader election is on: runs happen only while this returns true. */
  isLeader?: () => boolean;
  /** How often to look at isLeader() when nobody calls leadershipChanged() (1 s). */
  leaderPollMs?: number;
  /** Called after every finished run (metrics). Must not throw; errors are logged. */
  onRun?: (run: RunRecord) => void;
  /** In [0, 1); injectable so tests can pin the jitter. */
  random?: () => number;
  timers?: SchedulerTimers;
  logger?: Logger;
}

export type TriggerOutcome = 'started' | 'queued' | 'coalesced' | 'paused' | 'stopped';

export interface SchedulerState {
  started: boolean;
  stopping: boolean;
  running: boolean;
  runningTrigger?: Trigger;
  /** Epoch ms at which the run in flight started. */
  runningSince?: number;
  queued: boolean;
  /** Not the leader: nothing runs until this replica leads. */
  paused: boolean;
  /** Epoch ms of the next timed run, when one is scheduled. */
  nextRunAt?: number;
  lastRun?: RunRecord;
  lastSuccessAt?: number;
  consecutiveFailures: number;
  completedRuns: number;
}

/**
 * Runs the reconcile: one in flight, at most one queued behind it (any number of triggers
 * while a run is in flight collapse into that one), on an interval with jitter, with backoff
 * after failures chosen by the failure's retry kind, only while leader, and with a graceful
 * stop that aborts the run in flight and waits for it.
 */
export class Scheduler {
  private readonly reconcile: ReconcileFn;
  private readonly intervalMs: number;
  private readonly jitter: number;
  private readonly backoffBaseMs: number;
  private readonly graceMs: number;
  private readonly leaderPollMs: number;
  private readonly random: () => number;
  private readonly timers: SchedulerTimers;
  private readonly log: Logger;

  private started = false;
  private stopping: Promise<{ timedOut: boolean }> | undefined;
  private inFlight: Promise<void> | undefined;
  private controller: AbortController | undefined;
  private runningTrigger: Trigger | undefined;
  private runningSince: number | undefined;
  private queuedTrigger: Trigger | undefined;
  private timer: unknown;
  private nextRunAt: number | undefined;
  private leaderTimer: unknown;
  private leading = true;
  private lastRun: RunRecord | undefined;
  private lastSuccessAt: number | undefined;
  private consecutiveFailures = 0;
  private completedRuns = 0;

  constructor(private readonly opts: SchedulerOptions) {
    const { intervalMs } = opts;
    const jitter = opts.jitter ?? 0.1;
    const base = opts.backoffBaseMs ?? 5_000;
    if (!(intervalMs > 0)) throw new RangeError(`intervalMs must be > 0, got ${intervalMs}`);
    if (!(jitter >= 0 && jitter < 1))
      throw new RangeError(`jitter must be in [0, 1), got ${jitter}`);
    if (!(base > 0)) throw new RangeError(`backoffBaseMs must be > 0, got ${base}`);
    this.reconcile = opts.reconcile;
    this.intervalMs = intervalMs;
    this.jitter = jitter;
    this.backoffBaseMs = base;
    this.graceMs = opts.graceMs ?? 60_000;
    this.leaderPollMs = opts.leaderPollMs ?? 1_000;
    this.random = opts.random ?? Math.random;
    this.timers = opts.timers ?? realTimers;
    this.log = opts.logger ?? silentLogger();
  }

  /** Starts with a 'startup' run (once leader, when election is on). */
  start(): void {
    if (this.started) throw new Error('Scheduler.start() was already called');
    this.started = true;
    if (this.opts.isLeader) {
      this.leading = this.opts.isLeader();
      this.pollLeader();
    }
    this.request('startup');
  }

  /** Asks for a reconcile now (webhook, file watch). Never runs two at once. */
  trigger(reason: Trigger): TriggerOutcome {
    // start() runs a reconcile anyway, which covers whatever this trigger announced.
    if (!this.started) return this.stopping ? 'stopped' : 'coalesced';
    return this.request(reason);
  }

  /**
   * Call from the leader elector's callbacks so that a new leader reconciles at once and a
   * former leader aborts its run at once, rather than at the next poll.
   */
  leadershipChanged(): void {
    if (!this.opts.isLeader || !this.started || this.stopping) return;
    const now = this.opts.isLeader();
    if (now === this.leading) return;
    this.leading = now;
    if (now) {
      this.log.info('leading: reconciling now');
      // A new term starts like a startup: the previous leader's backoff is not ours.
      this.clearTimer();
      this.request('startup');
    } else {
      this.log.warn('no longer leading: pausing reconciles');
      this.clearTimer();
      this.queuedTrigger = undefined;
      this.controller?.abort(
        new TransientError('LEADERSHIP_LOST', 'this replica is no longer the leader'),
      );
    }
  }

  /**
   * No run starts after this; the run in flight is aborted and awaited for up to graceMs.
   * Resolves with timedOut: true when the run did not finish within the grace period.
   */
  stop(): Promise<{ timedOut: boolean }> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  state(): SchedulerState {
    return {
      started: this.started,
      stopping: this.stopping !== undefined,
      running: this.inFlight !== undefined,
      runningTrigger: this.runningTrigger,
      runningSince: this.runningSince,
      queued: this.queuedTrigger !== undefined,
      paused: this.started && !this.leading,
      nextRunAt: this.nextRunAt,
      lastRun: this.lastRun,
      lastSuccessAt: this.lastSuccessAt,
      consecutiveFailures: this.consecutiveFailures,
      completedRuns: this.completedRuns,
    };
  }

  /**
   * Why the scheduler looks stuck, or undefined when it does not: a run in flight for longer
   * than `maxRunMs`, or a timed run overdue by more than `maxRunMs` (its timer was lost).
   */
  wedged(maxRunMs: number): string | undefined {
    const now = this.timers.now();
    if (this.runningSince !== undefined && now - this.runningSince > maxRunMs) {
      return `a reconcile has been running for ${Math.round((now - this.runningSince) / 1000)}s`;
    }
    if (
      this.inFlight === undefined &&
      this.nextRunAt !== undefined &&
      now - this.nextRunAt > maxRunMs
    ) {
      return `the next reconcile is overdue by ${Math.round((now - this.nextRunAt) / 1000)}s`;
    }
    return undefined;
  }

  private request(reason: Trigger): TriggerOutcome {
    if (this.stopping) return 'stopped';
    if (!this.leading) return 'paused';
    if (this.inFlight) {
      if (this.queuedTrigger !== undefined) return 'coalesced';
      this.queuedTrigger = reason;
      return 'queued';
    }
    this.clearTimer();
    this.launch(reason);
    return 'started';
  }

  private launch(trigger: Trigger): void {
    const controller = new AbortController();
    const startedAt = this.timers.now();
    this.controller = controller;
    this.runningTrigger = trigger;
    this.runningSince = startedAt;
    this.log.debug({ trigger }, 'reconcile started');
    this.inFlight = this.runOnce(trigger, controller.signal).then((summary) =>
      this.finish({ trigger, summary, startedAt, finishedAt: this.timers.now() }),
    );
  }

  private async runOnce(trigger: Trigger, signal: AbortSignal): Promise<ReconcileSummary> {
    try {
      return await this.reconcile(trigger, signal);
    } catch (err: unknown) {
      // The reconcile should report failures in its summary; a throw is a bug or an abort.
      const error =
        err instanceof BpaError
          ? err.toJSON()
          : { code: 'RECONCILE_CRASHED', message: messageOf(err), retry: 'transient' as const };
      return { result: 'failed', clusters: [], error };
    }
  }

  private finish(run: RunRecord): void {
    this.inFlight = undefined;
    this.controller = undefined;
    this.runningTrigger = undefined;
    this.runningSince = undefined;
    this.lastRun = run;
    this.completedRuns += 1;
    const { summary } = run;
    if (isSuccess(summary.result)) {
      this.consecutiveFailures = 0;
      this.lastSuccessAt = run.finishedAt;
    } else {
      this.consecutiveFailures += 1;
    }
    try {
      this.opts.onRun?.(run);
    } catch (err: unknown) {
      this.log.error({ err: sanitize(messageOf(err)) }, 'run observer failed');
    }

    const { delayMs, next } = this.nextDelay(summary);
    const fields = {
      trigger: run.trigger,
      result: summary.result,
      revision: summary.revision,
      durationMs: run.finishedAt - run.startedAt,
      consecutiveFailures: this.consecutiveFailures,
      nextInMs: this.queuedTrigger === undefined ? delayMs : 0,
    };
    if (summary.error) {
      const { code, retry, message } = summary.error;
      this.log.warn({ ...fields, code, retry }, `reconcile ${summary.result}: ${redact(message)}`);
    } else {
      this.log.info(fields, `reconcile ${summary.result}`);
    }

    if (this.stopping || !this.leading) return;
    const queued = this.queuedTrigger;
    if (queued !== undefined) {
      this.queuedTrigger = undefined;
      this.request(queued);
    } else {
      this.schedule(delayMs, next);
    }
  }

  /** How long to wait after a run, by its outcome. */
  private nextDelay(summary: ReconcileSummary): { delayMs: number; next: Trigger } {
    if (isSuccess(summary.result)) {
      const interval = this.jittered();
      // Changes wait for a maintenance window: reconcile when it opens, if that comes first.
      if (summary.wakeAt !== undefined) {
        const untilOpen = Math.max(0, summary.wakeAt - this.timers.now());
        if (untilOpen < interval) return { delayMs: untilOpen, next: 'window' };
      }
      return { delayMs: interval, next: 'interval' };
    }
    const retry = summary.error?.retry ?? (summary.result === 'rejected' ? 'stalled' : 'transient');
    if (retry === 'stalled') {
      // Retrying the same bad input cannot help: wait for the interval or a new trigger.
      return { delayMs: this.jittered(), next: 'interval' };
    }
    if (retry === 'waiting') {
      const after = summary.error?.retryAfterMs ?? this.backoffBaseMs;
      return { delayMs: Math.min(Math.max(0, after), this.intervalMs), next: 'retry' };
    }
    const exponent = Math.min(this.consecutiveFailures - 1, 40);
    const delayMs = Math.min(this.backoffBaseMs * 2 ** exponent, this.intervalMs);
    return { delayMs, next: 'retry' };
  }

  private jittered(): number {
    const spread = this.jitter * (2 * this.random() - 1);
    return Math.round(this.intervalMs * (1 + spread));
  }

  private schedule(delayMs: number, reason: Trigger): void {
    this.clearTimer();
    this.nextRunAt = this.timers.now() + delayMs;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.nextRunAt = undefined;
      this.request(reason);
    }, delayMs);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.nextRunAt = undefined;
  }

  private pollLeader(): void {
    this.leaderTimer = this.timers.setTimeout(() => {
      this.leaderTimer = undefined;
      if (this.stopping) return;
      this.leadershipChanged();
      this.pollLeader();
    }, this.leaderPollMs);
  }

  private async shutdown(): Promise<{ timedOut: boolean }> {
    this.clearTimer();
    if (this.leaderTimer !== undefined) this.timers.clearTimeout(this.leaderTimer);
    this.leaderTimer = undefined;
    this.queuedTrigger = undefined;
    const inFlight = this.inFlight;
    if (!inFlight) return { timedOut: false };
    this.log.info(
      { trigger: this.runningTrigger },
      'stopping: waiting for the reconcile in flight',
    );
    this.controller?.abort(new TransientError('SHUTDOWN', 'bpa is shutting down'));
    let grace: unknown;
    const expired = new Promise<true>((resolve) => {
      grace = this.timers.setTimeout(() => resolve(true), this.graceMs);
    });
    const timedOut = await Promise.race([inFlight.then(() => false), expired]);
    this.timers.clearTimeout(grace);
    if (timedOut) {
      this.log.error(
        { graceMs: this.graceMs },
        'the reconcile in flight did not stop within the grace period',
      );
    }
    return { timedOut };
  }
}
