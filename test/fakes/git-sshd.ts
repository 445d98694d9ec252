/**
 * A real sshd on loopback serving bare git repositories through git-shell: the SSH transport
 * of a git host, as a deploy key sees it. sshd runs as root (it must, to start sessions) with
 * its own host key, pid file and authorized_keys under a temporary directory; every session
 * is forced through `git-shell -c "$SSH_ORIGINAL_COMMAND"`, so only git-upload-pack and
 * git-receive-pack can run (git-shell as a login shell would need a new system user; the
 * forced command runs the same program without touching /etc/passwd). Keys are generated at
 * test time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface GitSshd {
  /** 127.0.0.1 and the port sshd listens on. */
  readonly host: string;
  readonly port: number;
  /** A second loopback address on which sshd listens on port 22 (for scp-like URLs), if bound. */
  readonly scpHost?: string;
  /** known_hosts naming this server (both addresses). */
  readonly knownHosts: string;
  /** The deploy key authorized on the server, and a key that is not. */
  readonly clientKey: string;
  readonly otherKey: string;
  readonly user: string;
  /** ssh://user@127.0.0.1:port/abs/path */
  url(barePath: string): string;
  /** user@scpHost:/abs/path (port 22) */
  scpUrl(barePath: string): string;
  /** Restarts sshd on the same addresses with a new host key (a changed server). */
  changeHostKey(): Promise<void>;
  pid(): number | undefined;
  stop(): Promise<void>;
}

/** Why the SSH git server cannot run here, or undefined when it can. */
export function cannotRunGitSshd(): string | undefined {
  if (process.getuid?.() !== 0) return 'sshd must start as root to open sessions';
  for (const bin of ['/usr/sbin/sshd', '/usr/bin/ssh-keygen', '/usr/bin/git-shell'])
    if (!existsSync(bin)) return `${bin} is not installed (scripts/install-system-deps.sh)`;
  return undefined;
}

function keygen(file: string): void {
  const r = spawnSync('ssh-keygen', [
    '-q',
    '-t',
    'ed25519',
    '-N',
    '',
    '-C',
    'bpa-test',
    '-f',
    file,
  ]);
  if (r.status !== 0) throw new Error(`ssh-keygen: ${r.stderr.toString()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function startGitSshd(dir: string): Promise<GitSshd> {
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const user = 'root';
  const hostKey = join(dir, 'ssh_host_ed25519_key');
  const clientKey = join(dir, 'deploy_key');
  const otherKey = join(dir, 'other_key');
  for (const k of [hostKey, clientKey, otherKey]) keygen(k);
  await writeFile(join(dir, 'authorized_keys'), await readFile(`${clientKey}.pub`, 'utf8'));
  const port = await freePort();
  const host = '127.0.0.1';
  const scpHost = `127.${20 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  const config = join(dir, 'sshd_config');
  const pidFile = join(dir, 'sshd.pid');
  const log = join(dir, 'sshd.log');
  await writeFile(
    config,
    `ListenAddress ${host}:${port}
ListenAddress ${scpHost}:22
HostKey ${hostKey}
PidFile ${pidFile}
AuthorizedKeysFile ${join(dir, 'authorized_keys')}
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UseDNS no
PrintMotd no
ForceCommand /usr/bin/git-shell -c "$SSH_ORIGINAL_COMMAND"
`,
  );
  const knownHosts = join(dir, 'known_hosts');
  const writeKnownHosts = async (): Promise<void> => {
    const pub = (await readFile(`${hostKey}.pub`, 'utf8'))
      .trim()
      .split(/\s+/)
      .slice(0, 2)
      .join(' ');
    await writeFile(knownHosts, `[${host}]:${port} ${pub}\n${scpHost} ${pub}\n`);
  };
  await writeKnownHosts();

  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    await rm(pidFile, { force: true });
    const proc = spawn('/usr/sbin/sshd', ['-D', '-f', config, '-E', log], { stdio: 'ignore' });
    child = proc;
    const deadline = Date.now() + 10_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() !== String(proc.pid)) {
      if (proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`sshd did not start: ${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stopChild = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.pid === undefined) return;
    const exited = new Promise((r) => proc.once('exit', r));
    process.kill(proc.pid, 'SIGTERM');
    await exited;
  };
  await start();
  // Another listener may hold port 22 on that address: then there is no scp-like form.
  const logText = readFileSync(log, 'utf8');
  const scpBound = !/Bind to port 22 on .* failed/.test(logText);

  return {
    host,
    port,
    ...(scpBound ? { scpHost } : {}),
    knownHosts,
    clientKey,
    otherKey,
    user,
    url: (p) => `ssh://${user}@${host}:${port}${p}`,
    scpUrl: (p) => `${user}@${scpHost}:${p}`,
    async changeHostKey() {
      await stopChild();
      await rm(hostKey, { force: true });
      await rm(`${hostKey}.pub`, { force: true });
      keygen(hostKey);
      await start();
    },
    pid: () => child?.pid,
    stop: stopChild,
  };
}
