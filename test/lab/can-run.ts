import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const NAMESPACE_COMMANDS = ['ip', 'dnsmasq', 'busybox', 'unshare', 'nsenter', 'mount', 'sleep'];
const ACCOUNT_COMMANDS = ['ssh-keygen', 'useradd', 'userdel', 'chpasswd', 'getent'];
const SEARCH_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function findCommand(name: string): boolean {
  const dirs = (process.env.PATH ?? '').split(':').concat(SEARCH_PATH);
  return dirs.some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function hasCapabilities(bits: number[]): boolean {
  const line = readFileSync('/proc/self/status', 'utf8').match(/^CapEff:\s*([0-9a-f]+)$/m);
  if (!line?.[1]) return false;
  const eff = BigInt(`0x${line[1]}`);
  return bits.every((bit) => ((eff >> BigInt(bit)) & 1n) === 1n);
}

/** Whether the kernel mounts overlayfs (listed once the module is loaded or built in). */
function hasOverlayfs(): boolean {
  const listed = (): boolean =>
    readFileSync('/proc/filesystems', 'utf8')
      .split('\n')
      .some((line) => line.trim().split(/\s+/).pop() === 'overlay');
  if (listed()) return true;
  spawnSync('modprobe', ['overlay'], { stdio: 'ignore' });
  return listed();
}

/** Whether this machine can run a lab, and if not, why (for a test's skip message). */
export function canRunLab(
  opts: { isolatedPackages?: boolean } = {},
): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'the lab needs Linux namespaces' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'the lab needs root' };
  // CAP_NET_ADMIN (12) for links and namespaces, CAP_SYS_ADMIN (21) for mounts and hostnames.
  if (!hasCapabilities([12, 21])) {
    return { ok: false, reason: 'the lab needs CAP_NET_ADMIN and CAP_SYS_ADMIN' };
  }
  const missing = [...NAMESPACE_COMMANDS, ...ACCOUNT_COMMANDS].filter((c) => !findCommand(c));
  if (!existsSync('/usr/sbin/sshd')) missing.push('/usr/sbin/sshd (openssh-server)');
  if (missing.length > 0) return { ok: false, reason: `missing commands: ${missing.join(', ')}` };
  const applets = spawnSync('busybox', ['--list'], { encoding: 'utf8' }).stdout ?? '';
  if (!applets.split('\n').includes('udhcpc')) {
    return { ok: false, reason: 'busybox has no udhcpc applet' };
  }
  if (spawnSync('ip', ['netns', 'list']).status !== 0) {
    return { ok: false, reason: '`ip netns list` fails: no network namespace support' };
  }
  if (opts.isolatedPackages && !hasOverlayfs()) {
    return { ok: false, reason: 'isolated package state needs overlayfs, which this kernel lacks' };
  }
  return { ok: true };
}
