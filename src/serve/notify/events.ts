// Which notifications a finished reconcile causes: one per transition, never one per poll.
import type { SiteView } from '../../reconcile/view.js';
import { describeFailure, type ClusterStatusDoc, type SiteStatusDoc } from '../../report/status.js';
import type { ReconcileSummary } from '../../reconcile/summary.js';
import { redact } from '../../util/redact.js';

export type NotifyType =
  'phase-changed' | 'reconcile-failed' | 'revision-rejected' | 'drift-found' | 'rollout-halted';

/** What a receiver gets (the JSON body of the generic format). */
export interface NotifyEvent {
  /** Unique per event (a receiver can drop a duplicate delivery by it). */
  id: string;
  type: NotifyType;
  /** ISO time bpa saw the transition. */
  at: string;
  site: string;
  /** Absent for events about the whole site. */
  cluster?: string;
  phase?: string;
  previousPhase?: string;
  reason: string;
  message: string;
  revision?: string;
  /** The status page of the cluster (or of the site). */
  link: string;
}

/** What the notifier remembers between reconciles, to tell a transition from a repeat. */
export interface NotifyMemory {
  sitePhase?: string;
  phases: Map<string, string>;
  /** The failure last announced (code and revision); cleared by a success. */
  failure?: string;
  rejected: Set<string>;
  /** Drift already announced, per cluster (its package changes). */
  drift: Map<string, string>;
  /** Halted rollouts already announced, per cluster (the failed operation). */
  halted: Map<string, string>;
}

export function emptyMemory(): NotifyMemory {
  return { phases: new Map(), rejected: new Set(), drift: new Map(), halted: new Map() };
}

/**
 * The events of one finished reconcile, given what was announced before; updates `memory`.
 * Pure but for `memory`: `now` and the id maker come in. A phase seen for the first time (bpa
 * just started) is announced only when it is not Ready, so a restart does not repeat the
 * good news but does tell about what is wrong.
 */
export function transitions(
  summary: ReconcileSummary,
  memory: NotifyMemory,
  ctx: { now: string; pageUrl: string; nextId: () => string },
): NotifyEvent[] {
  const status = summary.status as
    { site?: SiteStatusDoc; clusters?: ClusterStatusDoc[] } | undefined;
  const siteName = status?.site?.metadata.name ?? 'site';
  const base = (
    cluster?: string,
  ): Pick<NotifyEvent, 'id' | 'at' | 'site' | 'link'> & { cluster?: string } => ({
    id: ctx.nextId(),
    at: ctx.now,
    site: siteName,
    ...(cluster ? { cluster } : {}),
    link: cluster
      ? new URL(`clusters/${encodeURIComponent(cluster)}`, ctx.pageUrl).toString()
      : ctx.pageUrl,
  });
  const revision = summary.revision;
  const out: NotifyEvent[] = [];

  for (const doc of status?.clusters ?? []) {
    const name = doc.metadata.name;
    const phase = doc.status.phase;
    const before = memory.phases.get(name);
    memory.phases.set(name, phase);
    if (before !== phase && (before !== undefined || phase !== 'Ready')) {
      const ready = doc.status.conditions.find((c) => c.type === 'Ready');
      out.push({
        ...base(name),
        type: 'phase-changed',
        phase,
        ...(before ? { previousPhase: before } : {}),
        reason: ready?.reason ?? phase,
        message: redact(ready?.message ?? ''),
        ...(doc.status.source.revision ? { revision: doc.status.source.revision } : {}),
      });
    }
    const failedOp = (doc.status.lastOperation ?? []).find((o) => o.result === 'failed');
    if (failedOp && doc.status.phase === 'Degraded') {
      // A change to a running cluster stopped part way: the rest of its rollout waits.
      const key = JSON.stringify([failedOp.action, failedOp.nodes, failedOp.startedAt ?? '']);
      if (memory.halted.get(name) !== key) {
        memory.halted.set(name, key);
        out.push({
          ...base(name),
          type: 'rollout-halted',
          phase,
          reason: failedOp.action,
          message: redact(
            `${describeFailure(`${failedOp.action} ${failedOp.nodes.join(', ')}`, failedOp)}; the rest of the rollout waits`,
          ),
          ...(revision ? { revision } : {}),
        });
      }
    } else if (!failedOp) {
      memory.halted.delete(name);
    }
  }

  const site = status?.site;
  if (site) {
    const before = memory.sitePhase;
    memory.sitePhase = site.status.phase;
    if (before !== site.status.phase && (before !== undefined || site.status.phase !== 'Ready')) {
      const ready = site.status.conditions.find((c) => c.type === 'Ready');
      out.push({
        ...base(),
        type: 'phase-changed',
        phase: site.status.phase,
        ...(before ? { previousPhase: before } : {}),
        reason: ready?.reason ?? site.status.phase,
        message: redact(ready?.message ?? ''),
        ...(revision ? { revision } : {}),
      });
    }
  }

  out.push(...driftEvents(summary.view, memory, base, revision));

  const err = summary.error;
  // A plan that cannot be applied (a node without a host) is `rejected` too, but the site is
  // Blocked, which its phase change says; a revision is rejected when the site is Rejected
  // (invalid files) or was not read at all (an untrusted signature).
  const rejected = summary.result === 'rejected' && (!site || site.status.phase === 'Rejected');
  if (rejected && revision) {
    if (!memory.rejected.has(revision)) {
      memory.rejected.add(revision);
      out.push({
        ...base(),
        type: 'revision-rejected',
        reason: err?.code ?? 'REVISION_REJECTED',
        message: redact(err?.message ?? 'the revision was rejected'),
        revision,
      });
    }
  } else if (summary.result === 'rejected') {
    // Blocked: announced by the phase change above.
  } else if (summary.result === 'failed' && err) {
    const key = `${err.code}@${revision ?? ''}`;
    if (memory.failure !== key) {
      memory.failure = key;
      out.push({
        ...base(),
        type: 'reconcile-failed',
        reason: err.code,
        message: redact(err.message),
        ...(revision ? { revision } : {}),
      });
    }
  } else if (summary.result === 'applied' || summary.result === 'unchanged') {
    memory.failure = undefined;
  }
  return out;
}

function driftEvents(
  view: SiteView | undefined,
  memory: NotifyMemory,
  base: (
    cluster?: string,
  ) => Pick<NotifyEvent, 'id' | 'at' | 'site' | 'link'> & { cluster?: string },
  revision: string | undefined,
): NotifyEvent[] {
  const out: NotifyEvent[] = [];
  const clusters = view?.plan?.clusters ?? [];
  for (const c of clusters) {
    const drift = c.actions.filter((a) => a.kind === 'fix-drift');
    const changes = drift.flatMap((a) =>
      (a.packages ?? []).map(
        (p) => `${p.node}: ${p.name} ${p.from ?? 'absent'} → ${p.to ?? 'absent'}`,
      ),
    );
    const key = JSON.stringify(changes.length ? changes : drift.map((a) => a.nodes));
    if (!drift.length) {
      memory.drift.delete(c.cluster);
      continue;
    }
    if (memory.drift.get(c.cluster) === key) continue;
    memory.drift.set(c.cluster, key);
    out.push({
      ...base(c.cluster),
      type: 'drift-found',
      reason: 'fix-drift',
      message: redact(
        `the nodes differ from the site: ${changes.length ? changes.join('; ') : drift.map((a) => a.reason).join('; ')}`,
      ),
      ...(revision ? { revision } : {}),
    });
  }
  for (const name of [...memory.drift.keys()])
    if (!clusters.some((c) => c.cluster === name)) memory.drift.delete(name);
  return out;
}
