import {
  BatchV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Job,
  type V1Secret,
  type V1Volume,
  type V1VolumeMount,
} from '@kubernetes/client-node';
import {
  CLUSTER_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  abortable,
  explainApiError,
  httpStatus,
  labelValue,
} from '../../kube/api.js';
import { collectJobLogs } from './job-logs.js';
import { type JobLike, type JobState, jobState, readJob, waitForJob } from './job-watch.js';
import { StalledError, TransientError, WaitingError } from '../../util/errors.js';
import { masker } from '../../util/redact.js';

export const PLAN_HASH_LABEL = 'bpa.akraino.org/plan-hash';
export const STEP_LABEL = 'bpa.akraino.org/step';
const PLAN_HASH_ANNOTATION = 'bpa.akraino.org/plan-hash';
const CONTAINER = 'installer';
const SSH_DIR = '/root/.ssh';
/** bpa's private key in the Job: the `ssh-privatekey` key of the kubernetes.io/ssh-auth Secret. */
export const JOB_SSH_KEY = `${SSH_DIR}/ssh-privatekey`;
const VARS_DIR = '/run/bpa-installer-vars';
const VARS_KEY = 'extra-vars.json';
/** The installer variables' file in the Job: a key of the run's own Secret, mode 0400. */
export const JOB_EXTRA_VARS = `${VARS_DIR}/${VARS_KEY}`;

export interface InstallerJobSpec {
  namespace: string;
  cluster: string;
  planHash: string;
  /** The journal step the Job carries out, e.g. `provision-cluster`. */
  step: string;
  image: string;
  command: string[];
  /** The installer's environment (SSH and Ansible settings, see ansibleEnv). */
  env?: Record<string, string>;
  /** Where the cluster directory (hosts.ini, artifacts/, logs/) lives for the Job. */
  clusterDir:
    | { persistentVolumeClaim: { claimName: string; subPath: string } }
    | { hostPath: { path: string } };
  /** e.g. /opt/kud/multi-cluster/<cluster> */
  mountPath: string;
  /** Secret with the SSH key, mounted read-only at /root/.ssh with mode 0400. */
  sshKeySecret: string;
  timeoutSeconds: number;
  serviceAccountName?: string;
  /**
   * Installer variables (a decrypted site Secret): put in a Secret of the run's own, owned by
   * the Job and deleted when the run ends, mounted at JOB_EXTRA_VARS. Never in the Job's spec.
   */
  variables?: Readonly<Record<string, string>>;
}

export interface JobOutcome {
  succeeded: boolean;
  /** Why the Job failed, from its Failed condition (e.g. DeadlineExceeded, BackoffLimitExceeded). */
  reason?: string;
  message?: string;
  /** Tail of the pod logs. */
  logs: string;
  /** True when the Job existed before this call (bpa restarted mid-run, or another replica). */
  adopted: boolean;
}

export interface RunJobOptions {
  /** Called with each line of the collected log; the caller adds its `[cluster] ` prefix. */
  onLog?: (line: string) => void;
  /** Stops following the Job (it keeps running, and the next run adopts it). */
  signal?: AbortSignal;
  /** Pace of re-reads when the watch cannot be held open (default 5000). */
  pollMs?: number;
  /**
   * A Job of this plan and step that already failed is deleted and run again, for the
   * journal's retry of a failed step. By default its failure is returned as it stands.
   */
  retryFailed?: boolean;
  /** Log lines asked of each pod (default 500) and bytes kept (default 64 KiB). */
  tailLines?: number;
  maxLogBytes?: number;
}

