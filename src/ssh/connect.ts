/**
 * Opens one SSH connection: key or password authentication, the pinned host key enforced
 * during the handshake (before any authentication, so nothing is sent to an impostor), and
 * every way of failing turned into an ExecError with a code and a retry decision.
 */
import type { EventEmitter } from 'node:events';
import type { NodeSSH, Config } from 'node-ssh';
import { ExecError } from '../util/exec-error.js';
import { BpaError, messageOf, type RuntimeCode } from '../util/errors.js';
import { HostKeyStore, negotiationFor, type HostKeyVerdict, type PinnedKey } from './host-keys.js';
import { describeTarget, hostPort, type SshTarget } from './types.js';

// ssh2 ships without type declarations in this tree; these are the few members bpa uses.
export interface Ssh2Channel extends EventEmitter {
  stderr: EventEmitter;
  end(data?: string | Buffer): void;
  close(): void;
  /** Asks sshd to signal the session's process group (name without SIG). */
  signal(name: string): void;
}

export interface Ssh2Client extends EventEmitter {
  exec(
    command: string,
    options: Record<string, unknown>,
    callback: (err: Error | undefined, channel: Ssh2Channel) => void,
  ): boolean;
  end(): void;
  destroy(): void;
}

export type SshAuth =
  { kind: 'key'; privateKey: string; keyPath: string } | { kind: 'password'; password: string };

export interface ConnectOptions {
  store: HostKeyStore;
  connectTimeoutMs: number;
  /** The command this connection is opened for; it is part of the error when connecting fails. */
  cmd: string;
}

/** An open connection; `closed` turns true when the transport is gone for whatever reason. */
export class SshConnection {
  closed = false;
  /** The last transport error, to explain commands cut off by it. */
  lastError: Error | undefined;

  constructor(
    readonly ssh: NodeSSH,
    readonly client: Ssh2Client,
  ) {
    client.on('close', () => (this.closed = true));
    client.on('end', () => (this.closed = true));
  }

  /** Ends the connection and waits (bounded) for the transport to close. */
  async close(waitMs = 2000): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.client.destroy();
        resolve();
      }, waitMs);
      this.client.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.ssh.dispose();
    });
  }
}

interface Ssh2Error extends Error {
  level?: string;
  code?: string;
}

export async function connect(
  target: SshTarget,
  auth: SshAuth,
  opts: ConnectOptions,
): Promise<SshConnection> {
  const pinned = await opts.store.lookup(target.address, target.port);
  let verdict: HostKeyVerdict | undefined;
  let storeError: unknown;
  const hostVerifier = (key: Buffer, verify: (ok: boolean) => void): undefined => {
    opts.store.verify(target.address, target.port, target.node, key).then(
      (v) => {
        verdict = v;
        verify(v.kind !== 'changed');
      },
      (err: unknown) => {
        storeError = err;
        verify(false);
      },
    );
    return undefined;
  };
  const config: Config = {
    host: target.address,
    port: target.port,
    username: target.user,
    readyTimeout: opts.connectTimeoutMs,
    // Notices a host that vanished under a long command instead of waiting for its timeout.
    keepaliveInterval: 15_000,
    keepaliveCountMax: 3,
    hostVerifier,
  };
  const hostKeyAlgorithms = pinned ? negotiationFor(pinned.algorithm) : undefined;
  if (hostKeyAlgorithms) config.algorithms = { serverHostKey: hostKeyAlgorithms };
  if (auth.kind === 'key') {
    config.privateKey = auth.privateKey;
  } else {
    config.password = auth.password;
    config.tryKeyboard = true;
  }

  // ssh2 sets up 16 MiB of WebAssembly memory as it loads: a serve that reaches no node
  // (every cluster suspended, or nothing to do) never loads it.
  const { NodeSSH } = await import('node-ssh');
  const ssh = new NodeSSH();
  const pending = ssh.connect(config);
  // node-ssh listens for errors only until the connection is ready; an error event without a
  // listener would crash the process, so one listener stays for the connection's lifetime.
  const client = ssh.connection as unknown as Ssh2Client | null;
  let lastError: Error | undefined;
  client?.on('error', (err: Error) => (lastError = err));
  try {
    await pending;
  } catch (err: unknown) {
    client?.destroy();
    if (storeError !== undefined) throw storeError;
    throw connectFailure(err, { target, auth, opts, verdict, pinned });
  }
  if (!client) throw new Error('node-ssh connected without a client');
  const connection = new SshConnection(ssh, client);
  client.on('error', (err: Error) => (connection.lastError = err));
  if (lastError) connection.lastError = lastError;
  return connection;
}

