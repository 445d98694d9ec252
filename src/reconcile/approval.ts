export type { ApprovalBlock } from '../report/status.js';
import type { Plan } from '../plan/index.js';
import type { ApprovalBlock } from '../report/status.js';
import { approvedPlan } from '../source/input-commit.js';
import type { SiteSource } from '../source/site-source.js';
import { pluralize } from '../util/pluralize.js';

/**
 * Whether `plan` may be applied: yes when every action it has is of an exempt kind (nothing
 * else to approve), or when the commit that brought the revision's input carries
 * `Bpa-Approved-Plan: <hash>` equal to the plan's hash. Otherwise the block, with both
 * hashes and the actions that wait, for the report.
 */
export async function checkApproval(
  plan: Plan,
  revision: string,
  source: SiteSource,
  exempt: readonly string[],
): Promise<ApprovalBlock | undefined> {
  const pending = plan.clusters.flatMap((c) =>
    c.actions
      .filter((a) => !exempt.includes(a.kind))
      .map((a) => ({ cluster: c.cluster, action: a.kind, nodes: [...a.nodes], reason: a.reason })),
  );
  if (!pending.length) return undefined;
  const found = await source.inputCommit?.(revision);
  const trailer = found ? approvedPlan(found.message) : {};
  const base = {
    planHash: plan.hash,
    ...(found ? { commit: found.commit } : {}),
    pending,
  };
  const at = found ? `commit ${found.commit.slice(0, 12)}` : `revision ${revision.slice(0, 12)}`;
  if (trailer.hash === plan.hash) return undefined;
  if (trailer.hash) {
    return {
      ...base,
      reason: 'PlanChanged',
      code: 'PLAN_CHANGED',
      approvedPlanHash: trailer.hash,
      message: `nothing applied: ${at} approves plan ${trailer.hash.slice(0, 12)}, but the plan is now ${plan.hash.slice(0, 12)} (the site or the world changed since the review); review the current plan and approve it with the trailer Bpa-Approved-Plan: ${plan.hash}`,
    };
  }
  return {
    ...base,
    reason: 'PlanNotApproved',
    code: 'PLAN_NOT_APPROVED',
    message: `nothing applied: ${at} carries ${trailer.malformed !== undefined ? `a malformed trailer (Bpa-Approved-Plan: ${trailer.malformed})` : 'no Bpa-Approved-Plan trailer'}, and the plan has ${pluralize(pending.length, 'action')} that need approval; review plan ${plan.hash.slice(0, 12)} and approve it with the trailer Bpa-Approved-Plan: ${plan.hash}`,
  };
}