/** `bpa-<cluster>-<step>-<first 10 of planHash>`, cut to a DNS label while keeping the hash. */
export function jobName(spec: Pick<InstallerJobSpec, 'cluster' | 'step' | 'planHash'>): string {
  const hash = spec.planHash
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 10);
  const head = `bpa-${spec.cluster}-${spec.step}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-');
  const room = hash ? 63 - hash.length - 1 : 63;
  const cut = head.slice(0, room).replace(/-+$/, '');
  return hash ? `${cut}-${hash}` : cut;
}

export function jobLabels(spec: InstallerJobSpec): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [CLUSTER_LABEL]: labelValue(spec.cluster),
    [PLAN_HASH_LABEL]: labelValue(spec.planHash),
    [STEP_LABEL]: labelValue(spec.step),
  };
}

/** The Job that runs the installer for one step of one cluster, as ICN ran KUD. */
export function buildJob(spec: InstallerJobSpec): V1Job {
  const labels = jobLabels(spec);
  const clusterMount: V1VolumeMount = { name: 'cluster-dir', mountPath: spec.mountPath };
  let clusterVolume: V1Volume;
  if ('persistentVolumeClaim' in spec.clusterDir) {
    const { claimName, subPath } = spec.clusterDir.persistentVolumeClaim;
    clusterVolume = { name: 'cluster-dir', persistentVolumeClaim: { claimName } };
    if (subPath) clusterMount.subPath = subPath;
  } else {
    // "Directory", not "DirectoryOrCreate": an installer run on an empty directory (the
    // Job landed on a node without hosts.ini) must fail, not pretend.
    clusterVolume = {
      name: 'cluster-dir',
      hostPath: { path: spec.clusterDir.hostPath.path, type: 'Directory' },
    };
  }
  const podSpec: NonNullable<NonNullable<V1Job['spec']>['template']['spec']> = {
    // The installer reaches the hosts on the provisioning network the node is attached to.
    hostNetwork: true,
    dnsPolicy: 'ClusterFirstWithHostNet',
    restartPolicy: 'Never',
    // The installer needs no API access unless an account is named for it.
    automountServiceAccountToken: spec.serviceAccountName !== undefined,
    containers: [
      {
        name: CONTAINER,
        image: spec.image,
        command: [...spec.command],
        ...(spec.env
          ? {
              env: Object.entries(spec.env)
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([name, value]) => ({ name, value })),
            }
          : {}),
        workingDir: spec.mountPath,
        volumeMounts: [
          clusterMount,
          { name: 'ssh-key', mountPath: SSH_DIR, readOnly: true },
          ...(spec.variables
            ? [{ name: 'installer-vars', mountPath: VARS_DIR, readOnly: true }]
            : []),
        ],
      },
    ],
    volumes: [
      clusterVolume,
      { name: 'ssh-key', secret: { secretName: spec.sshKeySecret, defaultMode: 0o400 } },
      ...(spec.variables
        ? [
            {
              name: 'installer-vars',
              secret: {
                secretName: varsSecretName(spec),
                defaultMode: 0o400,
                items: [{ key: VARS_KEY, path: VARS_KEY }],
              },
            },
          ]
        : []),
    ],
  };
  if (spec.serviceAccountName !== undefined) podSpec.serviceAccountName = spec.serviceAccountName;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(spec),
      namespace: spec.namespace,
      labels,
      annotations: { [PLAN_HASH_ANNOTATION]: spec.planHash },
    },
    spec: {
      // A half-run installer is not retried blindly: the journal decides.
      backoffLimit: 0,
      activeDeadlineSeconds: Math.max(1, Math.ceil(spec.timeoutSeconds)),
      ttlSecondsAfterFinished: 86400,
      template: { metadata: { labels }, spec: podSpec },
    },
  };
}

/** The Secret that carries one run's installer variables: the Job's name and `-vars`. */
export function varsSecretName(
  spec: Pick<InstallerJobSpec, 'cluster' | 'step' | 'planHash'>,
): string {
  return `${jobName(spec)}-vars`;
}

/** The run's variables Secret, owned by its Job (the garbage collector removes it with the Job). */
export function buildVarsSecret(
  spec: InstallerJobSpec,
  job: { name: string; uid: string },
): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: varsSecretName(spec),
      namespace: spec.namespace,
      labels: jobLabels(spec),
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'Job', name: job.name, uid: job.uid, controller: true },
      ],
    },
    data: {
      [VARS_KEY]: Buffer.from(JSON.stringify(spec.variables ?? {})).toString('base64'),
    },
  };
}

/**
 * Runs the installer as a Job and waits for it. Idempotent: a Job of the same name (same
 * cluster, step and plan) is adopted, never duplicated, and a finished one is answered at
 * once. Throws WaitingError INSTALLER_JOB_DETACHED when `signal` stops the wait.
 */
export async function runInstallerJob(
  kc: KubeConfig,
  spec: InstallerJobSpec,
  opts: RunJobOptions = {},
): Promise<JobOutcome> {
  const name = jobName(spec);
  const ns = spec.namespace;
  const where = `Job ${ns}/${name}`;
  const pollMs = opts.pollMs ?? 5000;
  const { signal } = opts;
  const batch = kc.makeApiClient(BatchV1Api);
  const detached = (): WaitingError =>
    new WaitingError(
      'INSTALLER_JOB_DETACHED',
      `stopped following ${where}; if it was created it keeps running, and the next run adopts it`,
      pollMs,
    );
  const fail = (err: unknown, action: string, verb: string): Error =>
    signal?.aborted
      ? detached()
      : explainApiError(
          err,
          'INSTALLER_JOB_API',
          `${action} ${where}`,
          `${verb} on jobs.batch in namespace ${ns}`,
        );

  if (signal?.aborted) throw detached();
  let job: JobLike | undefined;
  try {
    job = await readJob(batch, ns, name, signal);
  } catch (err: unknown) {
    throw fail(err, 'reading', 'get');
  }
  let adopted = job !== undefined;
  if (job) checkOwnership(job, spec, where);

  if (job && opts.retryFailed && jobState(job)?.succeeded === false) {
    try {
      // The policy goes in the DeleteOptions body: a server reads the query parameters only
      // when a DELETE has no body, and a Job deleted without a policy orphans its pods,
      // whose logs the next run would then read as its own.
      await batch.deleteNamespacedJob(
        {
          name,
          namespace: ns,
          body: { propagationPolicy: 'Background', preconditions: { uid: job.metadata?.uid } },
        },
        signal ? abortable(signal) : undefined,
      );
    } catch (err: unknown) {
      if (httpStatus(err) !== 404 && httpStatus(err) !== 409)
        throw fail(err, 'deleting the failed', 'delete');
    }
    job = undefined;
    adopted = false;
  }

  if (!job) {
    try {
      job = await batch.createNamespacedJob(
        { namespace: ns, body: buildJob(spec) },
        signal ? abortable(signal) : undefined,
      );
    } catch (err: unknown) {
      if (httpStatus(err) !== 409) throw fail(err, 'creating', 'create');
      // Created meanwhile by another replica, or by an earlier attempt whose answer was lost.
      try {
        job = await readJob(batch, ns, name, signal);
      } catch (readErr: unknown) {
        throw fail(readErr, 'reading', 'get');
      }
      if (!job)
        throw new TransientError(
          'INSTALLER_JOB_API',
          `${where} was reported to exist but is gone; try again`,
        );
      if (job.metadata?.deletionTimestamp) {
        throw new WaitingError(
          'INSTALLER_JOB_DELETING',
          `${where} from an earlier attempt is still being deleted`,
          pollMs,
        );
      }
      checkOwnership(job, spec, where);
      adopted = true;
    }
  }

  const core = kc.makeApiClient(CoreV1Api);
  const vars = spec.variables ? varsSecretName(spec) : undefined;
  const varsFail = (err: unknown, action: string, verb: string): Error =>
    signal?.aborted
      ? detached()
      : explainApiError(
          err,
          'INSTALLER_VARS_SECRET',
          `${action} Secret ${ns}/${vars ?? ''} (the installer variables of ${where})`,
          `${verb} on secrets in namespace ${ns}`,
        );
  // A Job that has not finished needs its variables; the pod waits for the Secret to mount.
  if (vars && !jobState(job)) {
    const owner = { name: job.metadata?.name ?? name, uid: job.metadata?.uid ?? '' };
    try {
      await core.createNamespacedSecret(
        { namespace: ns, body: buildVarsSecret(spec, owner) },
        signal ? abortable(signal) : undefined,
      );
    } catch (err: unknown) {
      if (httpStatus(err) !== 409) throw varsFail(err, 'creating', 'create');
      // Left by the same Job before a restart (kept), or by a Job deleted for a re-run.
      let found: V1Secret | undefined;
      try {
        found = await core.readNamespacedSecret(
          { name: vars, namespace: ns },
          signal ? abortable(signal) : undefined,
        );
      } catch (readErr: unknown) {
        throw varsFail(readErr, 'reading', 'get');
      }
      if (found.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY)
        throw new StalledError(
          'INSTALLER_VARS_SECRET_CONFLICT',
          `Secret ${ns}/${vars} exists but was not created by bpa (label ${MANAGED_BY_LABEL} is not ${MANAGED_BY}); delete or rename it`,
        );
      if (!found.metadata?.ownerReferences?.some((o) => o.uid === owner.uid)) {
        try {
          await core.deleteNamespacedSecret(
            { name: vars, namespace: ns, body: { preconditions: { uid: found.metadata?.uid } } },
            signal ? abortable(signal) : undefined,
          );
          await core.createNamespacedSecret(
            { namespace: ns, body: buildVarsSecret(spec, owner) },
            signal ? abortable(signal) : undefined,
          );
        } catch (againErr: unknown) {
          throw varsFail(againErr, 'replacing', 'delete and create');
        }
      }
    }
  }

  const waited = await waitForJob(kc, batch, ns, job, {
    signal,
    pollMs,
    watchSeconds: 300,
    maxFailures: 10,
  });
  if (waited.kind === 'aborted') throw detached();
  const state: JobState =
    waited.kind === 'finished'
      ? waited.state
      : {
          succeeded: false,
          reason: 'JobDeleted',
          message: `${where} was deleted before it finished`,
        };

  // The run is over: its variables go at once, not when the Job's TTL ends.
  if (vars) {
    try {
      await core.deleteNamespacedSecret(
        { name: vars, namespace: ns },
        signal ? abortable(signal) : undefined,
      );
    } catch (err: unknown) {
      if (httpStatus(err) !== 404) throw varsFail(err, 'deleting', 'delete');
    }
  }
  const collected = await collectJobLogs(core, ns, name, job.metadata?.uid, {
    tailLines: opts.tailLines ?? 500,
    maxBytes: opts.maxLogBytes ?? 64 * 1024,
    container: CONTAINER,
    signal,
  });
  // An installer that prints a variable never puts it in bpa's log file or on the page.
  const logs = spec.variables ? masker(Object.values(spec.variables))(collected) : collected;
  if (opts.onLog) for (const line of splitLines(logs)) opts.onLog(line);

  const outcome: JobOutcome = { succeeded: state.succeeded, logs, adopted };
  if (state.reason !== undefined) outcome.reason = state.reason;
  if (state.message !== undefined) outcome.message = state.message;
  return outcome;
}

/** A Job of our name that bpa did not make for this plan is left alone: a person must look. */
function checkOwnership(job: JobLike, spec: InstallerJobSpec, where: string): void {
  const labels = job.metadata?.labels ?? {};
  const want = jobLabels(spec);
  for (const key of [MANAGED_BY_LABEL, CLUSTER_LABEL, PLAN_HASH_LABEL, STEP_LABEL]) {
    if (labels[key] !== want[key]) {
      throw new StalledError(
        'INSTALLER_JOB_CONFLICT',
        `${where} exists but was not created by bpa for this plan (label ${key} is ${JSON.stringify(labels[key] ?? null)}, expected ${JSON.stringify(want[key])}); delete or rename it`,
      );
    }
  }
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}
