import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** A lab command that failed: the command line, how it ended and the tail of its stderr. */
export class LabCommandError extends Error {
  override readonly name = 'LabCommandError';
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly signal: string | null,
    readonly stderrTail: string,
  ) {
    const how = exitCode !== null ? `exit ${exitCode}` : `signal ${signal ?? '?'}`;
    super(`${command}: ${how}${stderrTail ? `: ${stderrTail}` : ''}`);
  }
}

export interface RunOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** The last few lines of a text, trimmed, for error messages. */
export function tail(text: string, lines = 5): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** Runs a command to completion; rejects with LabCommandError unless it exits 0. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const line = [cmd, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 30_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => reject(new LabCommandError(line, null, null, err.message)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new LabCommandError(line, code, signal, tail(stderr)));
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Runs a command and reports only whether it exited 0 (for existence probes). */
export async function succeeds(cmd: string, args: string[]): Promise<boolean> {
  try {
    await run(cmd, args);
    return true;
  } catch {
    return false;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 10 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Starts a long-lived process that outlives this one (the CLI exits while the lab keeps
 * running): its own process group, stdout/stderr appended to `logFile`, not referenced by the
 * event loop. The returned child still reports an early exit through `exited`.
 */
export function spawnDetached(
  cmd: string,
  args: string[],
  logFile: string,
  env?: NodeJS.ProcessEnv,
): { child: ChildProcess; pid: number; exited: () => string | undefined } {
  const fd = openSync(logFile, 'a');
  let exitInfo: string | undefined;
  let child: ChildProcess;
  try {
    child = spawn(cmd, args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: env ?? process.env,
    });
  } finally {
    closeSync(fd);
  }
  child.on('error', (err) => (exitInfo = err.message));
  child.on(
    'exit',
    (code, signal) => (exitInfo = code !== null ? `exit ${code}` : `signal ${signal}`),
  );
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${cmd}`);
  return { child, pid: child.pid, exited: () => exitInfo };
}

/** The process state letter from /proc, or undefined if there is no such process. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Whether a process exists and is not a zombie (orphans may wait a while to be reaped). */
export function isAlive(pid: number): boolean {
  const state = procState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** The kernel start time of a process (clock ticks since boot), to tell a reused PID apart. */
export function startTimeOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 22 of stat; the slice starts at field 3.
    const value = Number(fields[19]);
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a live process's command line contains `needle` (guards against reused PIDs). */
export function commandLineHas(pid: number, needle: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(needle);
  } catch {
    return false;
  }
}

/** Sends SIGTERM to each PID, waits up to `graceMs` for them to die, then SIGKILLs the rest. */
export async function killAndWait(pids: number[], graceMs = 2000): Promise<void> {
  const signal = (pid: number, sig: NodeJS.Signals): void => {
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  };
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pids.some(isAlive) && Date.now() < deadline) await sleep(10);
  const left = pids.filter(isAlive);
  for (const pid of left) signal(pid, 'SIGKILL');
  if (left.length > 0) {
    await waitFor('processes to die after SIGKILL', 5000, () =>
      left.some(isAlive) ? undefined : true,
    );
  }
}
