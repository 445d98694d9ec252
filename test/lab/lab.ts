/**
 * A lab of SSH test hosts: each host is a network namespace on a private bridge with its own
 * MAC, hostname, DHCP lease (real dnsmasq), home directories and sshd on port 22 (or
 * sshPort). Used by the integration tests and, through cli.ts, by a person. Everything a lab creates is named after
 * its id and recorded in /tmp/bpa-labs/<id>/lab.json, so it can always be removed completely.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { canRunLab } from './can-run.js';
import { startDnsmasq, writeUdhcpcScript } from './dhcp.js';
import { run, type RunResult } from './exec.js';
import { writeHolderScript } from './host.js';
import {
  LAB_ID_PATTERN,
  MAX_HOSTS,
  bridgeName,
  gatewayIp,
  randomLabId,
  userName,
} from './names.js';
import { RunningLab, contextOf } from './running-lab.js';
import {
  claimLabDir,
  claimSlot,
  isStale,
  labDir,
  labIds,
  loadState,
  ownerOf,
  releaseSlot,
  saveState,
  slotOwners,
  type HostState,
  type LabState,
} from './state.js';
import { teardownLab, withPasswdLock } from './teardown.js';

export { canRunLab } from './can-run.js';

export type LabHost = HostState;

export interface Lab {
  id: string;
  dir: string;
  bridge: string;
  gatewayIp: string;
  hosts: LabHost[];
  /** The lease file dnsmasq writes: `<expiry> <mac> <ip> <hostname> <client-id>` per line. */
  leaseFile: string;
  /** Private key bpa uses (root's authorized key on every host unless authorizeKey: false). */
  keyPath: string;
  publicKey: string;
  /** Host name → current host key, `ssh-ed25519 AAAA…`. */
  knownHostKeys: Record<string, string>;
  /** A known_hosts file for every host (`<ip> <key>`), kept current. */
  knownHostsPath: string;
  /** Password-login test user (exists on every host, with a per-host home). */
  user: string;
  password: string;
  /** Anything that did not go as designed but still left a usable lab (e.g. a static fallback). */
  warnings: string[];
  stop(): Promise<void>;
  /** Stops the listener (new connections are refused); `killSessions` also ends open sessions. */
  stopSshd(host: string, opts?: { killSessions?: boolean }): Promise<void>;
  startSshd(host: string): Promise<void>;
  /** New host key; sshd is restarted with it if it was running. */
  rotateHostKey(host: string): Promise<void>;
  addHost(): Promise<LabHost>;
  /** Cuts (or restores) the host's link to the bridge: it becomes unreachable, not refusing. */
  setLink(host: string, up: boolean): Promise<void>;
  /** Runs a command as root inside the host (its network, UTS and mount namespaces). */
  exec(host: string, argv: string[]): Promise<RunResult>;
  /** Whether hosts have their own package state (see StartLabOptions.isolatedPackages). */
  readonly isolatedPackages: boolean;
}

export interface StartLabOptions {
  hosts: number;
  id?: string;
  /** Default true: bpa's key is pre-installed for root on every host. */
  authorizeKey?: boolean;
  /** Default true: addresses from dnsmasq; false: static addresses. */
  withDhcp?: boolean;
  /** Default false: the lab belongs to this process and is stale once it dies. True: kept until stopped. */
  keep?: boolean;
  /**
   * A shell script run as root inside each new host's namespaces before sshd starts (env:
   * BPA_LAB_ID, BPA_LAB_HOST, BPA_LAB_HOST_DIR); mounts it makes are private to the host.
   */
  hostSetup?: string;
  /** The port of every host's sshd (default 22; nothing listens on 22 otherwise). */
  sshPort?: number;
  /**
   * Default false. True: every host writes /etc, /usr, /var and /opt through its own overlay
   * (upper directories in `<host dir>/overlay/`) and has its own /run, so apt-get and dpkg on
   * one host change only that host. The hook runs after these mounts.
   */
  isolatedPackages?: boolean;
}

