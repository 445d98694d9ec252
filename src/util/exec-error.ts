/**
 * The one error type for external processes that fail: git, ssh and the commands run over it,
 * installers, apt on a node. The retry decision is made here, once, from the exit status and
 * stderr, so every caller reports and retries the same failure the same way.
 */
import { BpaError, type RetryKind, type RuntimeCode } from './errors.js';
import { sanitize } from './redact.js';
import { tailOf } from './tail.js';

export interface Classification {
  code: RuntimeCode;
  retry: RetryKind;
  /** Only for `waiting`. */
  retryAfterMs?: number;
}

export interface ClassifyContext {
  /** The command ran on another host (over SSH): a plain failure is REMOTE_COMMAND_FAILED. */
  remote?: boolean;
  timedOut?: boolean;
  signal?: string | null;
}

/** How long to wait for another apt/dpkg run on the node to let go of the dpkg lock. */
export const DPKG_LOCK_RETRY_MS = 10_000;
const DEFAULT_WAIT_MS = 10_000;

interface Rule {
  pattern: RegExp;
  code: RuntimeCode;
  retry: RetryKind;
  retryAfterMs?: number;
}

// Order matters: the first rule that matches wins, so specific messages come before the generic
// ones they contain (an SSH "Permission denied (publickey)" is an auth failure, not a file mode).
const RULES: readonly Rule[] = [
  {
    pattern: /REMOTE HOST IDENTIFICATION HAS CHANGED|Host denied \(verification failed\)/i,
    code: 'HOST_KEY_CHANGED',
    retry: 'stalled',
  },
  { pattern: /Host key verification failed/i, code: 'HOST_KEY_REJECTED', retry: 'stalled' },
  {
    pattern:
      /Permission denied \((publickey|password|keyboard-interactive|gssapi)|Authentication failed|All configured authentication methods failed|Too many authentication failures|No supported authentication methods/i,
    code: 'SSH_AUTH',
    retry: 'stalled',
  },
  {
    pattern:
      /sudo: a password is required|sudo: a terminal is required|is not in the sudoers file|is not allowed to execute|may not run sudo/i,
    code: 'SUDO_DENIED',
    retry: 'stalled',
  },
  { pattern: /\bsudo: (command )?not found/i, code: 'SUDO_UNAVAILABLE', retry: 'stalled' },
  // apt's message when the dpkg lock is held because the caller is not root, not because it is busy.
  {
    pattern: /are you root\?|Could not open lock file/i,
    code: 'PERMISSION_DENIED',
    retry: 'stalled',
  },
  {
    pattern:
      /Could not get lock|Unable to acquire the dpkg frontend lock|dpkg (frontend lock|status database) (is|was) locked/i,
    code: 'DPKG_LOCKED',
    retry: 'waiting',
    retryAfterMs: DPKG_LOCK_RETRY_MS,
  },
  {
    pattern:
      /Unable to locate package|has no installation candidate|Version '[^']*' for '[^']*' was not found/i,
    code: 'PACKAGE_NOT_FOUND',
    retry: 'stalled',
  },
  { pattern: /No space left on device/i, code: 'DISK_FULL', retry: 'stalled' },
  {
    pattern:
      /Connection refused|Connection timed out|Operation timed out|No route to host|Network is unreachable|Host is unreachable|Broken pipe|Connection reset|Connection closed by|Connection to \S+ closed|kex_exchange_identification|ssh_exchange_identification|Could not resolve host|Temporary failure in name resolution|Name or service not known|UNREACHABLE!|\bE(CONNREFUSED|TIMEDOUT|HOSTUNREACH|NETUNREACH|CONNRESET|PIPE)\b/i,
    code: 'CONNECTION_FAILED',
    retry: 'transient',
  },
  { pattern: /command not found|: not found$/im, code: 'COMMAND_NOT_FOUND', retry: 'stalled' },
  {
    pattern: /Permission denied|Operation not permitted/i,
    code: 'PERMISSION_DENIED',
    retry: 'stalled',
  },
];

/** Decides, from how a process ended, the error code and whether and when to retry. */
export function classify(
  stderr: string,
  exitCode: number | null,
  context: ClassifyContext = {},
): Classification {
  if (context.timedOut) return { code: 'COMMAND_TIMEOUT', retry: 'transient' };
  for (const rule of RULES) {
    if (!rule.pattern.test(stderr)) continue;
    // The ssh client exits 255 for its own failures: the host, not the command, is the problem.
    if (rule.code === 'CONNECTION_FAILED' && exitCode === 255) {
      return { code: 'SSH_UNREACHABLE', retry: 'transient' };
    }
    const result: Classification = { code: rule.code, retry: rule.retry };
    if (rule.retryAfterMs !== undefined) result.retryAfterMs = rule.retryAfterMs;
    return result;
  }
  if (exitCode === 127) return { code: 'COMMAND_NOT_FOUND', retry: 'stalled' };
  if (exitCode === 126) return { code: 'PERMISSION_DENIED', retry: 'stalled' };
  if (exitCode === null && context.signal) return { code: 'COMMAND_KILLED', retry: 'transient' };
  // An unexplained failure may pass on a later run (a host fixed by hand changes no input).
  return { code: context.remote ? 'REMOTE_COMMAND_FAILED' : 'COMMAND_FAILED', retry: 'transient' };
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return (lines[lines.length - 1] ?? '').trim().replace(/^…/, '');
}

const CMD_DISPLAY_MAX = 200;

/** A command line short enough and on one line for a message; the full one stays in `cmd`. */
function displayCmd(cmd: string): string {
  const one = cmd.replace(/\n/g, '\\n');
  return one.length > CMD_DISPLAY_MAX ? `${one.slice(0, CMD_DISPLAY_MAX)}…` : one;
}

export interface ExecErrorInit {
  /** The command line as run (quoted argv); credentials in URLs are removed. */
  cmd: string;
  exitCode: number | null;
  signal?: string | null;
  timedOut?: boolean;
  /** The limit that was exceeded, for the message. */
  timeoutMs?: number;
  stdout?: string;
  stderr?: string;
  /** The node (or host) the command ran on; absent for local processes. */
  host?: string;
  /** Overrides the classification (e.g. a connection failure the caller already understands). */
  code?: RuntimeCode;
  retry?: RetryKind;
  retryAfterMs?: number;
  /** Overrides the standard message; used for failures that are not an exit (connecting). */
  message?: string;
  cause?: unknown;
}

export interface ExecErrorJson {
  code: string;
  message: string;
  retry: RetryKind;
  retryAfterMs?: number;
  cmd: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdoutTail: string;
  stderrTail: string;
  host?: string;
}

/**
 * `stdoutTail` and `stderrTail` are for people (messages, reports): cut to the last lines, they
 * are never parsed. A command whose non-zero exit is an answer (dpkg-query's 1) is run with the
 * SSH pool's `okExitCodes` and its whole output read from the result.
 */
export class ExecError extends BpaError {
  override readonly name = 'ExecError';
  readonly cmd: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly stdoutTail: string;
  readonly stderrTail: string;
  readonly host: string | undefined;
  override readonly retryAfterMs: number | undefined;

  constructor(init: ExecErrorInit) {
    const cmd = sanitize(init.cmd);
    const stderrTail = tailOf(init.stderr ?? '');
    const stdoutTail = tailOf(init.stdout ?? '');
    const signal = init.signal ?? null;
    const timedOut = init.timedOut ?? false;
    const context: ClassifyContext = { remote: init.host !== undefined, timedOut, signal };
    const found = classify(init.stderr ?? '', init.exitCode, context);
    const code = init.code ?? found.code;
    const retry = init.retry ?? found.retry;
    const message =
      init.message !== undefined
        ? sanitize(init.message)
        : standardMessage({ ...init, cmd, signal, timedOut }, lastLine(stderrTail));
    super(code, message, retry, init.cause !== undefined ? { cause: init.cause } : undefined);
    this.cmd = cmd;
    this.exitCode = init.exitCode;
    this.signal = signal;
    this.timedOut = timedOut;
    this.stdoutTail = stdoutTail;
    this.stderrTail = stderrTail;
    this.host = init.host;
    const retryAfterMs = init.retryAfterMs ?? found.retryAfterMs ?? DEFAULT_WAIT_MS;
    this.retryAfterMs = retry === 'waiting' ? retryAfterMs : undefined;
  }

  override toJSON(): ExecErrorJson {
    const json: ExecErrorJson = {
      code: this.code,
      message: this.message,
      retry: this.retry,
      cmd: this.cmd,
      exitCode: this.exitCode,
      signal: this.signal,
      timedOut: this.timedOut,
      stdoutTail: this.stdoutTail,
      stderrTail: this.stderrTail,
    };
    if (this.retryAfterMs !== undefined) json.retryAfterMs = this.retryAfterMs;
    if (this.host !== undefined) json.host = this.host;
    return json;
  }
}

function standardMessage(
  init: ExecErrorInit & { signal: string | null; timedOut: boolean },
  last: string,
): string {
  const prefix = init.host !== undefined ? `${init.host}: ` : '';
  const cmd = displayCmd(init.cmd);
  const detail = last !== '' ? `: ${last}` : '';
  if (init.timedOut) {
    const after = init.timeoutMs !== undefined ? ` after ${formatMs(init.timeoutMs)}` : '';
    return `${prefix}${cmd} timed out${after}${detail}`;
  }
  if (init.exitCode !== null) return `${prefix}${cmd} exited ${init.exitCode}${detail}`;
  if (init.signal) return `${prefix}${cmd} killed by ${init.signal}${detail}`;
  return `${prefix}${cmd} ended without an exit status${detail}`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
