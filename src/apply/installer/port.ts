import { access, mkdir, open, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BpaError, InstallerError, StalledError } from '../../util/errors.js';
import { logId } from '../../state/logs.js';
import type { Logger } from '../../util/log.js';
import { redact } from '../../util/redact.js';
import { excerpt } from '../../util/tail.js';
import type { InstallerPath, InstallerPort, InstallerRequest, StepHandle } from '../ports.js';
import { killProcessGroup } from '../../util/proc.js';
import { expandCommand, findRunningInstaller, runLocalInstaller } from './local.js';
import { ansibleDirs, ansibleEnv } from './ansible-env.js';
import { usesKubespray } from './command.js';

import type { InstallerCommands } from '../../config/execution.js';

export interface LocalInstallerOptions {
  commands: InstallerCommands;
  timeoutMs: number;
  /** bpa's private key and SSH user, handed to Ansible (see ansibleEnv). */
  privateKey: string;
  user: string;
  /** The Kubespray checkout, absolute ('' or absent: none). */
  kubesprayDir?: string;
  /** More environment for the installer. */
  env?: Record<string, string>;
  /**
   * Installer variables (a decrypted site Secret): written for each run to a 0600 JSON file
   * in the cluster directory (`{extraVars}`, BPA_EXTRA_VARS) and removed when the run ends.
   */
  variables?: () => Readonly<Record<string, string>> | undefined;
  log: Logger;
  /** Live output lines, already prefixed with `[cluster] `. */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  now?: () => Date;
}

/**
 * Runs installer paths as local processes in KUD's layout: `<clusterDir>/hosts.ini`,
 * `<clusterDir>/artifacts/`, logs in `<clusterDir>/logs/`. An installer left running by a
 * bpa that was killed is found through its PID file and stopped before the step runs again:
 * its output pipe died with that bpa, so its outcome cannot be known, and the installer is
 * idempotent by contract.
 */
/** The run's extra-vars file in the cluster directory; never there between runs. */
export const EXTRA_VARS_FILE = 'bpa-extra-vars.json';

/** Written 0600 from the start: the values are readable by bpa's user only. */
async function writeExtraVars(
  path: string,
  variables: Readonly<Record<string, string>>,
): Promise<void> {
  await rm(path, { force: true });
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(JSON.stringify(variables));
  } finally {
    await handle.close();
  }
}

export class LocalInstaller implements InstallerPort {
  constructor(private readonly opts: LocalInstallerOptions) {}

  async run(path: InstallerPath, req: InstallerRequest, step: StepHandle): Promise<void> {
    const pidFile = join(req.clusterDir, 'installer.pid');
    const orphan = await findRunningInstaller(pidFile);
    if (orphan !== undefined) {
      this.opts.log.warn(
        { cluster: req.cluster, pid: orphan },
        'an installer from an interrupted run is still running; stopping it before running again',
      );
      await killProcessGroup(orphan, 10_000);
    }
    // The add-on path runs once per plugin, so `configure-{plugins}.yml` names one playbook.
    const runs = path === 'addon' ? req.plugins.map((p) => ({ ...req, plugins: [p] })) : [req];
    for (const r of runs) await this.runOnce(path, r, step, pidFile);
  }

  private async runOnce(
    path: InstallerPath,
    req: InstallerRequest,
    step: StepHandle,
    pidFile: string,
  ): Promise<void> {
    const template = this.opts.commands[path];
    if (!template) {
      throw new StalledError(
        'INSTALLER_PATH_UNSUPPORTED',
        `cluster ${req.cluster}: the installer has no ${path} command; configure one`,
      );
    }
    const clusterDir = resolve(req.clusterDir);
    const variables = this.opts.variables?.();
    const extraVars = variables ? join(clusterDir, EXTRA_VARS_FILE) : undefined;
    const argv = expandCommand(template, {
      ...(extraVars ? { extraVars } : {}),
      cluster: req.cluster,
      clusterDir,
      inventory: resolve(req.inventory),
      plugins: req.plugins,
      nodes: req.nodes,
      podSubnet: req.podSubnet,
      kubesprayDir: this.opts.kubesprayDir,
    });
    const kubespray = usesKubespray(template) ? this.opts.kubesprayDir : undefined;
    const env = {
      ...ansibleEnv({
        clusterDir,
        privateKey: resolve(this.opts.privateKey),
        user: this.opts.user,
        ansibleConfig: kubespray ? join(kubespray, 'ansible.cfg') : undefined,
      }),
      ...this.opts.env,
      ...(extraVars ? { BPA_EXTRA_VARS: extraVars } : {}),
    };
    await Promise.all(
      ansibleDirs(clusterDir).map((d) => mkdir(d, { recursive: true, mode: 0o700 })),
    );
    if (extraVars && variables) await writeExtraVars(extraVars, variables);
    try {
      await this.runCommand(path, req, step, pidFile, argv, env, variables);
    } finally {
      if (extraVars) await rm(extraVars, { force: true });
    }
  }

