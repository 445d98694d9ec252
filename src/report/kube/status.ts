// The status subresource of bpa's objects, in the kstatus conventions, made from the reports
// bpa writes to git (report/status.ts): the same phase, read by kubectl and GitOps tools. Pure.
import { isRuntimeCode, runtimeCodeInfo } from '../../util/error-codes.js';
import type { ClusterStatusDoc, Phase, SiteStatusDoc } from '../status.js';

/** metav1.Condition. */
export interface KubeCondition {
  type: 'Ready' | 'Reconciling' | 'Stalled';
  status: 'True' | 'False' | 'Unknown';
  observedGeneration: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** One entry of Flux's `status.history`: a revision and plan, and how its reconciles went. */
export interface HistoryEntry {
  digest: string;
  firstReconciled: string;
  lastReconciled: string;
  lastReconciledStatus: string;
  totalReconciliations: number;
  metadata: { revision: string };
}

export interface ObjectStatus {
  observedGeneration: number;
  conditions: KubeCondition[];
  lastHandledReconcileAt?: string;
  lastAppliedRevision?: string;
  lastAttemptedRevision?: string;
  /** Cluster only. */
  planHash?: string;
  nodes?: string;
  nodeStatuses?: Array<{
    name: string;
    host: string;
    address: string;
    roles: string[];
    phase: string;
  }>;
  lastOperations?: ClusterStatusDoc['status']['lastOperation'];
  kubeconfigSecretRef?: { name: string };
  history?: HistoryEntry[];
}

export const HISTORY_LIMIT = 5;

export interface Wanted {
  ready: { status: 'True' | 'False' | 'Unknown'; reason: string; message: string };
  reconciling?: { reason: string; message: string };
  stalled?: { reason: string; message: string };
}

/**
 * The conditions of a phase. Flux's reasons where they fit; otherwise the report's reason, in
 * CamelCase. Reconciling and Stalled are there only while true (as Flux's controllers do).
 * Suspended is Ready False and neither: kstatus reads it Current, never Failed. Waiting for a
 * window or an earlier wave is Reconciling: the planned work is still to come.
 */
export function wantedConditions(phase: Phase, reason: string, message: string): Wanted {
  const why = camel(reason);
  switch (phase) {
    case 'Ready':
      return { ready: { status: 'True', reason: 'ReconciliationSucceeded', message } };
    case 'Provisioning':
      return {
        ready: { status: 'False', reason: 'Progressing', message },
        reconciling: { reason: 'Progressing', message },
      };
    case 'Waiting': {
      const waitReason = why === 'WaitingForWave' ? 'DependencyNotReady' : why;
      return {
        ready: { status: 'False', reason: waitReason, message },
        reconciling: { reason: why, message },
      };
    }
    case 'Suspended':
      return { ready: { status: 'False', reason: 'Suspended', message } };
    case 'Degraded':
      // A failed action needs a person (bpa retries it, with back-off, and reports it the
      // same); nodes that do not answer or a cluster left out of the site are not stalled.
      // The site's ClustersDegraded points to its clusters, which say which it is.
      return why === 'NodesUnreachable' || why === 'RemovedFromSite' || why === 'ClustersDegraded'
        ? { ready: { status: 'False', reason: why, message } }
        : {
            ready: { status: 'False', reason: 'ReconciliationFailed', message },
            stalled: { reason: why, message },
          };
    case 'Failed':
    case 'Blocked':
    case 'Rejected':
      return {
        ready: { status: 'False', reason: 'ReconciliationFailed', message },
        stalled: { reason: why, message },
      };
  }
}

/** A report's reason as a Kubernetes reason: INSTALLER_FAILED → InstallerFailed. */
export function camel(reason: string): string {
  if (!/[_-]/.test(reason) && /^[A-Z][A-Za-z0-9]*$/.test(reason)) return reason;
  const words = reason.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const text = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join('');
  return /^[A-Za-z]/.test(text) ? text : `Bpa${text}`;
}

/** The conditions as metav1.Conditions: a time moves only when the status changes. */
export function conditionsOf(
  wanted: Wanted,
  generation: number,
  previous: readonly KubeCondition[] | undefined,
  now: string,
): KubeCondition[] {
  const list: Array<Omit<KubeCondition, 'observedGeneration' | 'lastTransitionTime'>> = [
    { type: 'Ready', ...wanted.ready },
    ...(wanted.reconciling
      ? [{ type: 'Reconciling' as const, status: 'True' as const, ...wanted.reconciling }]
      : []),
    ...(wanted.stalled
      ? [{ type: 'Stalled' as const, status: 'True' as const, ...wanted.stalled }]
      : []),
  ];
  return list.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    return {
      type: c.type,
      status: c.status,
      observedGeneration: generation,
      lastTransitionTime:
        before?.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now,
      reason: c.reason,
      message: c.message.length > 32_000 ? `${c.message.slice(0, 32_000)}…` : c.message,
    };
  });
}

export interface StatusInput {
  generation: number;
  previous: Partial<ObjectStatus> | undefined;
  now: string;
  /** The revision the last reconcile looked at. */
  attemptedRevision?: string;
  /** The reconcile request (annotation value) the last reconcile handled. */
  handledRequest?: string;
}

