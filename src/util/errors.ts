/**
 * Errors that cross stage boundaries carry a stable code and a retry decision:
 * - stalled: bad input; a person must change it, retrying the same input is pointless;
 * - waiting: retry after a known delay (a lock held, a host not yet ready);
 * - transient: network, git host, SSH drop; retry with backoff.
 */
export type RetryKind = 'stalled' | 'waiting' | 'transient';

export class BpaError extends Error {
  override readonly name: string = 'BpaError';
  constructor(
    readonly code: string,
    message: string,
    readonly retry: RetryKind,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  toJSON(): { code: string; message: string; retry: RetryKind } {
    return { code: this.code, message: this.message, retry: this.retry };
  }
}

export class StalledError extends BpaError {
  override readonly name = 'StalledError';
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, 'stalled', options);
  }
}

export class TransientError extends BpaError {
  override readonly name = 'TransientError';
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, 'transient', options);
  }
}

export class WaitingError extends BpaError {
  override readonly name = 'WaitingError';
  constructor(
    code: string,
    message: string,
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super(code, message, 'waiting', options);
  }
}

/** The message of anything thrown, for reports and logs. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Removes credentials from URLs in a text: https://user:token@host → https://***@host. */
export function sanitize(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}
