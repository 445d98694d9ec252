import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canRunAptLab } from '../../lab/apt-repo.js';
import { canRunLab, type Lab } from '../../lab/lab.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BPA = join(ROOT, 'bin', 'bpa');
export const REFERENCE = join(ROOT, 'installer', 'reference', 'run.sh');
/** The Kubespray-shaped stand-in (installer/kubespray-standin/README.md). */
export const KUBESPRAY_STANDIN = join(ROOT, 'installer', 'kubespray-standin');

export interface BpaResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The flags that point bpa at a lab and the reference installer. */
export function labArgs(lab: Lab, state: string, extra: string[] = []): string[] {
  return [
    '--state',
    state,
    '--leases',
    lab.leaseFile,
    '--ssh-key',
    lab.keyPath,
    '--installer-command',
    `${REFERENCE} cluster {clusterDir} {inventory}`,
    '--scale-command',
    `${REFERENCE} scale {clusterDir} {inventory} {nodes}`,
    '--remove-command',
    `${REFERENCE} remove {clusterDir} {inventory} {nodes}`,
    '--reset-command',
    `${REFERENCE} reset {clusterDir} {inventory}`,
    '--addon-command',
    `${REFERENCE} addon {clusterDir} {inventory} {plugins}`,
    '--log-level',
    'info',
    ...extra,
  ];
}

/**
 * The flags that point bpa at a lab and a Kubespray checkout (the stand-in unless given):
 * the kubespray flavour with its default commands, nothing else.
 */
export function kubesprayArgs(
  lab: Lab,
  state: string,
  extra: string[] = [],
  kubesprayDir = KUBESPRAY_STANDIN,
): string[] {
  return [
    '--state',
    state,
    '--leases',
    lab.leaseFile,
    '--ssh-key',
    lab.keyPath,
    '--flavour',
    'kubespray',
    '--kubespray-dir',
    kubesprayDir,
    '--log-level',
    'info',
    ...extra,
  ];
}

/** What the Kubespray-shaped stand-in left on a host (`key: value` lines), or {} when nothing. */
export async function standinMarker(lab: Lab, host: string): Promise<Record<string, string>> {
  const r = await lab.exec(host, ['cat', '/etc/bpa-kubespray-standin/node']).catch(() => undefined);
  const out: Record<string, string> = {};
  for (const line of (r?.stdout ?? '').split('\n')) {
    const i = line.indexOf(': ');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 2);
  }
  return out;
}

/** Runs bin/bpa as a process (the installer sees its environment). */
export function bpa(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 240_000,
): Promise<BpaResult> {
  return new Promise((resolve) => {
    execFile(
      BPA,
      args,
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

export function spawnBpa(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(BPA, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface JournalStep {
  key: string;
  action: string;
  step: string;
  status: string;
  attempt: number;
}

export async function journal(state: string, cluster: string): Promise<JournalStep[]> {
  try {
    return (
      JSON.parse(await readFile(join(state, 'clusters', cluster, 'journal.json'), 'utf8')) as {
        steps: JournalStep[];
      }
    ).steps;
  } catch {
    return [];
  }
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function applied(state: string, cluster: string): boolean {
  return existsSync(join(state, 'clusters', cluster, 'applied.json'));
}

export async function logs(state: string, cluster: string): Promise<string[]> {
  try {
    return (await readdir(join(state, 'clusters', cluster, 'logs'))).sort();
  } catch {
    return [];
  }
}

export async function marker(lab: Lab, host: string): Promise<string> {
  const r = await lab.exec(host, ['cat', '/etc/bpa-reference/roles']).catch(() => undefined);
  return r?.stdout ?? '';
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the lab with a package database per host, the reference installer and Debian's
 * package tools can run here; prints the reason if not.
 */
export async function packageLabReady(): Promise<boolean> {
  if (!labReady(canRunLab({ isolatedPackages: true }))) return false;
  const apt = await canRunAptLab();
  if (!apt.ok) console.log(`    skipped: ${apt.reason}`);
  return apt.ok;
}

/** Whether the lab and the reference installer can run here; prints the reason if not. */
export function labReady(canRun: { ok: true } | { ok: false; reason: string }): boolean {
  if (!canRun.ok) {
    console.log(`    skipped: ${canRun.reason}`);
    return false;
  }
  if (
    !['/usr/bin/ansible-playbook', '/usr/local/bin/ansible-playbook'].some((p) => existsSync(p))
  ) {
    console.log('    skipped: ansible-playbook is not installed (Debian package ansible-core)');
    return false;
  }
  return true;
}

export async function kill(child: ChildProcess): Promise<void> {
  // Exited, or ended by a signal: 'exit' has been emitted and will not come again.
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** The PID recorded in `<clusterDir>/installer.pid`, if any. */
export async function installerPid(state: string, cluster: string): Promise<number | undefined> {
  try {
    const rec = JSON.parse(
      await readFile(join(state, 'clusters', cluster, 'installer.pid'), 'utf8'),
    ) as { pid?: unknown };
    return typeof rec.pid === 'number' ? rec.pid : undefined;
  } catch {
    return undefined;
  }
}
