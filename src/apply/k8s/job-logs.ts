import {
  type ConfigurationOptions,
  type CoreV1Api,
  Observable,
  type RequestContext,
  ResponseContext,
  type V1Pod,
} from '@kubernetes/client-node';
import { abortable, serverMessage } from '../../kube/api.js';
import { messageOf } from '../../util/errors.js';

export interface LogLimits {
  /** Lines asked of each pod (the server cuts the log before sending it). */
  tailLines: number;
  /** Bytes kept of all pods together; the end of the log is what explains a failure. */
  maxBytes: number;
  container: string;
  signal?: AbortSignal | undefined;
}

/**
 * The tail of the logs of a Job's pods, oldest pod first. The Job controller labels its pods
 * `job-name=<job>`; pods of an earlier Job of the same name (still being collected, or
 * orphaned) are told apart by their owner reference. A pod that has no log yet (never
 * scheduled) or whose log cannot be read leaves a note instead, since the Job's verdict does
 * not depend on its logs.
 */
export async function collectJobLogs(
  core: CoreV1Api,
  namespace: string,
  jobName: string,
  jobUid: string | undefined,
  limits: LogLimits,
): Promise<string> {
  const options = limits.signal ? abortable(limits.signal) : undefined;
  let pods: V1Pod[];
  try {
    const list = await core.listNamespacedPod(
      { namespace, labelSelector: `job-name=${jobName}` },
      options,
    );
    pods = list.items.filter((p) => ownedBy(p, jobUid));
  } catch (err: unknown) {
    return `(pods of Job ${jobName} could not be listed: ${describe(err)})\n`;
  }
  pods.sort(
    (a, b) =>
      time(a.metadata?.creationTimestamp) - time(b.metadata?.creationTimestamp) ||
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );

  const parts: string[] = [];
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    if (pods.length > 1) parts.push(`==> pod ${name} <==\n`);
    try {
      const text = await readPodLog(core, {
        name,
        namespace,
        container: containerOf(pod, limits.container),
        tailLines: limits.tailLines,
        signal: limits.signal,
      });
      if (text === undefined) parts.push(`(no logs yet: pod ${name} is not on a node)\n`);
      else parts.push(text === '' || text.endsWith('\n') ? text : `${text}\n`);
    } catch (err: unknown) {
      parts.push(`(log of pod ${name} could not be read: ${describe(err)})\n`);
    }
  }
  return tailBytes(parts.join(''), limits.maxBytes);
}

interface LogRequest {
  name: string;
  namespace: string;
  container: string | undefined;
  tailLines: number;
  signal: AbortSignal | undefined;
}

/**
 * The log text of one pod, or undefined when there is none yet. For a pod that is not on a
 * node the API server has no kubelet to ask and answers 204 No Content without a
 * Content-Type, which the generated client cannot parse; the answer is recognised here
 * before the client reads it.
 */
async function readPodLog(core: CoreV1Api, req: LogRequest): Promise<string | undefined> {
  let noContent = false;
  const options: ConfigurationOptions = {
    middleware: [
      {
        pre: (ctx: RequestContext): Observable<RequestContext> =>
          new Observable(Promise.resolve(ctx)),
        post: (res: ResponseContext): Observable<ResponseContext> => {
          if (res.httpStatusCode !== 204) return new Observable(Promise.resolve(res));
          noContent = true;
          const headers = { ...res.headers, 'content-type': 'text/plain' };
          return new Observable(Promise.resolve(new ResponseContext(204, headers, res.body)));
        },
      },
      ...(req.signal ? (abortable(req.signal).middleware ?? []) : []),
    ],
    middlewareMergeStrategy: 'append',
  };
  const text = await core.readNamespacedPodLog(
    {
      name: req.name,
      namespace: req.namespace,
      container: req.container,
      tailLines: req.tailLines,
    },
    options,
  );
  return noContent ? undefined : text;
}

/**
 * The Job controller always names the Job as owner of its pods; a pod with the label but
 * without that owner belongs to an earlier Job of the same name (orphaned when it was
 * deleted), and its log is not this run's.
 */
function ownedBy(pod: V1Pod, jobUid: string | undefined): boolean {
  if (!jobUid) return true;
  return (pod.metadata?.ownerReferences ?? []).some((o) => o.uid === jobUid);
}

/** The named container when the pod has it (a sidecar may have been injected), else none. */
function containerOf(pod: V1Pod, wanted: string): string | undefined {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  return names.includes(wanted) ? wanted : undefined;
}

function time(value: Date | undefined): number {
  return value instanceof Date ? value.getTime() : 0;
}

function describe(err: unknown): string {
  return serverMessage(err) ?? messageOf(err);
}

/** The last `max` bytes of a text, starting at a line boundary. */
export function tailBytes(text: string, max: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= max) return text;
  const cut = buf.subarray(buf.length - max).toString('utf8');
  const newline = cut.indexOf('\n');
  return newline >= 0 ? cut.slice(newline + 1) : cut;
}
