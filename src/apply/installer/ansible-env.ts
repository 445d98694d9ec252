/**
 * The environment an installer runs with, local process or Job alike: Ansible logs in with
 * bpa's key, checks exactly the host keys bpa pinned, and keeps everything it writes on the
 * controller (fact cache, retry files, temp files, SSH control sockets) in the cluster
 * directory, so two clusters never share it, nor do they share it with the machine. The user
 * and port are in the inventory (hosts.ini), next to each host's address.
 */
import { posix } from 'node:path';
import { StalledError } from '../../util/errors.js';

/** The installer's known_hosts file inside the cluster directory (see SshAccess). */
export const KNOWN_HOSTS_FILE = 'known_hosts';
/** Ansible's own files inside the cluster directory. */
export const ANSIBLE_DIR = '.ansible';

export interface AnsibleEnvOptions {
  /** The cluster directory as the installer sees it (in a Job: its mount path). */
  clusterDir: string;
  /** bpa's private key, as the installer sees it. */
  privateKey: string;
  /**
   * SSH user (the inventory names it for Ansible; the reference installer reads BPA_SSH_USER).
   * Another user than root gets become, as `-b` does on Kubespray's command line: a default
   * that a play or task may turn off (`become: false`), unlike an inventory variable.
   */
  user: string;
  /** Kubespray's ansible.cfg, for a command that runs Kubespray's playbooks. */
  ansibleConfig?: string;
}

// While ssh creates a control socket it binds ControlPath plus a 17-character suffix, and a
// Unix socket path holds at most 107 bytes; Ansible's ControlPath is the directory plus a
// 10-character hash. A longer directory gets no shared connections rather than a failure.
const MAX_CONTROL_DIR = 107 - 1 - 10 - 17;

// SSH splits file options on whitespace and expands % tokens; Ansible splits ssh_args like a
// shell. A path that is plain survives all three.
const PLAIN_PATH = /^\/[^\s\p{Cc}%"'\\]*$/u;

function plain(what: string, path: string): string {
  if (!PLAIN_PATH.test(path)) {
    throw new StalledError(
      'INSTALLER_COMMAND_INVALID',
      `${what} ${JSON.stringify(path)} must be an absolute path without spaces, quotes or %: the installer's SSH options name it`,
    );
  }
  return path;
}

/** The directories under the cluster directory that ansibleEnv points Ansible at. */
export function ansibleDirs(clusterDir: string): string[] {
  const work = posix.join(clusterDir, ANSIBLE_DIR);
  return ['cp', 'facts', 'home', 'retry', 'tmp'].map((d) => posix.join(work, d));
}

export function ansibleEnv(opts: AnsibleEnvOptions): Record<string, string> {
  const clusterDir = plain('the cluster directory', opts.clusterDir);
  const work = posix.join(clusterDir, ANSIBLE_DIR);
  const knownHosts = posix.join(clusterDir, KNOWN_HOSTS_FILE);
  const controlDir = posix.join(work, 'cp');
  const persist = Buffer.byteLength(controlDir) <= MAX_CONTROL_DIR;
  const sshArgs = [
    ...(persist
      ? ['-o', 'ControlMaster=auto', '-o', 'ControlPersist=60s']
      : ['-o', 'ControlMaster=no']),
    '-o',
    'BatchMode=yes',
    // Only bpa's key, not whatever an agent or ~/.ssh holds.
    '-o',
    'IdentitiesOnly=yes',
    // Only the keys bpa pinned; a changed key stops the installer as it stops bpa.
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'StrictHostKeyChecking=yes',
  ];
  return {
    BPA_SSH_KEY: plain("bpa's SSH key", opts.privateKey),
    BPA_SSH_USER: opts.user,
    BPA_KNOWN_HOSTS: knownHosts,
    ANSIBLE_PRIVATE_KEY_FILE: opts.privateKey,
    // Kubespray's ansible.cfg turns host key checking off; the environment wins over it.
    ANSIBLE_HOST_KEY_CHECKING: 'True',
    ANSIBLE_SSH_ARGS: sshArgs.join(' '),
    ANSIBLE_SSH_CONTROL_PATH_DIR: controlDir,
    // Kubespray caches facts in /tmp/<node name>: node names repeat across clusters.
    ANSIBLE_CACHE_PLUGIN_CONNECTION: posix.join(work, 'facts'),
    ANSIBLE_RETRY_FILES_SAVE_PATH: posix.join(work, 'retry'),
    ANSIBLE_LOCAL_TEMP: posix.join(work, 'tmp'),
    ANSIBLE_HOME: posix.join(work, 'home'),
    ...(opts.user === 'root' ? {} : { ANSIBLE_BECOME: 'True', ANSIBLE_BECOME_USER: 'root' }),
    ...(opts.ansibleConfig ? { ANSIBLE_CONFIG: opts.ansibleConfig } : {}),
  };
}
