/**
 * Runs a cluster installer (KUD, Kubespray, the reference playbook) as a local process: in
 * its own process group so a timeout ends everything it started, its output appended to a
 * log file in the cluster directory and passed on line by line, never through a shell.
 */
import type { WriteStream } from 'node:fs';
import { mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BpaError, StalledError, messageOf } from '../../util/errors.js';
import { masker } from '../../util/redact.js';
import { waitForExit } from '../../util/proc.js';
import { SpawnError, startProcess, type RunningProcess } from '../../util/run-process.js';
import { removePidFile, writePidFile } from './pid-file.js';

export { expandCommand, type InstallerVars } from './command.js';

/** How long an installer whose PID could not be recorded may take to end before it is stopped. */
const RECORD_GRACE_MS = 5_000;
export { findRunningInstaller } from './pid-file.js';

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Ended because the caller's AbortSignal fired. */
  aborted: boolean;
  logFile: string;
  durationMs: number;
  /** The last lines of output, for errors and the status report. */
  tail: string;
}

export interface RunOptions {
  /** The cluster directory. */
  cwd: string;
  /** `<clusterDir>/logs`; created if missing. */
  logDir: string;
  /** A plain file name, e.g. `provision-cluster-<timestamp>.log`. */
  logName: string;
  timeoutMs: number;
  /** Added to (overriding) the environment bpa runs with. */
  env?: Record<string, string>;
  /** Each output line, already redacted; the caller adds the `[cluster] ` prefix. */
  onLine?: (line: string) => void;
  /** Ends the installer (its whole process group) when fired. */
  signal?: AbortSignal;
  /** Where to record the child's PID, for findRunningInstaller after a restart of bpa. */
  pidFile?: string;
  /** Strings masked as `***` wherever they appear in the output (passwords, tokens). */
  secrets?: string[];
  /** Between SIGTERM and SIGKILL when the installer is ended; default 5 s. */
  killGraceMs?: number;
}

const TAIL_LINES = 20;
const LOG_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

async function checkCwd(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new StalledError('INSTALLER_CWD_MISSING', `cluster directory ${cwd} does not exist`);
  }
}

/** Why the program could not be started, as a BpaError the report can show. */
function startError(program: string, err: unknown): BpaError {
  const code = err instanceof SpawnError ? err.code : undefined;
  if (code === 'ENOENT') {
    return new StalledError(
      'INSTALLER_NOT_FOUND',
      `installer program ${JSON.stringify(program)} not found (is it installed, and on PATH or given by an absolute path?)`,
      { cause: err },
    );
  }
  if (code === 'EACCES') {
    return new StalledError(
      'INSTALLER_NOT_EXECUTABLE',
      `installer program ${JSON.stringify(program)} is not executable`,
      { cause: err },
    );
  }
  const why =
    err instanceof SpawnError && err.cause instanceof Error ? err.cause.message : messageOf(err);
  return new BpaError(
    'INSTALLER_START_FAILED',
    `installer program ${JSON.stringify(program)} could not be started: ${why}`,
    'transient',
    { cause: err },
  );
}

async function openLog(path: string): Promise<WriteStream> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'a', 0o600);
  } catch (err) {
    throw new StalledError(
      'INSTALLER_LOG_FAILED',
      `cannot write the installer log ${path}: ${messageOf(err)}`,
      {
        cause: err,
      },
    );
  }
  const stream = handle.createWriteStream();
  // A write error later (a full disk) loses log lines but must not end bpa or the installer.
  stream.on('error', () => undefined);
  return stream;
}

function endLog(log: WriteStream): Promise<void> {
  return new Promise((res) => {
    if (log.destroyed) return res();
    log.once('close', res);
    log.end();
  });
}

const describeEnd = (r: Omit<RunResult, 'tail' | 'logFile'>): string => {
  const how = r.exitCode !== null ? `exit ${r.exitCode}` : `signal ${r.signal ?? '?'}`;
  const why = r.timedOut ? ' (timed out, process group killed)' : r.aborted ? ' (aborted)' : '';
  return `${how}${why} after ${(r.durationMs / 1000).toFixed(1)} s`;
};

/**
 * Runs `argv` (from expandCommand) in `opts.cwd` and resolves when it has ended, whatever its
 * exit status: a failed install is a result for the caller to judge, not an exception. Throws
 * only when the program cannot be started (a BpaError: INSTALLER_NOT_FOUND, …). A program path
 * with a slash that is not absolute is taken relative to bpa's working directory, not the
 * cluster directory.
 */
export async function runLocalInstaller(argv: string[], opts: RunOptions): Promise<RunResult> {
  const first = argv[0];
  if (first === undefined || first === '') {
    throw new StalledError('INSTALLER_COMMAND_INVALID', 'the installer command is empty');
  }
  if (!LOG_NAME.test(opts.logName)) {
    throw new StalledError(
      'INSTALLER_COMMAND_INVALID',
      `log name ${JSON.stringify(opts.logName)} is not a plain file name`,
    );
  }
  opts.signal?.throwIfAborted();
  await checkCwd(opts.cwd);
  await mkdir(opts.logDir, { recursive: true, mode: 0o750 });
  const logFile = join(opts.logDir, opts.logName);
  // Opened before the installer starts: an installer whose log cannot be written is not run.
  const log = await openLog(logFile);
  const redact = masker(opts.secrets ?? []);
  const startedAt = new Date();
  const command = redact(argv.join(' '));
  log.write(`# bpa: ${startedAt.toISOString()} start: ${command} (in ${opts.cwd})\n`);

  const tail: string[] = [];
  let child: RunningProcess;
  try {
    child = await startProcess([first.includes('/') ? resolve(first) : first, ...argv.slice(1)], {
      cwd: opts.cwd,
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      group: true,
      killGraceMs: opts.killGraceMs ?? 5_000,
      capture: false,
      onLine: (raw) => {
        const line = redact(raw);
        log.write(`${line}\n`);
        tail.push(line);
        if (tail.length > TAIL_LINES) tail.shift();
        opts.onLine?.(line);
      },
    });
  } catch (err) {
    const failure = startError(first, err);
    log.write(`# bpa: could not start: ${failure.message}\n`);
    await endLog(log);
    throw failure;
  }

  // An installer a restarted bpa could not find might be started twice: better not run it.
  let recordError: BpaError | undefined;
  try {
    if (opts.pidFile !== undefined) await writePidFile(opts.pidFile, child.pid, startedAt);
  } catch (err) {
    // An installer that has already ended needs no record (one that is ending has lost its
    // command line but not yet its process: give it a moment, which a loaded machine can
    // stretch to seconds; its exit as Node.js sees it settles the question at once).
    const gone = await Promise.race([
      child.ended.then(() => true),
      waitForExit(child.pid, RECORD_GRACE_MS),
    ]);
    if (!gone) {
      recordError = new BpaError(
        'INSTALLER_START_FAILED',
        `could not record the installer's PID in ${opts.pidFile}: ${messageOf(err)}`,
        'transient',
        { cause: err },
      );
      log.write(`# bpa: ${recordError.message}; ending it\n`);
      child.kill();
    }
  }

  const { exitCode, signal, timedOut, aborted, durationMs } = await child.ended;
  const ended = { exitCode, signal, timedOut, aborted, durationMs };
  log.write(`# bpa: ${new Date().toISOString()} end: ${describeEnd(ended)}\n`);
  await endLog(log);
  if (opts.pidFile !== undefined) await removePidFile(opts.pidFile).catch(() => undefined);
  if (recordError) throw recordError;
  return { ...ended, logFile, tail: tail.join('\n') };
}