/** /24 prefixes ("a.b.c") of IPv4 addresses already configured on this machine. */
async function prefixesInUse(): Promise<Set<string>> {
  const { stdout } = await run('ip', ['-4', '-o', 'addr', 'show']);
  const prefixes = new Set<string>();
  for (const m of stdout.matchAll(/inet (\d+\.\d+\.\d+)\.\d+\//g)) if (m[1]) prefixes.add(m[1]);
  return prefixes;
}

async function createUser(state: LabState): Promise<void> {
  const args = ['-M', '-d', `/home/${state.user}`, '-s', '/bin/sh'];
  args.push('-c', `bpa test lab ${state.id}`, state.user);
  await withPasswdLock(() => run('useradd', args));
  await withPasswdLock(() => run('chpasswd', [], { input: `${state.user}:${state.password}\n` }));
}

/** bpa's key pair for this lab; the private key never leaves the lab directory. */
async function generateLabKey(state: LabState): Promise<void> {
  const comment = `bpa-lab-${state.id}`;
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', state.keyPath]);
}

async function createBridge(state: LabState): Promise<void> {
  await run('ip', ['link', 'add', state.bridge, 'type', 'bridge']);
  await run('ip', ['addr', 'add', `${state.gatewayIp}/24`, 'dev', state.bridge]);
  await run('ip', ['link', 'set', state.bridge, 'up']);
}

async function claimId(requested: string | undefined): Promise<{ id: string; dir: string }> {
  if (requested !== undefined) {
    if (!LAB_ID_PATTERN.test(requested)) {
      throw new Error(`lab id ${JSON.stringify(requested)} must be 1-6 of [a-z0-9]`);
    }
    try {
      return { id: requested, dir: await claimLabDir(requested) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new Error(`lab ${requested} exists already (lab down --id ${requested})`);
      }
      throw err;
    }
  }
  for (let attempt = 0; ; attempt++) {
    const id = randomLabId();
    try {
      return { id, dir: await claimLabDir(id) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 20) throw err;
    }
  }
}

/** Starts a lab of `hosts` hosts, in parallel; on any failure removes what it created and throws. */
export async function startLab(opts: StartLabOptions): Promise<Lab> {
  const check = canRunLab({ isolatedPackages: opts.isolatedPackages ?? false });
  if (!check.ok) throw new Error(`cannot run the test lab: ${check.reason}`);
  if (!Number.isInteger(opts.hosts) || opts.hosts < 0 || opts.hosts > MAX_HOSTS) {
    throw new Error(`hosts must be an integer from 0 to ${MAX_HOSTS}`);
  }
  const port = opts.sshPort ?? 22;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`sshPort must be a TCP port, not ${port}`);
  }
  await cleanupStaleLabs().catch(() => undefined);
  const { id, dir } = await claimId(opts.id);
  let slot: number;
  try {
    slot = await claimSlot(id, await prefixesInUse());
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const state: LabState = {
    version: 1,
    id,
    slot,
    dir,
    bridge: bridgeName(id),
    gatewayIp: gatewayIp(slot),
    user: userName(id),
    password: randomBytes(12).toString('base64url'),
    keyPath: join(dir, 'id_ed25519'),
    owner: opts.keep ? null : ownerOf(process.pid),
    dnsmasqPid: 0,
    withDhcp: opts.withDhcp ?? true,
    authorizeKey: opts.authorizeKey ?? true,
    hosts: [],
    createdAt: new Date().toISOString(),
  };
  if (opts.hostSetup !== undefined) state.hostSetup = opts.hostSetup;
  if (opts.isolatedPackages) state.isolatedPackages = true;
  if (opts.sshPort !== undefined && opts.sshPort !== 22) state.sshPort = opts.sshPort;
  await saveState(state);
  try {
    // sshd's privilege separation directory; the system sshd would create it too.
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
    await Promise.all([
      generateLabKey(state),
      createUser(state),
      createBridge(state),
      writeUdhcpcScript(state),
      writeHolderScript(state),
    ]);
    if (state.withDhcp) state.dnsmasqPid = await startDnsmasq(state);
    await saveState(state);
    const lab = new RunningLab(state, await contextOf(state), []);
    const limit = pLimit(10);
    await Promise.all(
      Array.from({ length: opts.hosts }, (_, i) => limit(() => lab.createHostAt(i + 1))),
    );
    await lab.persist();
    return lab;
  } catch (err) {
    await teardownLab(state).catch(() => undefined);
    throw err;
  }
}

/** A Lab handle on a running lab started elsewhere (e.g. by `lab up`), from its state file. */
export async function openLab(id: string): Promise<Lab> {
  const state = loadState(id);
  if (!state) throw new Error(`no lab ${id} (no ${join(labDir(id), 'lab.json')})`);
  return new RunningLab(state, await contextOf(state), []);
}

/** Tears down lab `id` from its state file (used by `lab down`; works from any process). */
export async function stopLabById(id: string): Promise<void> {
  const state = loadState(id);
  if (!state) throw new Error(`no lab ${id} (no ${join(labDir(id), 'lab.json')})`);
  await teardownLab(state);
}

export interface LabSummary {
  id: string;
  hosts: number;
  network: string;
  ownerPid: number | null;
  stale: boolean;
  createdAt: string;
}

export function listLabs(): LabSummary[] {
  const labs: LabSummary[] = [];
  for (const id of labIds()) {
    const state = loadState(id);
    if (!state) continue;
    labs.push({
      id,
      hosts: state.hosts.length,
      network: `${state.gatewayIp.replace(/\.1$/, '.0')}/24`,
      ownerPid: state.owner?.pid ?? null,
      stale: isStale(state),
      createdAt: state.createdAt,
    });
  }
  return labs;
}

/**
 * Removes labs whose owner process has died (a test killed mid-run), lab directories that never
 * got a state file, and slots whose lab is gone. Returns the ids of the labs removed.
 */
export async function cleanupStaleLabs(): Promise<string[]> {
  const removed: string[] = [];
  const errors: string[] = [];
  for (const id of labIds()) {
    const state = loadState(id);
    if (!state) {
      // A lab writes its state right after creating its directory; give a starting lab time.
      const stat = statSync(labDir(id), { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > 60_000) {
        await rm(labDir(id), { recursive: true, force: true });
      }
      continue;
    }
    if (!isStale(state)) continue;
    try {
      await teardownLab(state);
      removed.push(id);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  for (const [slot, id] of slotOwners()) {
    if (!existsSync(labDir(id))) await releaseSlot(slot, id);
  }
  if (errors.length > 0) throw new Error(errors.join('; '));
  return removed;
}
