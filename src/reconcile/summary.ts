// What one reconcile did, as the controller, its metrics and the status API see it.
import type { RetryKind } from '../util/errors.js';
import type { SiteView } from './view.js';
import type { Phase } from '../report/status.js';

/**
 * Why a reconcile ran: shown in logs, metrics and the status API. `window`: a maintenance
 * window opened; `api`: a suspend or resume through serve's API; `requested`: the
 * reconcile.bpa.akraino.org/requestedAt annotation on the Site object (a full reconcile);
 * `kubernetes`: an object of the site, a BareMetalHost or a lease file changed (operator mode).
 */
export type Trigger =
  | 'startup'
  | 'interval'
  | 'webhook'
  | 'watch'
  | 'retry'
  | 'window'
  | 'api'
  | 'requested'
  | 'kubernetes';

export const TRIGGERS: readonly Trigger[] = [
  'startup',
  'interval',
  'webhook',
  'watch',
  'retry',
  'window',
  'api',
  'requested',
  'kubernetes',
];

export interface ClusterSummary {
  name: string;
  phase: Phase;
  ready: boolean;
  /** Whether the cluster's maintenance windows are open now (absent: it has none). */
  windowOpen?: boolean;
  /** The last rolling change's nodes by state (pending, cordoned, …, done, failed). */
  rollout?: Record<string, number>;
}

export type ReconcileResult =
  'applied' | 'unchanged' | 'failed' | 'rejected' | 'skipped' | 'interrupted' | 'blocked';

export const RECONCILE_RESULTS: readonly ReconcileResult[] = [
  'applied',
  'unchanged',
  'failed',
  'rejected',
  'skipped',
  'interrupted',
  'blocked',
];

export interface ReconcileSummary {
  /**
   * skipped: nothing new (a status-only commit, the same input digest, already applied);
   * interrupted: bpa stopped during the apply, which the next start resumes (nothing reported);
   * blocked: the plan is not the approved one (--require-approved-plan): nothing applied.
   */
  result: ReconcileResult;
  /** Source revision (git sha) applied or attempted. */
  revision?: string;
  /** Last revision successfully applied. */
  appliedRevision?: string;
  clusters: ClusterSummary[];
  error?: { code: string; message: string; retry: RetryKind; retryAfterMs?: number };
  /** The site status document (JSON) served by GET /api/v1/status. */
  status?: unknown;
  /** The plan and inventory of the last run that got that far, for the status page. */
  view?: SiteView;
  /**
   * Epoch ms at which a maintenance window opens for a cluster whose changes wait for it:
   * the controller reconciles then, rather than at its next interval.
   */
  wakeAt?: number;
}

/** The results after which the site counts as reconciled (the last success time moves). */
export function isSuccess(result: ReconcileResult): boolean {
  return result === 'applied' || result === 'unchanged' || result === 'skipped';
}
