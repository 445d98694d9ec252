import { join } from 'node:path';

/** Paths of one lab host's files inside its directory `<labdir>/<host>/`. */
export function hostPaths(dir: string): {
  hostKey: string;
  sshdConfig: string;
  sshdPid: string;
  sshdLog: string;
  holderLog: string;
  root: string;
  home: string;
} {
  return {
    hostKey: join(dir, 'ssh_host_ed25519_key'),
    sshdConfig: join(dir, 'sshd_config'),
    sshdPid: join(dir, 'sshd.pid'),
    sshdLog: join(dir, 'sshd.log'),
    holderLog: join(dir, 'holder.log'),
    // Bind-mounted over /root and /home inside the host: each host has its own home
    // directories, so keys installed on one host (ssh-copy-id style) never appear on another.
    root: join(dir, 'root'),
    home: join(dir, 'home'),
  };
}

/** sshd_config of one lab host: its own address, key, pid file, and per-host home directories. */
export function sshdConfig(opts: {
  labId: string;
  name: string;
  ip: string;
  port?: number;
  dir: string;
}): string {
  const p = hostPaths(opts.dir);
  return `# bpa test lab ${opts.labId}, host ${opts.name}
Port ${opts.port ?? 22}
ListenAddress ${opts.ip}
HostKey ${p.hostKey}
PidFile ${p.sshdPid}
# Relative to the user's home, which is the host's own directory (see hostPaths).
AuthorizedKeysFile .ssh/authorized_keys
# Lab files live under /tmp, which StrictModes would reject.
StrictModes no
# Without PAM, sshd checks passwords against /etc/shadow itself.
UsePAM no
PermitRootLogin yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UseDNS no
PrintMotd no
PrintLastLog no
# Installers open many connections at once.
MaxStartups 200:30:400
MaxSessions 100
LoginGraceTime 30
Subsystem sftp internal-sftp
LogLevel VERBOSE
`;
}

/**
 * Directories an isolated host writes through its own overlay: everything dpkg and apt change
 * (the dpkg database, apt lists and cache, ucf, debconf, backups and logs live under /var; /bin,
 * /sbin and /lib are links into /usr on current Debian). /tmp stays shared, since the lab's own
 * files live there, and an overlay whose upper directory lies inside its lower one cannot be
 * walked through.
 */
export const ISOLATED_DIRS = ['/etc', '/usr', '/var', '/opt'] as const;

/**
 * Runs inside a host's new UTS and mount namespaces (within its network namespace): names the
 * host, gives it private /root and /home (and, when isolated, its own overlays over the package
 * directories and its own /run), runs the optional setup hook, then keeps the namespaces alive
 * so sshd can be stopped and started again inside the same host. The mounts belong to this
 * mount namespace only: they go away when its last process (holder, sshd, sessions) ends.
 */
export const HOLDER_SCRIPT = `#!/bin/sh
set -eu
busybox hostname "$BPA_LAB_HOST"
mount --bind "$BPA_LAB_HOST_DIR/root" /root
mount --bind "$BPA_LAB_HOST_DIR/home" /home
if [ "\${BPA_LAB_ISOLATE:-}" = 1 ]; then
  for dir in ${ISOLATED_DIRS.join(' ')}; do
    layer="$BPA_LAB_HOST_DIR/overlay$dir"
    mkdir -p "$layer/upper" "$layer/work"
    mount -t overlay "bpa-lab-$BPA_LAB_ID" -o "lowerdir=$dir,upperdir=$layer/upper,workdir=$layer/work" "$dir"
  done
  # A fresh offline node: no package lists from the machine's repositories, so apt knows only
  # what the host is told to fetch (and does not parse the whole distribution on every run).
  if [ -d /var/lib/apt/lists ]; then
    find /var/lib/apt/lists -maxdepth 1 -type f ! -name lock -exec rm -f {} +
  fi
  rm -f /var/cache/apt/pkgcache.bin /var/cache/apt/srcpkgcache.bin
  # A private /run: package hooks (e.g. PackageKit's) must not reach the machine's D-Bus, and
  # sshd's utmp records stay with the host. sshd needs its privilege separation directory.
  mount -t tmpfs -o mode=0755,size=16m "bpa-lab-$BPA_LAB_ID" /run
  mkdir -p -m 0755 /run/sshd /run/lock
fi
if [ -n "\${BPA_LAB_SETUP:-}" ]; then sh "$BPA_LAB_SETUP"; fi
echo ready
exec sleep infinity </dev/null >/dev/null 2>&1
`;
