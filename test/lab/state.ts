import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive, startTimeOf } from './exec.js';
import { SLOT_COUNT, slotPrefix } from './names.js';

/** Where every lab records itself, so `lab down` and stale cleanup work from another process. */
export const LABS_ROOT = '/tmp/bpa-labs';
const SLOTS_DIR = join(LABS_ROOT, '.slots');

/** One lab host, as recorded in the state file and exposed to tests. */
export interface HostState {
  index: number;
  /** Also the host's hostname and the hostname in its DHCP lease: h1, h2, … */
  name: string;
  netns: string;
  veth: string;
  mac: string;
  ip: string;
  /** sshd's port (the lab's sshPort, default 22). */
  port: number;
  /** 'static' only when DHCP failed (a warning says so) or the lab runs without DHCP. */
  addressing: 'dhcp' | 'static';
  /** `<labdir>/<name>`: keys, sshd config and log, and the host's /root and /home. */
  dir: string;
  /** The process holding the host's UTS and mount namespaces (sshd joins them). */
  holderPid: number;
  /** 0 while sshd is stopped. */
  sshdPid: number;
  /** `<type> <base64>` of the host's current ed25519 key. */
  hostKey: string;
}

export interface LabState {
  version: 1;
  id: string;
  slot: number;
  dir: string;
  bridge: string;
  gatewayIp: string;
  user: string;
  password: string;
  keyPath: string;
  /** The process whose death makes this lab stale; null for labs kept until `lab down`. */
  owner: { pid: number; startTime: number } | null;
  dnsmasqPid: number;
  withDhcp: boolean;
  authorizeKey: boolean;
  hostSetup?: string;
  /** The port every host's sshd listens on (absent: 22). */
  sshPort?: number;
  /** Hosts get their own overlays over /etc /usr /var /opt and their own /run (absent: false). */
  isolatedPackages?: boolean;
  hosts: HostState[];
  createdAt: string;
}

export const labDir = (id: string): string => join(LABS_ROOT, id);
export const statePath = (id: string): string => join(labDir(id), 'lab.json');

/** Writes the state file atomically (temp file + rename): a reader never sees half of it. */
let saveCounter = 0;

export async function saveState(state: LabState): Promise<void> {
  const path = statePath(state.id);
  const tmp = `${path}.${process.pid}.${saveCounter++}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}

export function loadState(id: string): LabState | undefined {
  try {
    return JSON.parse(readFileSync(statePath(id), 'utf8')) as LabState;
  } catch {
    return undefined;
  }
}

/** Ids of every lab directory under the root (with or without a readable state file). */
export function labIds(): string[] {
  if (!existsSync(LABS_ROOT)) return [];
  return readdirSync(LABS_ROOT).filter((name) => !name.startsWith('.'));
}

export function ownerOf(pid: number): { pid: number; startTime: number } {
  const startTime = startTimeOf(pid);
  if (startTime === undefined) throw new Error(`cannot read the start time of process ${pid}`);
  return { pid, startTime };
}

/** A lab is stale when its owner process is gone (or its PID now belongs to another process). */
export function isStale(state: LabState): boolean {
  if (state.owner === null) return false;
  return !isAlive(state.owner.pid) || startTimeOf(state.owner.pid) !== state.owner.startTime;
}

/** Creates the lab directory, failing if the id is taken. */
export async function claimLabDir(id: string): Promise<string> {
  await mkdir(LABS_ROOT, { recursive: true, mode: 0o755 });
  const dir = labDir(id);
  await mkdir(dir, { mode: 0o755 });
  return dir;
}

/**
 * Claims the lowest free /24 slot with an atomic symlink `.slots/<n> → <id>`, skipping
 * networks already configured on this machine.
 */
export async function claimSlot(id: string, prefixesInUse: Set<string>): Promise<number> {
  await mkdir(SLOTS_DIR, { recursive: true, mode: 0o755 });
  for (let slot = 0; slot < SLOT_COUNT; slot++) {
    if (prefixesInUse.has(slotPrefix(slot))) continue;
    try {
      await symlink(id, join(SLOTS_DIR, String(slot)));
      return slot;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`no free lab network left in 198.18.0.0/15 (${SLOT_COUNT} slots)`);
}

/** Slots and the lab id each one points to. */
export function slotOwners(): Map<number, string> {
  const owners = new Map<number, string>();
  if (!existsSync(SLOTS_DIR)) return owners;
  for (const name of readdirSync(SLOTS_DIR)) {
    try {
      owners.set(Number(name), readlinkSync(join(SLOTS_DIR, name)));
    } catch {
      // Removed meanwhile.
    }
  }
  return owners;
}

/** Releases a slot, only if it still belongs to `id`. */
export async function releaseSlot(slot: number, id: string): Promise<void> {
  if (slotOwners().get(slot) !== id) return;
  await unlink(join(SLOTS_DIR, String(slot))).catch(() => undefined);
}
