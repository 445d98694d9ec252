import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { chown, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireLease } from './dhcp.js';
import {
  commandLineHas,
  isAlive,
  killAndWait,
  run,
  spawnDetached,
  tail,
  waitFor,
  type RunResult,
} from './exec.js';
import { HOLDER_SCRIPT, hostPaths, sshdConfig } from './host-files.js';
import { hostMac, hostName, netnsName, staticIp, vethName } from './names.js';
import type { HostState, LabState } from './state.js';

/** What creating a host needs beyond the lab state. */
export interface HostContext {
  uid: number;
  gid: number;
  publicKey: string;
  holderScript: string;
  warn: (message: string) => void;
}

export const holderScriptPath = (state: LabState): string => join(state.dir, 'holder.sh');

export async function writeHolderScript(state: LabState): Promise<string> {
  const path = holderScriptPath(state);
  await writeFile(path, HOLDER_SCRIPT, { mode: 0o755 });
  return path;
}

/** Creates a host: netns and veth on the bridge, keys, namespaces, an address, then sshd. */
export async function createHost(
  state: LabState,
  index: number,
  ctx: HostContext,
): Promise<HostState> {
  const name = hostName(index);
  const host: HostState = {
    index,
    name,
    netns: netnsName(state.id, index),
    veth: vethName(state.id, index),
    mac: hostMac(state.slot, index),
    ip: '',
    port: state.sshPort ?? 22,
    addressing: 'dhcp',
    dir: join(state.dir, name),
    holderPid: 0,
    sshdPid: 0,
    hostKey: '',
  };
  const p = hostPaths(host.dir);
  const userHome = join(p.home, state.user);
  await mkdir(join(p.root, '.ssh'), { recursive: true, mode: 0o700 });
  await mkdir(userHome, { recursive: true, mode: 0o755 });
  await chown(userHome, ctx.uid, ctx.gid);
  if (state.authorizeKey) {
    await writeFile(join(p.root, '.ssh', 'authorized_keys'), `${ctx.publicKey}\n`, { mode: 0o600 });
  }

  const [, hostKey] = await Promise.all([plugIn(state, host), generateHostKey(host)]);
  host.hostKey = hostKey;
  const [holderPid, leased] = await Promise.all([
    startHolder(state, host, ctx.holderScript),
    state.withDhcp ? acquireLease(state, host) : Promise.resolve(undefined),
  ]);
  host.holderPid = holderPid;
  if (leased !== undefined) {
    host.ip = leased;
  } else {
    host.ip = staticIp(state.slot, index);
    host.addressing = 'static';
    if (state.withDhcp)
      ctx.warn(`${name}: no DHCP lease (see ${host.dir}/udhcpc.log); static ${host.ip}`);
    await run('ip', ['-n', host.netns, 'addr', 'add', `${host.ip}/24`, 'dev', 'eth0']);
  }
  await writeFile(
    p.sshdConfig,
    sshdConfig({ labId: state.id, name, ip: host.ip, port: host.port, dir: host.dir }),
  );
  host.sshdPid = await startSshd(host);
  return host;
}

/** A network namespace whose eth0 (with the host's MAC) is the far end of a veth on the bridge. */
async function plugIn(state: LabState, host: HostState): Promise<void> {
  await run('ip', ['netns', 'add', host.netns]);
  const peer = ['peer', 'name', 'eth0', 'address', host.mac, 'netns', host.netns];
  await run('ip', ['link', 'add', host.veth, 'type', 'veth', ...peer]);
  await run('ip', ['link', 'set', host.veth, 'master', state.bridge, 'up']);
  await run('ip', ['-n', host.netns, 'link', 'set', 'lo', 'up']);
  await run('ip', ['-n', host.netns, 'link', 'set', 'eth0', 'up']);
}

/** Generates a fresh ed25519 host key (replacing the old one atomically); returns `type base64`. */
export async function generateHostKey(host: HostState): Promise<string> {
  const { hostKey } = hostPaths(host.dir);
  const tmp = `${hostKey}.new`;
  await rm(tmp, { force: true });
  await rm(`${tmp}.pub`, { force: true });
  await run('ssh-keygen', [
    '-q',
    '-t',
    'ed25519',
    '-N',
    '',
    '-C',
    `${host.name}@bpa-lab`,
    '-f',
    tmp,
  ]);
  await rename(`${tmp}.pub`, `${hostKey}.pub`);
  await rename(tmp, hostKey);
  const pub = await readFile(`${hostKey}.pub`, 'utf8');
  return pub.trim().split(/\s+/).slice(0, 2).join(' ');
}

