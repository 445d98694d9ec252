import type { SchedulerTimers } from '../../../src/serve/scheduler.js';
import type { ReconcileSummary, Trigger } from '../../../src/reconcile/summary.js';
import type { ReconcileFn } from '../../../src/serve/types.js';

/** Lets every promise chain that is ready run to its end (a few macrotask turns). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A clock that moves only when the test says so; timers fire in order as it passes them. */
export class FakeTimers implements SchedulerTimers {
  private t: number;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.pending.set(this.seq, { at: this.t + Math.max(0, ms), fn });
    return this.seq;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Time left on each pending timer, soonest first. */
  delays(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.t).sort((a, b) => a - b);
  }

  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.pending) {
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      }
      if (!next) break;
      this.pending.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
      await settle();
    }
    this.t = end;
    await settle();
  }
}

interface Call {
  trigger: Trigger;
  signal: AbortSignal;
  finish: (summary: ReconcileSummary) => void;
  fail: (err: unknown) => void;
}

/** A reconcile that the test finishes by hand, recording every call. */
export class ManualReconcile {
  readonly calls: Call[] = [];
  private open: Call[] = [];

  readonly fn: ReconcileFn = (trigger, signal) =>
    new Promise<ReconcileSummary>((resolve, reject) => {
      const call: Call = { trigger, signal, finish: resolve, fail: reject };
      this.calls.push(call);
      this.open.push(call);
    });

  get inFlight(): number {
    return this.open.length;
  }

  /** Finishes the oldest open call and lets the scheduler react. */
  async finish(summary: ReconcileSummary = ok()): Promise<Call> {
    const call = this.open.shift();
    if (!call) throw new Error('no reconcile in flight');
    call.finish(summary);
    await settle();
    return call;
  }

  async fail(err: unknown): Promise<void> {
    const call = this.open.shift();
    if (!call) throw new Error('no reconcile in flight');
    call.fail(err);
    await settle();
  }

  triggers(): Trigger[] {
    return this.calls.map((c) => c.trigger);
  }
}

export function ok(revision = 'a'.repeat(40)): ReconcileSummary {
  return {
    result: 'applied',
    revision,
    appliedRevision: revision,
    clusters: [{ name: 'edge-1', phase: 'Ready', ready: true }],
    status: { kind: 'SiteStatus', phase: 'Ready' },
  };
}

export function failed(
  retry: 'stalled' | 'waiting' | 'transient',
  retryAfterMs?: number,
): ReconcileSummary {
  return {
    result: 'failed',
    clusters: [],
    error: { code: 'TEST', message: `a ${retry} failure`, retry, retryAfterMs },
  };
}
