import { parseReports, type SiteSource } from '../source/site-source.js';
import { StateLock } from '../state/lock.js';
import { messageOf } from '../util/errors.js';
import type { RunContext } from './context.js';
import {
  readStatusRecord,
  writeStatusRecord,
  type StatusCheck,
  type StatusRecord,
} from './source-state.js';

/**
 * `status/` is bpa's: a commit that changes only it triggers no work. So that nobody else's
 * edit of it (a made-up `phase: Ready`) stays where `bpa status`, offline plans and a state
 * rebuild read it, bpa keeps what it last left there (`<state>/status.json`) and compares the
 * content at each revision with it. bpa's own status commits match; anything else (an edit,
 * an added or removed report, a revert) is someone else's, and bpa writes its reports back in
 * a commit that says so. Content is the test, not an author or a trailer, which anyone who
 * can push can copy. With no record (a first start, a lost state directory) nothing can be
 * told apart: that run is a full reconcile, whose reports are what bpa writes from then on.
 */

/** `status/` at the revision against the record, read once per run (sources without commits: none). */
export async function checkStatus(
  ctx: RunContext,
  source: SiteSource,
  siteDir: string,
): Promise<StatusCheck | undefined> {
  if (ctx.status) return ctx.status;
  if (!source.reportTexts) return undefined;
  const actual = await source.reportTexts(siteDir);
  const record = await readStatusRecord(ctx.operator.stateDir);
  let edited = false;
  if (record?.pending) {
    // The last push landed (its answer may have been lost), and is recorded as bpa's; or it
    // did not, and the record stays (the next publish replaces the pending copy).
    const landed = sameFiles(actual, record.pending);
    if (landed) record.files = record.pending;
    delete record.pending;
    if (landed) await writeStatusRecord(ctx.operator.stateDir, record);
  }
  if (record && !sameFiles(actual, record.files)) edited = true;
  ctx.status = { ...(record ? { record } : {}), actual, edited };
  if (edited)
    ctx.log.warn(
      { changed: changedPaths(actual, record?.files ?? {}) },
      'status/ was edited by someone else: bpa writes its reports back',
    );
  return ctx.status;
}

/** The reports a run builds on: bpa's own when someone else edited them, else the revision's. */
export async function trustedReports(
  ctx: RunContext,
  source: SiteSource,
  siteDir: string,
): Promise<Map<string, unknown>> {
  const status = await checkStatus(ctx, source, siteDir);
  if (!status) return source.previousReports(siteDir);
  return parseReports(
    status.edited && status.record ? new Map(Object.entries(status.record.files)) : status.actual,
  );
}

/**
 * Publishes a run's reports and records what status/ then holds: the reports over what was
 * there (bpa's own reports when someone else edited it, whose extra reports are removed).
 * A restore says so in the message, above the trailers.
 */
export async function publishReports(
  ctx: RunContext,
  source: SiteSource,
  siteDir: string,
  reports: ReadonlyMap<string, string>,
  message: string,
  about: { source: string; plan?: string },
): Promise<string | undefined> {
  const status = await checkStatus(ctx, source, siteDir);
  if (!status) return source.publish(siteDir, reports, message);
  const base =
    status.edited && status.record ? new Map(Object.entries(status.record.files)) : status.actual;
  const desired = new Map([...base, ...reports]);
  const files = new Map<string, string | null>(desired);
  for (const path of status.actual.keys()) if (!desired.has(path)) files.set(path, null);
  const [subject, ...rest] = message.split('\n\n');
  const text =
    status.edited && status.record
      ? [subject, restoredNote(status.actual, status.record.files), ...rest].join('\n\n')
      : message;
  return publishRecorded(ctx, source, siteDir, files, text, {
    files: Object.fromEntries(desired),
    source: about.source,
    ...(about.plan ? { plan: about.plan } : {}),
  });
}

/**
 * A run that has nothing new to do (the same input), on a revision whose status/ someone else
 * edited: bpa's last reports are written back, under the state directory's lock, and nothing
 * else is done. A lock held elsewhere or a failed push leaves it to the next reconcile.
 */
export async function restoreReports(ctx: RunContext, source: SiteSource): Promise<void> {
  const status = ctx.status;
  const record = status?.record;
  const siteDir = ctx.siteDir;
  if (!status?.edited || !record || !siteDir) return;
  const lock = new StateLock(ctx.operator.stateDir);
  try {
    await lock.acquire();
  } catch (err: unknown) {
    ctx.log.warn(
      { err: messageOf(err) },
      'status/ not restored yet: the state directory is locked',
    );
    return;
  }
  try {
    const files = new Map<string, string | null>(Object.entries(record.files));
    for (const path of status.actual.keys()) if (!(path in record.files)) files.set(path, null);
    const about = record.source ?? ctx.revision ?? '';
    const message = `bpa: status/ edited by someone else, restored @ ${about.replace(/^sha256:/, '').slice(0, 7)}\n\n${restoredNote(status.actual, record.files)}\n\nBpa-Source: ${about}\nBpa-Plan: ${record.plan ?? 'none'}\n`;
    const commit = await publishRecorded(ctx, source, siteDir, files, message, record);
    if (commit) ctx.log.info({ commit }, 'status/ restored');
  } catch (err: unknown) {
    ctx.log.error({ err: messageOf(err) }, 'status/ not restored');
  } finally {
    await lock.release();
  }
}

async function publishRecorded(
  ctx: RunContext,
  source: SiteSource,
  siteDir: string,
  files: ReadonlyMap<string, string | null>,
  message: string,
  record: StatusRecord,
): Promise<string | undefined> {
  const stateDir = ctx.operator.stateDir;
  // Before the push, what status/ holds now stays bpa's (a push that fails changes nothing).
  const before = ctx.status?.record ?? { files: Object.fromEntries(ctx.status?.actual ?? []) };
  await writeStatusRecord(stateDir, { ...before, pending: record.files });
  const commit = await source.publish(siteDir, files, message);
  await writeStatusRecord(stateDir, {
    files: record.files,
    ...(record.source ? { source: record.source } : {}),
    ...(record.plan ? { plan: record.plan } : {}),
  });
  return commit;
}

function restoredNote(actual: ReadonlyMap<string, string>, files: Record<string, string>): string {
  return `status/ was edited by someone else (${changedPaths(actual, files).join(', ')}): restored to the reports bpa wrote.`;
}

function changedPaths(
  actual: ReadonlyMap<string, string>,
  files: Record<string, string>,
): string[] {
  const paths = new Set([...actual.keys(), ...Object.keys(files)]);
  return [...paths].filter((p) => actual.get(p) !== files[p]).sort();
}

function sameFiles(actual: ReadonlyMap<string, string>, files: Record<string, string>): boolean {
  const keys = Object.keys(files);
  return keys.length === actual.size && keys.every((k) => actual.get(k) === files[k]);
}