/**
 * Starts the process that owns the host's UTS and mount namespaces (inside its network
 * namespace) and waits until the holder script has set them up.
 */
function startHolder(state: LabState, host: HostState, script: string): Promise<number> {
  const { holderLog } = hostPaths(host.dir);
  const fd = openSync(holderLog, 'a');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BPA_LAB_HOST: host.name,
    BPA_LAB_HOST_DIR: host.dir,
    BPA_LAB_ID: state.id,
    BPA_LAB_SETUP: state.hostSetup ?? '',
    BPA_LAB_ISOLATE: state.isolatedPackages ? '1' : '',
  };
  const args = ['netns', 'exec', host.netns, 'unshare', '--uts', '--mount'];
  args.push('--propagation', 'private', 'sh', script);
  const child = spawn('ip', args, { detached: true, stdio: ['ignore', 'pipe', fd], env });
  closeSync(fd);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail('timed out after 20 s'), 20_000);
    const fail = (why: string): void => {
      clearTimeout(timer);
      const log = existsSync(holderLog) ? tail(readFileSync(holderLog, 'utf8')) : '';
      reject(new Error(`${host.name}: namespace setup failed (${why})${log ? `: ${log}` : ''}`));
    };
    child.on('error', (err) => fail(err.message));
    child.on('exit', (code, signal) => fail(`exit ${code ?? signal}`));
    child.stdout?.on('data', (d: Buffer) => {
      if (!d.toString().includes('ready') || child.pid === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout?.destroy();
      child.unref();
      resolve(child.pid);
    });
  });
}

/** Starts sshd inside the host's namespaces; resolves with its PID once it listens. */
export async function startSshd(host: HostState): Promise<number> {
  const p = hostPaths(host.dir);
  if (host.sshdPid && isAlive(host.sshdPid) && commandLineHas(host.sshdPid, p.sshdConfig)) {
    return host.sshdPid;
  }
  if (!isAlive(host.holderPid)) throw new Error(`${host.name}: the host's namespaces are gone`);
  await rm(p.sshdPid, { force: true });
  const args = ['--target', String(host.holderPid), '--uts', '--mount', '--net'];
  args.push('/usr/sbin/sshd', '-D', '-f', p.sshdConfig, '-E', p.sshdLog);
  const proc = spawnDetached('nsenter', args, p.sshdLog);
  // sshd writes its pid file only after its listening socket is bound.
  await waitFor(`${host.name}: sshd to listen`, 10_000, () => {
    const exited = proc.exited();
    if (exited !== undefined) {
      throw new Error(
        `${host.name}: sshd ended (${exited}): ${tail(readFileSync(p.sshdLog, 'utf8'))}`,
      );
    }
    const written = existsSync(p.sshdPid) ? readFileSync(p.sshdPid, 'utf8').trim() : '';
    return written === String(proc.pid) ? true : undefined;
  });
  return proc.pid;
}

/** Stops the host's sshd listener; with `killSessions`, also every process its sessions started. */
export async function stopSshd(host: HostState, killSessions: boolean): Promise<void> {
  const pids: number[] = [];
  if (host.sshdPid && commandLineHas(host.sshdPid, hostPaths(host.dir).sshdConfig)) {
    pids.push(host.sshdPid);
  }
  if (killSessions) {
    for (const pid of await netnsPids(host.netns)) {
      if (pid !== host.holderPid && !pids.includes(pid)) pids.push(pid);
    }
  }
  await killAndWait(pids);
  host.sshdPid = 0;
}

/** PIDs of every process in a network namespace (all of them started by the lab). */
export async function netnsPids(netns: string): Promise<number[]> {
  const { stdout } = await run('ip', ['netns', 'pids', netns]);
  return stdout.split(/\s+/).filter(Boolean).map(Number);
}

/** Runs a command inside the host (its network, UTS and mount namespaces) as root. */
export function execInHost(host: HostState, argv: string[]): Promise<RunResult> {
  const args = ['--target', String(host.holderPid), '--uts', '--mount', '--net', '--'];
  return run('nsenter', args.concat(argv), { env: { ...process.env, HOME: '/root' } });
}
