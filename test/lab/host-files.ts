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
export function sshdConfig(opts: { labId: string; name: string; ip: string; dir: string }): string {
  const p = hostPaths(opts.dir);
  return `# bpa test lab ${opts.labId}, host ${opts.name}
Port 22
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
 * Runs inside a host's new UTS and mount namespaces (within its network namespace): names the
 * host, gives it private /root and /home, runs the optional setup hook, then keeps the
 * namespaces alive so sshd can be stopped and started again inside the same host.
 */
export const HOLDER_SCRIPT = `#!/bin/sh
set -eu
busybox hostname "$BPA_LAB_HOST"
mount --bind "$BPA_LAB_HOST_DIR/root" /root
mount --bind "$BPA_LAB_HOST_DIR/home" /home
if [ -n "\${BPA_LAB_SETUP:-}" ]; then sh "$BPA_LAB_SETUP"; fi
echo ready
exec sleep infinity </dev/null >/dev/null 2>&1
`;
