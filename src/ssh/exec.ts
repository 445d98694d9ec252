/**
 * Runs one command line on an open connection, with a hard timeout that really stops the
 * remote command. SSH "signal" requests cannot do it: sshd refuses them for root sessions
 * (root's session has no unprivileged child to send from). Instead the command first reports
 * its process group on stderr (sshd makes each session a group of its own; the line is
 * removed from the output), and on timeout bpa kills that group over a second channel, as the
 * same user and with the same sudo.
 */
import { randomBytes } from 'node:crypto';
import { command } from '../util/shell-quote.js';
import type { Ssh2Channel, SshConnection } from './connect.js';

export interface ChannelResult {
  /** False when the channel could not be opened: the command never started. */
  started: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Why the channel failed to open or ended without an exit status. */
  error?: Error;
}

export interface ExecOptions {
  timeoutMs: number;
  stdin?: string;
  /** `sudo -n --` when the command runs under sudo: its processes are killed the same way. */
  privilegePrefix?: readonly string[];
}

/** Time between TERM and KILL, and then for sshd to report the end, after a timeout. */
const KILL_AFTER_MS = 300;
const CLOSE_WAIT_MS = 2000;

export function execOnConnection(
  conn: SshConnection,
  cmdline: string,
  opts: ExecOptions,
): Promise<ChannelResult> {
  const token = randomBytes(6).toString('hex');
  const marker = `bpa-pgid-${token}`;
  // `$$` of the shell sshd starts is the session's process group: everything the command
  // starts belongs to it unless it detaches on purpose.
  const wrapped = `echo ${marker} $$ >&2; ${cmdline}`;
  const markerLine = new RegExp(`^${marker} (\\d+)\\n`, 'm');

  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stderrHead = '';
    let pgid: number | undefined;
    let exitCode: number | null = null;
    let signal: string | null = null;
    let timedOut = false;
    let settled = false;
    let channel: Ssh2Channel | undefined;
    const timers: NodeJS.Timeout[] = [];

    const finish = (result: Omit<ChannelResult, 'stdout' | 'stderr' | 'timedOut'>): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      // Decoded once at the end: a multi-byte character may straddle two chunks.
      const err = Buffer.concat(stderr).toString('utf8');
      resolve({
        ...result,
        timedOut,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: err.replace(markerLine, ''),
      });
    };

    const kill = (sig: 'TERM' | 'KILL'): void => {
      if (pgid === undefined) return;
      const line = command([...(opts.privilegePrefix ?? []), 'sh', '-c', `kill -${sig} -${pgid}`]);
      try {
        conn.client.exec(line, {}, (err, ch) => {
          if (err) return;
          ch.on('data', () => undefined);
          ch.stderr.on('data', () => undefined);
          ch.end();
        });
      } catch {
        // The connection is gone; the close timer below still settles the command.
      }
    };

    const onTimeout = (): void => {
      timedOut = true;
      if (!channel) {
        finish({ started: false, exitCode: null, signal: null });
        return;
      }
      const open = channel;
      kill('TERM');
      timers.push(
        setTimeout(() => {
          kill('KILL');
          open.close();
        }, KILL_AFTER_MS),
        // sshd normally reports the end and closes; do not wait on a dead transport.
        setTimeout(
          () => finish({ started: true, exitCode, signal }),
          KILL_AFTER_MS + CLOSE_WAIT_MS,
        ),
      );
    };
    timers.push(setTimeout(onTimeout, opts.timeoutMs));

    try {
      conn.client.exec(wrapped, {}, (err, ch) => {
        if (err) {
          finish({ started: false, exitCode: null, signal: null, error: err });
          return;
        }
        if (settled) {
          // Timed out while the channel was opening: never let the command run.
          ch.close();
          return;
        }
        channel = ch;
        ch.on('data', (chunk: Buffer) => stdout.push(chunk));
        ch.stderr.on('data', (chunk: Buffer) => {
          stderr.push(chunk);
          if (pgid === undefined && stderrHead.length < 65536) {
            stderrHead += chunk.toString('latin1');
            const m = markerLine.exec(stderrHead);
            if (m?.[1]) pgid = Number(m[1]);
          }
        });
        ch.on('exit', (code: number | null, sig?: string) => {
          if (typeof code === 'number') exitCode = code;
          if (sig) signal = sig.startsWith('SIG') ? sig : `SIG${sig}`;
        });
        ch.on('close', () => {
          const ended = exitCode !== null || signal !== null;
          const error = ended ? undefined : (conn.lastError ?? new Error('the channel closed'));
          finish({ started: true, exitCode, signal, ...(error ? { error } : {}) });
        });
        ch.end(opts.stdin);
      });
    } catch (err: unknown) {
      finish({ started: false, exitCode: null, signal: null, error: err as Error });
    }
  });
}
