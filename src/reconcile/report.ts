import type { IpSource } from '../observe/inventory/ip.js';
import { INVENTORY_REPORT, buildInventoryReport } from '../report/inventory.js';
import { buildReports, keptReports } from '../report/status.js';
import { StateStore } from '../state/store.js';
import { BpaError, messageOf } from '../util/errors.js';
import { hasErrors } from '../util/problem.js';
import { pluralize } from '../util/pluralize.js';
import { redact } from '../util/redact.js';
import { resolve } from 'node:path';
import type { RunContext } from './context.js';
import { writeSourceState } from './source-state.js';
import { publishReports, restoreReports, trustedReports } from './status-guard.js';

/**
 * The last step of a reconcile, run whatever happened before (Flux's finalizeStatus): the
 * status reports, committed to the site's repository, and what bpa saw of its source. There
 * is nothing to report for an input that did not change, a site that was never read, or a
 * state directory another bpa holds; and nothing yet when bpa stopped during the apply: the
 * journal keeps the step, and the next start resumes it and reports. A report that cannot be
 * written is the run's failure, unless it failed already.
 */
export async function report(ctx: RunContext): Promise<void> {
  // Nothing new to do, but someone else's edit of status/ to undo.
  if (ctx.site.kind === 'source' && ctx.skipped) return restoreReports(ctx, ctx.site.source);
  if (ctx.site.kind !== 'source' || ctx.skipped || !ctx.lock || !ctx.siteDir) return;
  ctx.interrupted =
    ctx.signal?.aborted === true && (ctx.failure !== undefined || ctx.result?.interrupted === true);
  if (ctx.interrupted) return;
  try {
    await writeReports(ctx, ctx.site.source);
  } catch (err: unknown) {
    ctx.log.error({ err: messageOf(err) }, 'status report failed');
    ctx.failure ??= err;
  }
}

async function writeReports(
  ctx: RunContext,
  source: Extract<RunContext['site'], { kind: 'source' }>['source'],
): Promise<void> {
  const siteDir = ctx.siteDir as string;
  const revision = ctx.revision as string;
  const digest = ctx.digest as string;
  const state = ctx.sourceState ?? {};
  const at = new Date(ctx.now()).toISOString();
  // What the steps found counts only when they all got through (a refused revision is not read).
  const run = ctx.failure === undefined && !ctx.refused ? ctx : undefined;
  const rejected = ctx.refused
    ? [ctx.refused]
    : run && hasErrors(run.validation)
      ? run.validation
      : undefined;
  const result = rejected
    ? 'rejected'
    : ctx.failure
      ? 'failed'
      : run?.approval
        ? 'blocked'
        : run?.result?.ok === false
          ? 'failed'
          : 'applied';
  const waiting = run?.result?.clusters.filter((c) => c.result === 'waiting') ?? [];
  const wakeAt = waiting
    .map((c) => c.waitingUntil)
    .filter((t): t is string => t !== undefined)
    .sort()[0];
  state.attempted = {
    revision,
    digest,
    at,
    result: result === 'applied' && waiting.length ? 'waiting' : result,
    ...(wakeAt ? { wakeAt } : {}),
    ...(ctx.suspended && Object.keys(ctx.suspended).length
      ? { suspended: Object.keys(ctx.suspended).sort() }
      : {}),
  };
  if (run?.result?.ok && !hasErrors(run.problems)) state.applied = { revision, digest, at };
  // A blocked plan was a full look too: it is looked at again at the next resync or revision.
  if (run?.result || run?.approval) state.lastFullAt = at;
  const previous = await trustedReports(ctx, source, siteDir);
  // A failure outside any action (the inventory unreadable, no plan made) is the site's.
  const failure =
    ctx.failure !== undefined && !rejected
      ? {
          code: ctx.failure instanceof BpaError ? ctx.failure.code : 'RECONCILE_FAILED',
          message: redact(messageOf(ctx.failure)),
        }
      : undefined;
  const reports = buildReports({
    revision,
    appliedRevision: state.applied?.revision,
    // The site's name, when the failure came after the site was read.
    model: run?.model ?? (failure ? ctx.model : undefined),
    rejected,
    ...(run?.blocked ? { blocked: run.blocked } : {}),
    ...(failure ? { failure } : {}),
    stateDir: resolve(ctx.operator.stateDir),
    plan: run?.plan,
    approval: run?.approval,
    result: run?.result,
    applied: await new StateStore(ctx.operator.stateDir).readApplied(),
    facts: run?.factsAfter ?? run?.facts,
    previous,
    now: at,
  });
  // The world the plan was made against, for plans made offline (bpa plan --from-status).
  if (run?.observations && run.config) {
    reports.set(
      INVENTORY_REPORT,
      buildInventoryReport({
        site: run.model?.site?.name ?? 'site',
        hosts: run.observations.hosts,
        leases: run.observations.leases,
        controller: {
          flavour: run.config.flavour,
          prune: run.config.prune,
          ipOrder: run.config.ipOrder as IpSource[],
          ...(run.plan?.settings ? { settings: run.plan.settings } : {}),
        },
        inventory: run.observations.inventory,
        previous: previous.get(INVENTORY_REPORT),
        now: at,
      }),
    );
  }
  const message = `bpa: ${commitSummary(result, run, ctx.failure)} @ ${revision.replace(/^sha256:/, '').slice(0, 7)}\n\nBpa-Source: ${revision}\nBpa-Plan: ${run?.plan?.hash ?? 'none'}\n`;
  const commit = await publishReports(ctx, source, siteDir, reports, message, {
    source: revision,
    plan: run?.plan?.hash,
  });
  if (commit) ctx.log.info({ commit }, 'status committed');
  await writeSourceState(ctx.operator.stateDir, state);
  // The clusters a rejected or failed reconcile did not report on keep their last reports.
  ctx.reports = new Map([...keptReports(previous, reports), ...reports]);
}

function commitSummary(result: string, run: RunContext | undefined, failure: unknown): string {
  if (failure) return `reconcile failed (${failure instanceof BpaError ? failure.code : 'error'})`;
  if (run?.approval) return `plan not applied (${run.approval.reason})`;
  if (result === 'rejected') {
    const n = run?.validation.filter((p) => p.severity === 'error').length ?? 0;
    return `rejected revision (${pluralize(n, 'error')})`;
  }
  const done =
    run?.result?.clusters.filter((c) => c.result !== 'unchanged' && c.result !== 'suspended') ?? [];
  const byApi = (run?.plan?.clusters ?? [])
    .filter((c) => c.gate?.by === 'api')
    .map((c) => c.cluster);
  const suspended = byApi.length ? `${byApi.join(', ')} suspended through the API` : '';
  if (!done.length) return suspended || 'status';
  return [...done]
    .map(
      (c) =>
        `${c.cluster} ${c.result === 'applied' ? c.actions.map((a) => a.kind).join('+') : c.result === 'waiting' ? 'waiting for its maintenance window' : 'failed'}`,
    )
    .concat(suspended ? [suspended] : [])
    .join(', ');
}
