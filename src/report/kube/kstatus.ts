/**
 * The kstatus computation (sigs.k8s.io/cli-utils, pkg/kstatus/status) for an object of bpa's
 * kinds: what `kubectl wait`, Flux's healthChecks, Helm 4 and Fleet conclude from its status.
 * bpa computes it for itself to prove that what it writes reads as intended: a suspended
 * cluster or one waiting for its window is never Failed.
 */
export type KStatus = 'InProgress' | 'Current' | 'Failed' | 'Terminating';

export interface KStatusResult {
  status: KStatus;
  message: string;
}

interface Readable {
  metadata?: { generation?: number; deletionTimestamp?: string };
  status?: {
    observedGeneration?: number;
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
  };
}

/**
 * kstatus's generic rules, in its order: deletion, then a generation not yet observed, then
 * the Reconciling and Stalled conditions; anything else is Current (a custom kind has no
 * further rules, so Ready False alone is Current: done, and not ready).
 */
export function kstatus(obj: Readable): KStatusResult {
  if (obj.metadata?.deletionTimestamp)
    return { status: 'Terminating', message: 'Resource scheduled for deletion' };
  const observed = obj.status?.observedGeneration;
  const generation = obj.metadata?.generation;
  if (observed !== undefined && generation !== undefined && observed !== generation)
    return {
      status: 'InProgress',
      message: `Resource generation ${generation} not yet observed (observed ${observed})`,
    };
  for (const c of obj.status?.conditions ?? []) {
    if (c.type === 'Reconciling' && c.status === 'True')
      return { status: 'InProgress', message: c.message ?? '' };
    if (c.type === 'Stalled' && c.status === 'True')
      return { status: 'Failed', message: c.message ?? '' };
  }
  return { status: 'Current', message: 'Resource is current' };
}
