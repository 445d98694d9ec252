import type { ReconcileSummary, Trigger } from '../reconcile/summary.js';

/**
 * One full pipeline run. It must watch `signal`: when it aborts (shutdown, lost leadership)
 * the run finishes or journals its current step and returns promptly.
 */
export type ReconcileFn = (trigger: Trigger, signal: AbortSignal) => Promise<ReconcileSummary>;

/** A finished reconcile as the scheduler saw it; feeds metrics and the status API. */
export interface RunRecord {
  trigger: Trigger;
  summary: ReconcileSummary;
  /** Epoch milliseconds, from the scheduler's clock. */
  startedAt: number;
  finishedAt: number;
}
