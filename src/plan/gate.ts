import type { Suspensions } from '../state/suspensions.js';
import type { Day2Settings } from '../validate/model.js';
import type { ClusterPlan } from './types.js';
import { isoMinute, windowStatus } from './windows.js';

export interface GateInput {
  /** The clock, epoch ms: the only time-dependent input of a plan (never hashed); absent: windows are not looked at. */
  now?: number;
  /** `bpa apply --ignore-windows`: one apply outside the windows, reported as such. */
  ignoreWindows?: boolean;
  /** Clusters suspended through serve's API (no commit), `*` for all. */
  suspended?: Readonly<Suspensions>;
}

/**
 * Whether a cluster's actions may start now: not while it is suspended (in the site or
 * through the API), and outside every maintenance window only for a cluster that does not run
 * yet (unless the windows gate `all`). Sets `gate` (why not, and until when) and `windows`
 * (what the apply checks again before each action, so nothing starts once a window closes).
 */
export function gateCluster(
  plan: ClusterPlan,
  day2: Day2Settings | undefined,
  input: GateInput,
): void {
  const byApi = input.suspended?.[plan.cluster] ?? input.suspended?.['*'];
  if (day2?.suspend || byApi) {
    const by = day2?.suspend
      ? `suspend: true in the ${day2.suspendFrom ?? 'Site'} document`
      : 'the suspend API of bpa serve';
    plan.gate = {
      state: 'suspended',
      reason: 'Suspended',
      by: day2?.suspend ? 'site' : 'api',
      ...(!day2?.suspend && byApi ? { since: byApi.since } : {}),
      message: `suspended by ${by}${!day2?.suspend && byApi?.reason ? ` (${byApi.reason})` : ''}: planned, nothing applied${plan.actions.length ? ` (${plan.actions.map((a) => a.kind).join(', ')} held)` : ''}`,
    };
    return;
  }
  if (input.now === undefined || !day2?.windows.length || !plan.actions.length) return;
  const provisioning = plan.actions.some((a) => a.kind === 'provision-cluster');
  if (provisioning && day2.gate !== 'all') return;
  const status = windowStatus(day2.windows, input.now);
  if (status.open) {
    plan.windows = day2.windows;
    return;
  }
  const opens = status.opensAt === undefined ? undefined : isoMinute(status.opensAt);
  const where = day2.windowsFrom === 'Cluster' ? 'the Cluster document' : 'the Site document';
  if (input.ignoreWindows) {
    plan.gate = {
      state: 'ignored',
      reason: 'OutsideMaintenanceWindow',
      ...(opens ? { opensAt: opens } : {}),
      message: `outside the maintenance windows of ${where}, applied anyway with --ignore-windows`,
    };
    return;
  }
  plan.gate = {
    state: 'deferred',
    reason: 'OutsideMaintenanceWindow',
    ...(opens ? { opensAt: opens } : {}),
    message: `outside the maintenance windows of ${where}: ${plan.actions.map((a) => a.kind).join(', ')} deferred ${opens ? `until the next window opens at ${opens}` : '(no window ever opens)'}`,
  };
}
