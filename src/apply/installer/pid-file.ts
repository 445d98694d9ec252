/**
 * The record of a running installer, so that a bpa restarted after a crash can tell whether the
 * installer it started is still at work. A PID alone is not enough: after the installer ends,
 * the kernel may give the number to any other process, and after a reboot every number is
 * reused. The record therefore holds the boot id, the kernel start time and the command line.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { bootId, commandLineOf, isRunning, startTimeOf } from '../../util/proc.js';

interface PidRecord {
  pid: number;
  bootId: string;
  startTime: string;
  /** argv as /proc showed it just after the start (a script's interpreter included). */
  cmdline: string[];
  startedAt: string;
}

function parseRecord(text: string): PidRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const strings = (v: unknown): v is string[] =>
    Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (
    typeof r.pid !== 'number' ||
    !Number.isInteger(r.pid) ||
    r.pid <= 1 ||
    typeof r.bootId !== 'string' ||
    typeof r.startTime !== 'string' ||
    !strings(r.cmdline) ||
    typeof r.startedAt !== 'string'
  ) {
    return undefined;
  }
  return {
    pid: r.pid,
    bootId: r.bootId,
    startTime: r.startTime,
    cmdline: r.cmdline,
    startedAt: r.startedAt,
  };
}

/**
 * Records a just-started process. Called right after spawn: the child has then already
 * replaced itself with the installer program, so /proc shows the installer's command line.
 */
export async function writePidFile(path: string, pid: number, startedAt: Date): Promise<void> {
  const [boot, startTime, cmdline] = await Promise.all([
    bootId(),
    startTimeOf(pid),
    commandLineOf(pid),
  ]);
  if (boot === undefined || startTime === undefined || cmdline === undefined) {
    throw new Error(`process ${pid} ended before it could be recorded in ${path}`);
  }
  const record: PidRecord = {
    pid,
    bootId: boot,
    startTime,
    cmdline,
    startedAt: startedAt.toISOString(),
  };
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}

export async function removePidFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

const sameArgv = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((s, i) => s === b[i]);

/**
 * The PID of the installer recorded in `pidFile` if that very process still runs: same boot,
 * same start time and the same command line as when it was started. Undefined otherwise
 * (no file, an unreadable one, the process gone, or its PID now used by another process).
 * An installer that exec()s another program after starting changes its command line and is
 * then reported as gone.
 */
export async function findRunningInstaller(pidFile: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(pidFile, 'utf8');
  } catch {
    return undefined;
  }
  const record = parseRecord(text);
  if (record === undefined) return undefined;
  const { pid } = record;
  if (!(await isRunning(pid))) return undefined;
  const [boot, startTime, cmdline] = await Promise.all([
    bootId(),
    startTimeOf(pid),
    commandLineOf(pid),
  ]);
  if (boot !== record.bootId || startTime !== record.startTime) return undefined;
  if (cmdline === undefined || !sameArgv(cmdline, record.cmdline)) return undefined;
  return pid;
}
