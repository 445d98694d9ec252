import { mkdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { writeFileAtomic } from '../../util/write-file-atomic.js';
import { InstallerError, StalledError } from '../../util/errors.js';
import { logId } from '../../state/logs.js';
import { JOB_EXTRA_VARS, JOB_SSH_KEY, runInstallerJob } from '../k8s/installer-job.js';
import type { InstallerPath, InstallerPort, InstallerRequest, StepHandle } from '../ports.js';
import { ansibleDirs, ansibleEnv } from './ansible-env.js';
import { expandCommand, usesKubespray } from './command.js';
import type { InstallerCommands } from '../../config/execution.js';

export interface JobInstallerOptions {
  kc: KubeConfig;
  namespace: string;
  image: string;
  commands: InstallerCommands;
  /** Where the installer image holds a Kubespray checkout ('' or absent: none). */
  kubesprayDir?: string;
  /** SSH user, for installers that read BPA_SSH_USER (the inventory carries it for Ansible). */
  user: string;
  timeoutSeconds: number;
  /** The PVC holding bpa's state; the Job mounts `clusters/<cluster>` of it. */
  stateClaim: string;
  sshKeySecret: string;
  serviceAccountName?: string;
  /**
   * Installer variables (a decrypted site Secret): each run gets them in a Secret of its own,
   * mounted as the extra-vars file (`{extraVars}`, BPA_EXTRA_VARS), deleted when it ends.
   */
  variables?: () => Readonly<Record<string, string>> | undefined;
  onLine?: (line: string) => void;
  signal?: AbortSignal;
}

/** Where KUD expects its cluster directory inside the installer image. */
const MOUNT_ROOT = '/opt/kud/multi-cluster';

/**
 * Runs installer paths as Kubernetes Jobs in the bootstrap cluster, as ICN did. The Job name
 * comes from the work (cluster, path, work id), so a restarted bpa adopts the Job it started
 * instead of starting a second one.
 */
export class JobInstaller implements InstallerPort {
  constructor(private readonly opts: JobInstallerOptions) {}

  async run(path: InstallerPath, req: InstallerRequest, step: StepHandle): Promise<void> {
    const runs = path === 'addon' ? req.plugins.map((p) => ({ ...req, plugins: [p] })) : [req];
    const template = this.opts.commands[path];
    if (!template) {
      throw new StalledError(
        'INSTALLER_PATH_UNSUPPORTED',
        `cluster ${req.cluster}: the installer has no ${path} command; configure one`,
      );
    }
    const variables = this.opts.variables?.();
    for (const [i, r] of runs.entries()) {
      const mountPath = `${MOUNT_ROOT}/${r.cluster}`;
      const command = expandCommand(template, {
        ...(variables ? { extraVars: JOB_EXTRA_VARS } : {}),
        cluster: r.cluster,
        clusterDir: mountPath,
        inventory: `${mountPath}/hosts.ini`,
        plugins: r.plugins,
        nodes: r.nodes,
        podSubnet: r.podSubnet,
        kubesprayDir: this.opts.kubesprayDir,
      });
      const kubespray = usesKubespray(template) ? this.opts.kubesprayDir : undefined;
      // The same environment as a local run, with the paths the Job sees: the cluster
      // directory (known_hosts and Ansible's own files) from the state volume, the key from
      // its Secret.
      const env = {
        ...ansibleEnv({
          clusterDir: mountPath,
          privateKey: JOB_SSH_KEY,
          user: this.opts.user,
          ansibleConfig: kubespray ? posix.join(kubespray, 'ansible.cfg') : undefined,
        }),
        // The file's path, as a local run has it; the values are only in the mounted Secret.
        ...(variables ? { BPA_EXTRA_VARS: JOB_EXTRA_VARS } : {}),
      };
      // The Job sees the same directory through the state volume.
      await Promise.all(
        ansibleDirs(r.clusterDir).map((d) => mkdir(d, { recursive: true, mode: 0o700 })),
      );
      const stepName = runs.length > 1 ? `${path}-${i}` : path;
      await step.record({ job: stepName });
      const outcome = await runInstallerJob(
        this.opts.kc,
        {
          namespace: this.opts.namespace,
          cluster: r.cluster,
          planHash: r.workId,
          step: stepName,
          image: this.opts.image,
          command,
          env,
          clusterDir: {
            persistentVolumeClaim: {
              claimName: this.opts.stateClaim,
              subPath: `clusters/${r.cluster}`,
            },
          },
          mountPath,
          sshKeySecret: this.opts.sshKeySecret,
          timeoutSeconds: this.opts.timeoutSeconds,
          serviceAccountName: this.opts.serviceAccountName,
          ...(variables ? { variables } : {}),
        },
        {
          onLog: (line) => this.opts.onLine?.(`[${r.cluster}] ${line}`),
          signal: this.opts.signal,
          retryFailed: step.previous?.status === 'failed',
        },
      );
      // The Job's pod logs are kept where a local installer's would be.
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const logName = `${stepName}-job-${stamp}.log`;
      await writeFileAtomic(join(r.clusterDir, 'logs', logName), outcome.logs, 0o644);
      if (!outcome.succeeded) {
        const tail = outcome.logs.split('\n').filter(Boolean).slice(-5).join(' | ');
        const log = logId(r.cluster, logName);
        throw new InstallerError(
          'INSTALLER_FAILED',
          `installer Job ${path} for cluster ${r.cluster} failed${outcome.reason ? ` (${outcome.reason})` : ''} (log ${log}): ${outcome.message ?? tail}`,
          { log },
          'transient',
        );
      }
    }
  }
}
