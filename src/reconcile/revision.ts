import { BpaError } from '../util/errors.js';
import { error } from '../util/problem.js';
import type { RunContext, SiteInput } from './context.js';
import { readSourceState, writeSourceState } from './source-state.js';
import { checkStatus } from './status-guard.js';
import { readSuspensions } from '../state/suspensions.js';

/**
 * The source step for a repository (or a watched directory): the revision brought up to date,
 * then one of three outcomes. The same input again is skipped (a status-only commit, a commit
 * outside the site), unless a periodic full reconcile is due, never for a rejected input,
 * which stays rejected until it changes, or the last attempt failed (a failed revision is
 * tried again, with backoff under serve, until it applies); and never when a person asked for
 * a reconcile (the requestedAt annotation on the Site object). A revision whose signature is
 * required and not good is refused: reported like an invalid one, nothing of it applied.
 * Otherwise the run goes on.
 */
export async function syncRevision(
  ctx: RunContext,
  { source, trigger, resyncIntervalMs }: Extract<SiteInput, { kind: 'source' }>,
): Promise<void> {
  const stateDir = ctx.operator.stateDir;
  const state = await readSourceState(stateDir);
  ctx.sourceState = state;
  const { siteDir, revision, digest } = await source.sync();
  Object.assign(ctx, { siteDir, revision, digest });
  // Someone else's edit of status/ keeps the input as it is: it is found here, so that even a
  // run with nothing else to do writes bpa's reports back (reconcile/status-guard.ts).
  await checkStatus(ctx, source, siteDir);
  state.fetched = { revision, at: new Date(ctx.now()).toISOString() };
  const full = !state.lastFullAt || ctx.now() - Date.parse(state.lastFullAt) >= resyncIntervalMs;
  // A suspension or resume through the API is new input, whatever the repository says.
  const suspended = Object.keys(await readSuspensions(stateDir))
    .sort()
    .join(',');
  const same =
    state.attempted?.digest === digest &&
    state.attempted.result !== 'failed' &&
    (state.attempted.suspended ?? []).join(',') === suspended &&
    // Changes that waited for a maintenance window run once it has opened.
    !(
      state.attempted.result === 'waiting' &&
      state.attempted.wakeAt !== undefined &&
      ctx.now() >= Date.parse(state.attempted.wakeAt)
    ) &&
    // A blocked plan is looked at again on any new commit: one that only adds an approval
    // trailer (an empty commit) does not change the input.
    !(state.attempted.result === 'blocked' && state.attempted.revision !== revision);
  // …except that a signed commit of an input rejected for its signature is checked again
  // (a person re-signed it); bpa's own status commits on top of it are never signed.
  const resigned =
    same &&
    state.attempted?.result === 'rejected' &&
    state.verifiedDigest !== digest &&
    (await source.signed?.(revision)) === true;
  if (
    same &&
    !resigned &&
    trigger !== 'startup' &&
    trigger !== 'requested' &&
    (!full || state.attempted?.result === 'rejected')
  ) {
    await writeSourceState(stateDir, state);
    ctx.log.debug({ revision }, 'no new input');
    ctx.skipped = true;
    return;
  }
  ctx.log.info({ revision, source: source.describe() }, 'reconcile started');
  try {
    // bpa's own status commits are not signed: an input already verified is not checked again.
    if (state.verifiedDigest !== digest) {
      await source.verify?.(revision);
      if (source.verify) state.verifiedDigest = digest;
    }
  } catch (err: unknown) {
    if (!(err instanceof BpaError) || err.retry !== 'stalled') throw err;
    ctx.refused = error(err.code, err.message);
  }
}
