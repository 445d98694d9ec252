/**
 * Process facts from Linux /proc and process-group signalling, for an installer that may
 * outlive the bpa process that started it.
 */
import { readFile, readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

async function readProc(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Fields of /proc/<pid>/stat after the command name (which may itself hold spaces). */
async function statFields(pid: number): Promise<string[] | undefined> {
  const stat = await readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Whether the process exists and has not ended (a zombie has ended; it waits to be reaped). */
export async function isRunning(pid: number): Promise<boolean> {
  const state = (await statFields(pid))?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** When the process started, in clock ticks since boot: with the boot id, it names a process uniquely. */
export async function startTimeOf(pid: number): Promise<string | undefined> {
  // Field 22 of stat; the fields read here start at field 3.
  return (await statFields(pid))?.[19];
}

export async function bootId(): Promise<string | undefined> {
  return (await readProc('/proc/sys/kernel/random/boot_id'))?.trim();
}

/** The process's argv as the kernel shows it (for a script: the interpreter first). */
export async function commandLineOf(pid: number): Promise<string[] | undefined> {
  const raw = await readProc(`/proc/${pid}/cmdline`);
  if (raw === undefined || raw === '') return undefined;
  return raw.replace(/\0$/, '').split('\0');
}

/**
 * The live (not zombie) processes of a process group. Zombies are skipped: an orphan waits for
 * whichever process adopted it to reap it, and is harmless meanwhile.
 */
export async function groupMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = await statFields(Number(entry));
    // Field 5 of stat is the process group.
    if (fields?.[2] === String(pgid) && fields[0] !== 'Z' && fields[0] !== 'X') {
      members.push(Number(entry));
    }
  }
  return members;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(100, Math.max(10, deadline - Date.now())));
  }
}

/**
 * Ends a whole process group (an installer and everything it started): SIGTERM, then SIGKILL to
 * whatever is left after `graceMs`. Resolves true once no process of the group is left.
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!Number.isInteger(pgid) || pgid <= 1)
    throw new Error(`refusing to signal process group ${pgid}`);
  signalGroup(pgid, 'SIGTERM');
  const gone = async (): Promise<boolean> => (await groupMembers(pgid)).length === 0;
  if (await waitUntil(gone, graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitUntil(gone, 5_000);
}

/**
 * Waits for a process that is not necessarily our child (one started by an earlier bpa) to
 * end. Resolves true once it has ended, false if it still runs after `timeoutMs`.
 */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  return waitUntil(async () => !(await isRunning(pid)), timeoutMs);
}
