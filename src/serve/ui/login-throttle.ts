/**
 * Slows down guessing the status page's token: per client address, after `maxFailures`
 * wrong tokens within `windowMs`, every try is refused (429 with Retry-After) for a delay
 * that doubles with each further round of failures, up to `maxDelayMs`. A right token clears
 * the address. At most `maxClients` addresses are remembered: the least recently seen one is
 * forgotten first, so a flood of addresses costs bounded memory.
 */
export interface LoginThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxClients?: number;
}

interface Client {
  /** Failures in the current window, and when the window began. */
  failures: number;
  since: number;
  /** Rounds of `maxFailures` failures so far: the delay doubles with each. */
  rounds: number;
  blockedUntil: number;
}

export class LoginThrottle {
  readonly maxFailures: number;
  readonly windowMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxClients: number;
  /** Insertion order is recency order: a client touched is moved to the end. */
  private readonly clients = new Map<string, Client>();

  constructor(opts: LoginThrottleOptions = {}) {
    this.maxFailures = opts.maxFailures ?? 5;
    this.windowMs = opts.windowMs ?? 60_000;
    this.baseDelayMs = opts.baseDelayMs ?? 60_000;
    this.maxDelayMs = opts.maxDelayMs ?? 3_600_000;
    this.maxClients = opts.maxClients ?? 10_000;
  }

  /** Seconds until the address may try again (for Retry-After), or 0 when it may now. */
  retryAfter(address: string, now: number): number {
    const c = this.clients.get(address);
    if (!c || c.blockedUntil <= now) return 0;
    return Math.ceil((c.blockedUntil - now) / 1000);
  }

  /** A wrong token from the address; returns the seconds it must now wait (0: none). */
  failed(address: string, now: number): number {
    let c = this.clients.get(address);
    if (c) this.clients.delete(address);
    // Rounds are forgotten once the address has been quiet for as long as its last delay.
    if (
      c &&
      now - Math.max(c.since, c.blockedUntil) > Math.max(this.windowMs, this.delay(c.rounds))
    )
      c = undefined;
    c ??= { failures: 0, since: now, rounds: 0, blockedUntil: 0 };
    if (now - c.since > this.windowMs) {
      c.failures = 0;
      c.since = now;
    }
    c.failures++;
    if (c.failures >= this.maxFailures) {
      c.rounds++;
      c.blockedUntil = now + this.delay(c.rounds);
      c.failures = 0;
      c.since = now;
    }
    this.clients.set(address, c);
    while (this.clients.size > this.maxClients) {
      const oldest = this.clients.keys().next().value;
      if (oldest === undefined) break;
      this.clients.delete(oldest);
    }
    return this.retryAfter(address, now);
  }

  /** The right token: the address starts afresh. */
  succeeded(address: string): void {
    this.clients.delete(address);
  }

  /** How many addresses are remembered (for tests and metrics). */
  get size(): number {
    return this.clients.size;
  }

  private delay(rounds: number): number {
    if (rounds <= 0) return 0;
    return Math.min(this.baseDelayMs * 2 ** Math.min(rounds - 1, 30), this.maxDelayMs);
  }
}
