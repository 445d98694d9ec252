/**
 * bpa's SSH connections during one apply: one connection per target, opened on first use and
 * shared by every command for that target, so a thousand package commands do not mean a
 * thousand handshakes. Every argument is shell-quoted here; callers pass argv, never a string.
 */
import { readFile } from 'node:fs/promises';
import pLimit, { type LimitFunction } from 'p-limit';
import { ExecError } from '../util/exec-error.js';
import { StalledError, type RuntimeCode } from '../util/errors.js';
import { retry } from '../util/retry.js';
import { command } from '../util/shell-quote.js';
import { connect, type SshConnection } from './connect.js';
import { execOnConnection, type ChannelResult, type ExecOptions } from './exec.js';
import { HostKeyStore } from './host-keys.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_CHANNELS,
  describeTarget,
  hostPort,
  type RunOptions,
  type RunResult,
  type SshOptions,
  type SshTarget,
} from './types.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The command line sent for argv: `sudo -n --` for a non-root user if asked, `env` for variables. */
export function remoteCommand(
  target: SshTarget,
  argv: readonly string[],
  opts: RunOptions = {},
): string {
  const prefix = privilegePrefix(target, opts);
  const env = Object.entries(opts.env ?? {});
  if (env.length > 0) {
    prefix.push('env');
    for (const [name, value] of env) {
      if (!ENV_NAME.test(name)) {
        throw new StalledError(
          'SHELL_ARGUMENT_INVALID',
          `invalid environment variable name ${JSON.stringify(name)}`,
        );
      }
      prefix.push(`${name}=${value}`);
    }
  }
  return command([...prefix, ...argv]);
}

function privilegePrefix(target: SshTarget, opts: RunOptions): string[] {
  return opts.sudo && target.user !== 'root' ? ['sudo', '-n', '--'] : [];
}

/** Reads bpa's private key; a missing or unreadable one is a configuration error. */
export async function readPrivateKey(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err: unknown) {
    const why = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new StalledError(
      'SSH_KEY_MISSING',
      `bpa's SSH private key ${path} is missing or unreadable (${why}); configure the key path or create the key`,
      { cause: err },
    );
  }
}

interface Entry {
  ready: Promise<SshConnection>;
  conn?: SshConnection;
  limit: LimitFunction;
}

export class SshPool {
  private readonly entries = new Map<string, Entry>();
  private readonly store: HostKeyStore;
  private privateKey: Promise<string> | undefined;
  private closed = false;

  constructor(private readonly opts: SshOptions) {
    this.store = new HostKeyStore(opts.knownHostsFile);
  }

  /** Connections currently open (for tests and metrics). */
  get openConnections(): number {
    let n = 0;
    for (const entry of this.entries.values()) if (entry.conn && !entry.conn.closed) n++;
    return n;
  }

  async run(target: SshTarget, argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    const cmdline = remoteCommand(target, argv, opts);
    const timeoutMs = opts.timeoutMs ?? this.opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const attempt = async (): Promise<RunResult> => {
      const entry = this.entry(target, cmdline);
      const conn = await entry.ready;
      const exec: ExecOptions = { timeoutMs, privilegePrefix: privilegePrefix(target, opts) };
      if (opts.stdin !== undefined) exec.stdin = opts.stdin;
      const result = await entry.limit(() => execOnConnection(conn, cmdline, exec));
      if (!result.started && !result.timedOut && conn.closed) throw new DiedIdle(result);
      const ok = opts.okExitCodes ?? [0];
      if (result.exitCode !== null && ok.includes(result.exitCode) && !result.timedOut) {
        return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
      }
      throw failure(target, cmdline, timeoutMs, result);
    };
    // A connection that died while idle (host rebooted) fails before the command starts: one
    // fresh connection is safe, the command cannot have run.
    return retry(attempt, { attempts: 2, retryIf: (err) => err instanceof DiedIdle }).catch(
      (err: unknown) => {
        throw err instanceof DiedIdle ? failure(target, cmdline, timeoutMs, err.result) : err;
      },
    );
  }

  /** Ends every connection; commands still running are cut off. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      entries.map(async (entry) => {
        const conn = await entry.ready.catch(() => undefined);
        await conn?.close();
      }),
    );
  }

  private entry(target: SshTarget, cmdline: string): Entry {
    if (this.closed) throw new Error('the SSH pool is closed');
    const id = `${target.user}@${hostPort(target.address, target.port)}`;
    const existing = this.entries.get(id);
    if (existing && !existing.conn?.closed) return existing;
    const entry: Entry = {
      ready: this.open(target, cmdline),
      limit: pLimit(this.opts.maxChannelsPerHost ?? DEFAULT_MAX_CHANNELS),
    };
    this.entries.set(id, entry);
    entry.ready.then(
      async (conn) => {
        entry.conn = conn;
        // close() may have run while this connection was still being opened.
        if (this.closed) await conn.close();
      },
      () => {
        // Not cached: the next command tries again (the host may be back).
        if (this.entries.get(id) === entry) this.entries.delete(id);
      },
    );
    return entry;
  }

  private async open(target: SshTarget, cmdline: string): Promise<SshConnection> {
    this.privateKey ??= readPrivateKey(this.opts.privateKeyPath);
    let privateKey: string;
    try {
      privateKey = await this.privateKey;
    } catch (err: unknown) {
      this.privateKey = undefined;
      throw err;
    }
    return connect(
      target,
      { kind: 'key', privateKey, keyPath: this.opts.privateKeyPath },
      {
        store: this.store,
        connectTimeoutMs: this.opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        cmd: cmdline,
      },
    );
  }
}

/** The ExecError for a command that did not exit 0. */
export function failure(
  target: SshTarget,
  cmd: string,
  timeoutMs: number,
  result: ChannelResult,
): ExecError {
  const base = {
    cmd,
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    host: target.node,
    ...(result.error ? { cause: result.error } : {}),
  };
  if (result.timedOut) return new ExecError({ ...base, timedOut: true, timeoutMs });
  if (result.exitCode === null && result.signal === null) {
    const why = result.error?.message ?? 'no exit status';
    const [code, message]: [RuntimeCode, string] = result.started
      ? [
          'SSH_CONNECTION_LOST',
          `${describeTarget(target)}: the connection was lost while running the command (${why})`,
        ]
      : ['SSH_CHANNEL_FAILED', `${describeTarget(target)}: cannot start the command (${why})`];
    return new ExecError({ ...base, code, retry: 'transient', message });
  }
  return new ExecError(base);
}

/** The connection had died while idle: the command never started. */
class DiedIdle extends Error {
  constructor(readonly result: ChannelResult) {
    super('the SSH connection died while idle');
  }
}