/** The Site object's status, from status/site.yaml. */
export function siteObjectStatus(report: SiteStatusDoc, input: StatusInput): ObjectStatus {
  const s = report.status;
  const ready = s.conditions.find((c) => c.type === 'Ready');
  const reason = ready?.reason ?? s.phase;
  const wanted = wantedConditions(s.phase, reason, ready?.message ?? '');
  // The site needs a person for what it says itself (an invalid revision, a plan not
  // approved, an error bpa does not retry); a cluster's failure is Stalled on the Cluster,
  // and a failure bpa retries (the inventory unreachable) is not stalled at all.
  if (
    s.phase === 'Degraded' ||
    /^Clusters/.test(reason) ||
    (isRuntimeCode(reason) && runtimeCodeInfo(reason).retry !== 'stalled')
  )
    delete wanted.stalled;
  return {
    observedGeneration: input.generation,
    conditions: conditionsOf(wanted, input.generation, input.previous?.conditions, input.now),
    ...handled(input),
    ...(s.source.appliedRevision ? { lastAppliedRevision: s.source.appliedRevision } : {}),
    ...attempted(input),
  };
}

/**
 * A Cluster object's status, from status/<cluster>.yaml: the conditions, and what an
 * operator asks of a cluster (its nodes, revisions, plan, last operations without installer
 * output, where its kubeconfig is, a short history). Its Provisioning and Software objects
 * get the conditions only (`full` false).
 */
export function clusterObjectStatus(
  report: ClusterStatusDoc,
  input: StatusInput & {
    desiredNodes: number;
    kubeconfigSecret?: string;
    full: boolean;
    /** The site's last revision applied successfully (status/site.yaml). */
    appliedRevision?: string;
  },
): ObjectStatus {
  const s = report.status;
  const ready = s.conditions.find((c) => c.type === 'Ready');
  const conditions = conditionsOf(
    wantedConditions(s.phase, ready?.reason ?? s.phase, ready?.message ?? ''),
    input.generation,
    input.previous?.conditions,
    input.now,
  );
  const base: ObjectStatus = {
    observedGeneration: input.generation,
    conditions,
    ...handled(input),
  };
  if (!input.full) return base;
  const rollout = new Map((s.rollout?.nodes ?? []).map((n) => [n.name, n.state]));
  const nodeStatuses = s.nodes.map((n) => ({
    name: n.name,
    host: n.host,
    address: n.ip,
    roles: [...n.roles],
    phase:
      n.reachable === false
        ? 'Unreachable'
        : rollout.get(n.name) && rollout.get(n.name) !== 'done'
          ? camel(rollout.get(n.name) as string)
          : 'Ready',
  }));
  const readyNodes = nodeStatuses.filter((n) => n.phase === 'Ready').length;
  const planHash = s.source.planHash;
  // As Flux: the revision of the last success, kept through failures, waits and suspensions.
  const revision =
    s.phase === 'Ready' ? input.appliedRevision : input.previous?.lastAppliedRevision;
  return {
    ...base,
    ...(revision ? { lastAppliedRevision: revision } : {}),
    ...attempted(input),
    ...(planHash ? { planHash } : {}),
    nodes: `${readyNodes}/${Math.max(input.desiredNodes, nodeStatuses.length)}`,
    nodeStatuses,
    ...(s.lastOperation?.length ? { lastOperations: s.lastOperation } : {}),
    ...(input.kubeconfigSecret && s.source.planHash
      ? { kubeconfigSecretRef: { name: input.kubeconfigSecret } }
      : {}),
    history: history(input.previous?.history, {
      digest: planHash ? `sha256:${planHash}` : 'none',
      revision: attempted(input).lastAttemptedRevision ?? revision ?? 'none',
      status: conditions[0]?.reason ?? 'Unknown',
      now: input.now,
    }),
  };
}

function attempted(input: StatusInput): { lastAttemptedRevision?: string } {
  const revision = input.attemptedRevision ?? input.previous?.lastAttemptedRevision;
  return revision ? { lastAttemptedRevision: revision } : {};
}

function handled(input: StatusInput): { lastHandledReconcileAt?: string } {
  const at = input.handledRequest ?? input.previous?.lastHandledReconcileAt;
  return at ? { lastHandledReconcileAt: at } : {};
}

/** Flux's history: newest first, one entry per plan and revision, counted, at most five. */
export function history(
  previous: readonly HistoryEntry[] | undefined,
  run: { digest: string; revision: string; status: string; now: string },
): HistoryEntry[] {
  const list = [...(previous ?? [])];
  const i = list.findIndex((h) => h.digest === run.digest && h.metadata?.revision === run.revision);
  const before = i >= 0 ? list.splice(i, 1)[0] : undefined;
  const entry: HistoryEntry = {
    digest: run.digest,
    firstReconciled: before?.firstReconciled ?? run.now,
    lastReconciled: run.now,
    lastReconciledStatus: run.status,
    totalReconciliations: (before?.totalReconciliations ?? 0) + 1,
    metadata: { revision: run.revision },
  };
  return [entry, ...list].slice(0, HISTORY_LIMIT);
}
