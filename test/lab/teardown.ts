import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { dnsmasqArgs } from './dhcp.js';
import { commandLineHas, killAndWait, run, succeeds } from './exec.js';
import { netnsPids } from './host.js';
import { bridgeName, netnsIndex, userName, vethName } from './names.js';
import { labDir, releaseSlot, type LabState } from './state.js';

/** Network namespaces of lab `id` that exist now, whether or not the state file lists them. */
async function labNamespaces(id: string): Promise<string[]> {
  const { stdout } = await run('ip', ['netns', 'list']);
  return stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => netnsIndex(id, name) !== undefined);
}

/** dnsmasq of this lab, from the state or its pid file, only if its command line proves it. */
function dnsmasqPids(state: LabState): number[] {
  const pids = new Set<number>();
  if (state.dnsmasqPid) pids.add(state.dnsmasqPid);
  const pidFile = join(state.dir, 'dnsmasq.pid');
  if (existsSync(pidFile)) pids.add(Number(readFileSync(pidFile, 'utf8').trim()));
  const leaseArg = dnsmasqArgs(state).find((a) => a.startsWith('--dhcp-leasefile=')) ?? '';
  return [...pids].filter((pid) => pid > 0 && commandLineHas(pid, leaseArg));
}

/**
 * Removes everything lab `state.id` created, from its state and from names derived from its
 * id (so a lab that crashed while starting is removed too). Each step tolerates a resource that
 * is already gone; errors are collected and thrown together at the end.
 */
export async function teardownLab(state: LabState): Promise<void> {
  const errors: string[] = [];
  const attempt = async (what: string, step: () => Promise<unknown>): Promise<void> => {
    try {
      await step();
    } catch (err) {
      errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const namespaces = await labNamespaces(state.id);
  // Every process in a lab namespace was started by the lab: holders, sshd, sessions, udhcpc.
  await Promise.all(
    namespaces.map((ns) =>
      attempt(`processes in ${ns}`, async () => killAndWait(await netnsPids(ns))),
    ),
  );
  await attempt('dnsmasq', () => killAndWait(dnsmasqPids(state)));
  await Promise.all(
    namespaces.map((ns) =>
      attempt(`namespace ${ns}`, async () => {
        // Deleting the veth first is synchronous; the kernel frees a namespace's devices lazily.
        const veth = vethName(state.id, netnsIndex(state.id, ns) ?? 0);
        if (await succeeds('ip', ['link', 'show', 'dev', veth])) {
          await run('ip', ['link', 'del', 'dev', veth]);
        }
        await run('ip', ['netns', 'del', ns]);
      }),
    ),
  );
  const bridge = bridgeName(state.id);
  if (await succeeds('ip', ['link', 'show', 'dev', bridge])) {
    await attempt('bridge', () => run('ip', ['link', 'del', 'dev', bridge]));
  }
  await attempt('user', () => removeUser(userName(state.id)));
  await attempt('slot', () => releaseSlot(state.slot, state.id));
  if (errors.length === 0) {
    await attempt('lab directory', () => rm(labDir(state.id), { recursive: true, force: true }));
  }
  if (errors.length > 0) throw new Error(`lab ${state.id} teardown: ${errors.join('; ')}`);
}

async function removeUser(user: string): Promise<void> {
  if (!(await succeeds('getent', ['passwd', user]))) return;
  await withPasswdLock(() => run('userdel', [user]));
}

/** Runs a shadow-utils command, retrying while another one holds the passwd/group lock. */
export async function withPasswdLock<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const locked = err instanceof Error && /lock|try again/i.test(err.message);
      if (!locked || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 40));
    }
  }
}