  private async runCommand(
    path: InstallerPath,
    req: InstallerRequest,
    step: StepHandle,
    pidFile: string,
    argv: string[],
    env: Record<string, string>,
    variables: Readonly<Record<string, string>> | undefined,
  ): Promise<void> {
    const stamp = (this.opts.now?.() ?? new Date()).toISOString().replace(/[:.]/g, '-');
    const logName = `${path}-${stamp}.log`;
    await step.record({ installer: argv[0], logName, path });
    const prefix = `[${req.cluster}] `;
    const result = await runLocalInstaller(argv, {
      cwd: req.clusterDir,
      logDir: join(req.clusterDir, 'logs'),
      logName,
      timeoutMs: this.opts.timeoutMs,
      env,
      onLine: (line) => this.opts.onLine?.(prefix + redact(line)),
      signal: this.opts.signal,
      pidFile,
      // An installer that prints a variable never writes it to its log or the page.
      ...(variables ? { secrets: Object.values(variables) } : {}),
    });
    if (result.exitCode === 0) return;
    const what = `installer ${path} for cluster ${req.cluster}`;
    const log = logId(req.cluster, logName);
    const exit = {
      ...(result.exitCode !== null ? { exitCode: result.exitCode } : {}),
      ...(result.signal ? { signal: result.signal } : {}),
      log,
    };
    // The full output stays in the log file; the message (the page, bpa's log) gets a
    // redacted end, and names the log by its id, not its path.
    const tail = excerpt(result.tail).split('\n').filter(Boolean).join(' | ');
    if (result.timedOut)
      throw new InstallerError(
        'INSTALLER_TIMEOUT',
        `${what} did not finish within ${Math.round(this.opts.timeoutMs / 1000)} s and was stopped (log ${log}): ${tail}`,
        exit,
        'transient',
      );
    if (result.aborted)
      throw new InstallerError(
        'INSTALLER_ABORTED',
        `${what} was stopped because bpa is shutting down (log ${log})`,
        exit,
        'transient',
      );
    const code =
      result.exitCode === null ? `was killed by ${result.signal}` : `exited ${result.exitCode}`;
    throw new InstallerError(
      'INSTALLER_FAILED',
      `${what} ${code} (log ${log}): ${tail}`,
      exit,
      'transient',
    );
  }
}

/** What checkCommands needs to know besides the templates. */
export interface CommandCheck {
  /** The paths the plan will run; only those are checked. */
  paths: readonly InstallerPath[];
  kubesprayDir?: string;
  /** Check the Kubespray checkout on this machine (not in job mode: it is in the image). */
  checkoutHere: boolean;
  /** The runs get an extra-vars file (Site installer.variables): `{extraVars}` has a value. */
  extraVars?: boolean;
}

/**
 * Fails early, before any host is touched, when a command the plan will run cannot be
 * expanded, or runs Kubespray from a directory that is not a Kubespray checkout.
 */
export async function checkCommands(
  commands: InstallerCommands,
  check: CommandCheck,
): Promise<void> {
  for (const path of check.paths) {
    const template = commands[path];
    if (!template) {
      throw new StalledError(
        'INSTALLER_PATH_UNSUPPORTED',
        `the plan needs the installer's ${path} path, and it has no command; configure one`,
      );
    }
    let argv: string[];
    try {
      argv = expandCommand(template, {
        cluster: 'c',
        clusterDir: '/d',
        inventory: '/d/hosts.ini',
        plugins: ['p'],
        nodes: ['n'],
        podSubnet: '10.244.64.0/18',
        kubesprayDir: check.kubesprayDir,
        ...(check.extraVars ? { extraVars: `/d/${EXTRA_VARS_FILE}` } : {}),
      });
    } catch (err: unknown) {
      if (err instanceof BpaError && err.code === 'KUBESPRAY_DIR_MISSING') throw err;
      throw new StalledError(
        'INSTALLER_COMMAND_INVALID',
        `installer ${path} command ${JSON.stringify(template)}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const dir = check.kubesprayDir;
    if (!dir || !check.checkoutHere || !usesKubespray(template)) continue;
    const needed = [
      join(dir, 'ansible.cfg'),
      ...argv.filter((a) => a.startsWith(`${dir}/`) && /\.ya?ml$/.test(a)),
    ];
    for (const file of needed) {
      try {
        await access(file);
      } catch {
        throw new StalledError(
          'KUBESPRAY_DIR_INVALID',
          `--kubespray-dir ${dir} is not a Kubespray checkout: ${file} is missing (installer ${path} command ${JSON.stringify(template)})`,
        );
      }
    }
  }
}
