export interface SshTarget {
  /** The node's name, for messages. */
  node: string;
  address: string;
  port: number;
  user: string;
}

export interface SshOptions {
  privateKeyPath: string;
  /** bpa's pinned host keys, in the state dir (e.g. `<stateDir>/ssh/known_hosts.json`). */
  knownHostsFile: string;
  /** TCP connect plus SSH handshake and authentication (default 10 000). */
  connectTimeoutMs?: number;
  /** For a command run without its own timeout (default 600 000). */
  commandTimeoutMs?: number;
  /** Commands at once on one connection; sshd allows 10 sessions by default (default 8). */
  maxChannelsPerHost?: number;
}

export interface RunOptions {
  timeoutMs?: number;
  /** Prefix `sudo -n` when the SSH user is not root (never prompts: fails instead). */
  sudo?: boolean;
  /** The only place for secrets: argv and env are part of the command line, hence of errors. */
  stdin?: string;
  /** Set through `env NAME=value` on the command line (sshd drops most client variables). */
  env?: Record<string, string>;
  /**
   * Exit codes that are answers, not failures (default: only 0). `dpkg-query` exits 1 when a
   * package is not installed and still prints the others: the caller needs all of its output.
   */
  okExitCodes?: readonly number[];
}

export interface RunResult {
  /** The whole output, never a tail: callers parse it. */
  stdout: string;
  stderr: string;
  /** One of `okExitCodes` (0 unless the caller accepted others). */
  exitCode: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 600_000;
export const DEFAULT_MAX_CHANNELS = 8;

/** `h1 (10.0.0.5:22)`: the node and where bpa tried to reach it. */
export function describeTarget(target: SshTarget): string {
  return `${target.node} (${hostPort(target.address, target.port)})`;
}

/** `address:port`, with IPv6 addresses in brackets; also the key of the pinned host keys. */
export function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}
