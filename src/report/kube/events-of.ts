// Which Events a reconcile's outcome makes, on which Cluster. Pure.
import type { ApplyResult } from '../../apply/engine.js';
import type { Plan } from '../../plan/index.js';
import { describeFailure, type ApprovalBlock } from '../status.js';
import type { EventReason } from './events.js';

export interface ClusterEvent {
  cluster: string;
  reason: EventReason;
  type: 'Normal' | 'Warning';
  note: string;
  at?: string;
}

/** Rolling-change states a node reaches only after it was drained. */
const DRAINED = new Set(['drained', 'changed', 'healthy', 'done']);

/**
 * The Events of one apply: each action that ran started and finished or failed (at its own
 * times), each node drained, each cluster that waits for its window or wave, and each that
 * waits for an approved plan. Failures say the step, code, exit and log id, never output.
 */
export function clusterEvents(input: {
  result?: ApplyResult;
  plan?: Plan;
  approval?: ApprovalBlock;
}): ClusterEvent[] {
  const out: ClusterEvent[] = [];
  for (const c of input.result?.clusters ?? []) {
    for (const a of c.actions) {
      if (a.result === 'not-run') continue;
      const nodes = a.nodes.length ? ` (${a.nodes.join(', ')})` : '';
      out.push({
        cluster: c.cluster,
        reason: 'ActionStarted',
        type: 'Normal',
        note: `${a.kind}${nodes} started`,
        ...(a.startedAt ? { at: a.startedAt } : {}),
      });
      for (const n of a.rollout ?? [])
        if (DRAINED.has(n.state))
          out.push({
            cluster: c.cluster,
            reason: 'NodeDrained',
            type: 'Normal',
            note: `node ${n.node} cordoned and drained for ${a.kind}`,
          });
      if (a.result === 'done')
        out.push({
          cluster: c.cluster,
          reason: 'ActionSucceeded',
          type: 'Normal',
          note: `${a.kind}${nodes} finished`,
          ...(a.endedAt ? { at: a.endedAt } : {}),
        });
      else if (a.result === 'failed')
        out.push({
          cluster: c.cluster,
          reason: 'ActionFailed',
          type: 'Warning',
          note: describeFailure(a.kind, a.error ?? {}),
          ...(a.endedAt ? { at: a.endedAt } : {}),
        });
    }
    if (c.result === 'waiting') {
      const gate = input.plan?.clusters.find((p) => p.cluster === c.cluster)?.gate;
      const wave = gate?.reason === 'WaitingForWave';
      const pending = c.actions.filter((a) => a.result === 'not-run').map((a) => a.kind);
      out.push({
        cluster: c.cluster,
        reason: wave ? 'WaitingForWave' : 'WaitingForWindow',
        type: 'Normal',
        note: wave
          ? `${pending.join(', ')} wait for an earlier wave`
          : `${pending.join(', ')} wait for the next maintenance window${c.waitingUntil ? `, which opens at ${c.waitingUntil}` : ''}`,
      });
    }
  }
  const pending = new Map<string, string[]>();
  for (const p of input.approval?.pending ?? [])
    pending.set(p.cluster, [...(pending.get(p.cluster) ?? []), p.action]);
  for (const [cluster, actions] of pending)
    out.push({
      cluster,
      reason: 'ApprovalMissing',
      type: 'Warning',
      note: `${actions.join(', ')} not applied: ${input.approval?.message ?? 'the plan is not approved'}`,
    });
  return out;
}
