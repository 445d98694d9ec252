/**
 * Errors that cross stage boundaries carry a stable code from the registry
 * (`error-codes.ts`) and a retry decision:
 * - stalled: bad input; a person must change it, retrying the same input is pointless;
 * - waiting: retry after a known delay (a lock held, a host not yet ready);
 * - transient: network, git host, SSH drop; retry with backoff.
 * Callers recognise them by class (`instanceof BpaError`), never by their shape.
 */
import { RUNTIME_CODES, type RetryKind, type RuntimeCode } from './error-codes.js';

export type { RetryKind, RuntimeCode } from './error-codes.js';

export class BpaError extends Error {
  override readonly name: string = 'BpaError';
  readonly retry: RetryKind;
  /** For `waiting` errors: when to try again. */
  readonly retryAfterMs?: number;
  constructor(
    readonly code: RuntimeCode,
    message: string,
    /** Defaults to the code's retry kind in the registry. */
    retry?: RetryKind,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retry = retry ?? RUNTIME_CODES[code].retry;
  }

  toJSON(): { code: string; message: string; retry: RetryKind } {
    return { code: this.code, message: this.message, retry: this.retry };
  }
}

/** How an installer that ran ended, and the id of its log (state/logs.ts). */
export interface InstallerExit {
  exitCode?: number;
  signal?: string;
  log?: string;
}

/**
 * An installer that ran and failed. Its message quotes the installer's output (for the page
 * and bpa's log); reports in git carry only its code, its exit and the id of its log.
 */
export class InstallerError extends BpaError {
  override readonly name = 'InstallerError';
  constructor(
    code: RuntimeCode,
    message: string,
    readonly exit: InstallerExit,
    retry?: RetryKind,
  ) {
    super(code, message, retry);
  }
}

export class StalledError extends BpaError {
  override readonly name: string = 'StalledError';
  constructor(code: RuntimeCode, message: string, options?: { cause?: unknown }) {
    super(code, message, 'stalled', options);
  }
}

export class TransientError extends BpaError {
  override readonly name = 'TransientError';
  constructor(code: RuntimeCode, message: string, options?: { cause?: unknown }) {
    super(code, message, 'transient', options);
  }
}

export class WaitingError extends BpaError {
  override readonly name = 'WaitingError';
  constructor(
    code: RuntimeCode,
    message: string,
    override readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super(code, message, 'waiting', options);
  }
}

/** The command line is wrong (exit 64): an unknown flag, flags that cannot go together. */
export class UsageError extends StalledError {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super('USAGE', message);
  }
}

/** Where a setting's value came from. */
export type SettingSource = 'default' | 'site' | 'env' | 'flag';

/** A setting with a value bpa does not accept; names the setting, its source and what is allowed. */
export class ConfigError extends StalledError {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly source: SettingSource,
  ) {
    super('CONFIG_INVALID', message);
  }
}

/** The message of anything thrown, for reports and logs. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