interface FailureContext {
  target: SshTarget;
  auth: SshAuth;
  opts: ConnectOptions;
  verdict: HostKeyVerdict | undefined;
  pinned: PinnedKey | undefined;
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is sshd running?)',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset by the host',
  EPIPE: 'connection broken',
  ECONNABORTED: 'connection aborted',
};

function connectFailure(err: unknown, ctx: FailureContext): BpaError {
  if (err instanceof BpaError) return err;
  const { target, auth, opts, verdict, pinned } = ctx;
  const where = describeTarget(target);
  const e = err as Ssh2Error;
  const text = messageOf(err);
  const fail = (code: RuntimeCode, retry: 'stalled' | 'transient', message: string): ExecError =>
    new ExecError({
      cmd: opts.cmd,
      exitCode: null,
      host: target.node,
      code,
      retry,
      message,
      cause: err,
    });

  if (verdict?.kind === 'changed') {
    const { pinned: old, offered } = verdict;
    return fail(
      'HOST_KEY_CHANGED',
      'stalled',
      `${where}: the host key changed: pinned ${old.algorithm} ${old.fingerprint} (first seen ` +
        `${old.firstSeen}), now offered ${offered.algorithm} ${offered.fingerprint}. Nothing was ` +
        `run on this host. If the change is expected (host reinstalled), compare the new ` +
        `fingerprint with \`ssh-keygen -lf /etc/ssh/ssh_host_${keyFileStem(offered.algorithm)}` +
        `_key.pub\` on the host's console, then remove the entry "${hostPort(target.address, target.port)}" ` +
        `from ${opts.store.file} to pin the new key.`,
    );
  }
  if (pinned && /no matching host key format/i.test(text)) {
    return fail(
      'HOST_KEY_CHANGED',
      'stalled',
      `${where}: the host no longer offers its pinned ${pinned.algorithm} host key ` +
        `(${pinned.fingerprint}, first seen ${pinned.firstSeen}). Nothing was run on this host. ` +
        `If the host was reinstalled, check its new key on the console, then remove the entry ` +
        `"${hostPort(target.address, target.port)}" from ${opts.store.file}.`,
    );
  }
  if (e.level === 'client-authentication') {
    const message =
      auth.kind === 'key'
        ? `${where}: key authentication as ${target.user} failed with ${auth.keyPath}: the key ` +
          `is not authorized for this user (bootstrap it with the default credentials, or fix the user)`
        : `${where}: password authentication as ${target.user} failed: check the bootstrap credentials`;
    return fail('SSH_AUTH', 'stalled', message);
  }
  if (auth.kind === 'key' && /privateKey|private key|passphrase/i.test(text)) {
    return fail(
      'SSH_KEY_INVALID',
      'stalled',
      `${where}: cannot use the SSH key ${auth.keyPath}: ${text}`,
    );
  }
  const network = e.code !== undefined ? NETWORK_REASONS[e.code] : undefined;
  if (network !== undefined || e.level === 'client-socket' || e.level === 'client-dns') {
    return fail('SSH_UNREACHABLE', 'transient', `${where}: cannot connect: ${network ?? text}`);
  }
  if (e.level === 'client-timeout') {
    return fail(
      'SSH_UNREACHABLE',
      'transient',
      `${where}: no SSH login within ${opts.connectTimeoutMs} ms (host down, unreachable or overloaded)`,
    );
  }
  if (/No response from server/i.test(text)) {
    return fail('SSH_UNREACHABLE', 'transient', `${where}: the connection closed before login`);
  }
  return fail('SSH_CONNECT_FAILED', 'transient', `${where}: cannot connect: ${text}`);
}

/** `ed25519` for ssh-ed25519, as in /etc/ssh/ssh_host_ed25519_key.pub. */
function keyFileStem(algorithm: string): string {
  if (algorithm === 'ssh-ed25519') return 'ed25519';
  if (algorithm === 'ssh-rsa') return 'rsa';
  if (algorithm.startsWith('ecdsa-')) return 'ecdsa';
  return '*';
}
