import { type BatchV1Api, type KubeConfig, Watch } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortable, explainApiError, httpStatus } from '../../kube/api.js';
import { TransientError } from '../../util/errors.js';

/** What bpa reads of a Job; both the typed client's V1Job and a raw watch event fit it. */
export interface JobLike {
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: unknown;
    labels?: Record<string, string>;
  };
  status?: {
    succeeded?: number;
    failed?: number;
    conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
  };
}

export interface JobState {
  succeeded: boolean;
  reason?: string;
  message?: string;
}

/** The end state of a Job, or undefined while it runs. */
export function jobState(job: JobLike): JobState | undefined {
  const conditions = job.status?.conditions ?? [];
  const holds = (type: string): { reason?: string; message?: string } | undefined =>
    conditions.find((c) => c.type === type && c.status === 'True');
  const complete = holds('Complete');
  if (complete) return { succeeded: true };
  const failed = holds('Failed');
  if (failed) return withText(false, failed.reason ?? 'Failed', failed.message);
  if ((job.status?.succeeded ?? 0) >= 1) return { succeeded: true };
  if ((job.status?.failed ?? 0) >= 1) {
    // Newer controllers announce the verdict (FailureTarget) before the Failed condition.
    const target = holds('FailureTarget');
    return withText(false, target?.reason ?? 'PodFailed', target?.message);
  }
  return undefined;
}

function withText(succeeded: boolean, reason: string, message: string | undefined): JobState {
  return message ? { succeeded, reason, message } : { succeeded, reason };
}

/**
 * A Job with a deletionTimestamp never finishes: the Job controller leaves it alone. It stays
 * until the garbage collector removes its finalizer (orphan, foregroundDeletion), which takes
 * a while or, with no controller manager running, forever; waiting for the DELETED event
 * would hang bpa that long.
 */
function beingDeleted(job: JobLike): boolean {
  return Boolean(job.metadata?.deletionTimestamp);
}

export type WaitResult =
  { kind: 'finished'; job: JobLike; state: JobState } | { kind: 'deleted' } | { kind: 'aborted' };

export interface WaitOptions {
  signal?: AbortSignal | undefined;
  /** Pace of re-reads when the watch cannot be held open. */
  pollMs: number;
  /** Server-side lifetime of one watch request; a fresh one follows at once. */
  watchSeconds: number;
  /** Consecutive failed reads after which bpa gives up (the Job keeps running). */
  maxFailures: number;
}

/**
 * Follows a Job until it finishes: a watch from the newest known resourceVersion, and a list
 * of just this Job whenever the watch ends, fails or reports 410 Gone (a list answers with a
 * current resourceVersion, so the next watch does not start from a compacted one). Lists
 * are paced by `pollMs`: against a server that cannot watch this degrades to polling.
 */
export async function waitForJob(
  kc: KubeConfig,
  batch: BatchV1Api,
  namespace: string,
  initial: JobLike,
  opts: WaitOptions,
): Promise<WaitResult> {
  const name = initial.metadata?.name ?? '';
  const where = `Job ${namespace}/${name}`;
  const fieldSelector = `metadata.name=${name}`;
  const options = opts.signal ? abortable(opts.signal) : undefined;
  let job = initial;
  let from = initial.metadata?.resourceVersion;
  let failures = 0;
  for (;;) {
    const state = jobState(job);
    if (state) return { kind: 'finished', job, state };
    if (beingDeleted(job)) return { kind: 'deleted' };
    if (opts.signal?.aborted) return { kind: 'aborted' };

    const started = Date.now();
    const end = await watchOnce(kc, namespace, fieldSelector, from, opts);
    if (end.kind === 'finished' || end.kind === 'deleted' || end.kind === 'aborted') return end;
    if (end.kind !== 'gone')
      // Stopping (the signal) ends the wait early; the loop then returns aborted.
      await sleep(Math.max(0, opts.pollMs - (Date.now() - started)), undefined, {
        signal: opts.signal,
      }).catch(() => undefined);
    if (opts.signal?.aborted) return { kind: 'aborted' };

    try {
      const list = await batch.listNamespacedJob({ namespace, fieldSelector }, options);
      const found = list.items[0];
      if (!found) return { kind: 'deleted' };
      job = found;
      from = list.metadata?.resourceVersion ?? found.metadata?.resourceVersion;
      failures = 0;
    } catch (err: unknown) {
      if (opts.signal?.aborted) return { kind: 'aborted' };
      const explained = explainApiError(
        err,
        'INSTALLER_JOB_API',
        `reading ${where}`,
        `list and watch on jobs.batch in namespace ${namespace}`,
      );
      if (explained.retry !== 'transient') throw explained;
      failures += 1;
      if (failures >= opts.maxFailures) {
        throw new TransientError(
          'INSTALLER_JOB_UNREACHABLE',
          `lost track of ${where} after ${failures} failed reads (${explained.message}); it keeps running and the next run adopts it`,
          { cause: err },
        );
      }
      await sleep(opts.pollMs, undefined, { signal: opts.signal }).catch(() => undefined);
    }
  }
}

type WatchEnd = WaitResult | { kind: 'gone' } | { kind: 'closed' } | { kind: 'error' };

interface WatchEvent {
  type?: string;
  object?: unknown;
}

/** One watch request on the Job; resolves when the Job finishes or the watch stops for any reason. */
async function watchOnce(
  kc: KubeConfig,
  namespace: string,
  fieldSelector: string,
  resourceVersion: string | undefined,
  opts: WaitOptions,
): Promise<WatchEnd> {
  let settle: (end: WatchEnd) => void = () => undefined;
  const result = new Promise<WatchEnd>((resolve) => (settle = resolve));
  let request: AbortController | undefined;
  let settled = false;
  const finish = (end: WatchEnd): void => {
    if (settled) return;
    settled = true;
    opts.signal?.removeEventListener('abort', onAbort);
    request?.abort();
    settle(end);
  };
  const onAbort = (): void => finish({ kind: 'aborted' });
  if (opts.signal?.aborted) return { kind: 'aborted' };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const onEvent = (type: string, object: unknown, raw?: unknown): void => {
    const event = (raw ?? { type, object }) as WatchEvent;
    if (event.type === 'ERROR') {
      const code = (event.object as { code?: number } | undefined)?.code;
      finish(code === 410 ? { kind: 'gone' } : { kind: 'error' });
      return;
    }
    if (event.type === 'DELETED') return finish({ kind: 'deleted' });
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return; // BOOKMARK and the like
    const job = event.object as JobLike;
    const state = jobState(job);
    if (state) finish({ kind: 'finished', job, state });
    else if (beingDeleted(job)) finish({ kind: 'deleted' });
  };

  try {
    // Watch.watch can reject before it ever calls done (no cluster, bad auth plugin), so
    // it is awaited here rather than trusted to report through the callback.
    request = await new Watch(kc).watch(
      `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/jobs`,
      {
        fieldSelector,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: opts.watchSeconds,
      },
      onEvent,
      (err: unknown) => finish(err ? { kind: 'error' } : { kind: 'closed' }),
    );
    if (settled) request.abort();
  } catch {
    finish({ kind: 'error' });
  }
  return result;
}

/** Reads a Job, or undefined when it does not exist. */
export async function readJob(
  batch: BatchV1Api,
  namespace: string,
  name: string,
  signal: AbortSignal | undefined,
): Promise<JobLike | undefined> {
  try {
    return await batch.readNamespacedJob(
      { name, namespace },
      signal ? abortable(signal) : undefined,
    );
  } catch (err: unknown) {
    if (httpStatus(err) === 404) return undefined;
    throw err;
  }
}
