/**
 * The one retry loop: an operation tried again while its failure is worth another attempt.
 * Callers name which failures those are (a push that lost a race, a 409, a lock taken over
 * meanwhile, a connection that died while idle, a lease held by another replica); every other
 * failure ends the loop at once. p-retry was the library to use, but its waits are exponential
 * with a ×1–2 jitter only, and leader election needs its retry period with at most 20 %
 * (its timing contract, renewDeadline > 1.2 × retryPeriod, rests on it).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Attempts in all, the first included; Infinity retries until `signal` fires. */
  attempts: number;
  /** Whether a failure is worth another attempt. */
  retryIf: (err: unknown) => boolean;
  /** The wait before the next attempt, after `failures` failures (default: none). */
  delayMs?: (failures: number) => number;
  /** Ends the retrying: a wait ends early, and the last failure is thrown. */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` (with its number, from 1) until it succeeds; throws the last failure when it
 * is not worth retrying, the attempts run out or `signal` fires.
 */
export async function retry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err: unknown) {
      if (n >= opts.attempts || !opts.retryIf(err) || opts.signal?.aborted) throw err;
      const wait = opts.delayMs?.(n) ?? 0;
      if (wait > 0) await sleep(wait, undefined, { signal: opts.signal }).catch(() => undefined);
      if (opts.signal?.aborted) throw err;
    }
  }
}

/**
 * Exponential backoff with jitter: `firstMs`, doubled after each failure up to `capMs`, each
 * wait a random part between half and all of it (candidates that failed together spread out).
 */
export function backoff(firstMs: number, capMs: number): (failures: number) => number {
  return (failures) => {
    if (firstMs <= 0) return 0;
    const exp = Math.min(capMs, firstMs * 2 ** (failures - 1));
    return Math.round(exp / 2 + Math.random() * (exp / 2));
  };
}
