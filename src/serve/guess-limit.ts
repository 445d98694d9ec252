import { isIP } from 'node:net';

/**
 * A budget of wrong tokens: after `maxFailures` within `windowMs`, tries are refused for a
 * delay that doubles with each further round of failures, up to `maxDelayMs`.
 */
export interface FailureRule {
  maxFailures: number;
  windowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface GuessLimitOptions {
  /** Per client address (an IPv6 client by its /64): 5 a minute, then 60 s doubling to 1 h. */
  perClient?: Partial<FailureRule>;
  /**
   * Across every address together: 20 a minute, then 30 s doubling to 15 min. Bounds guessing
   * from many addresses (a botnet, an IPv6 range); while it holds, only an address that gave
   * the right token within `trustMs` still has its token compared (a session cookie already
   * given keeps working too, and a commit still suspends a cluster).
   */
  everyone?: Partial<FailureRule>;
  /** Client addresses remembered (10 000): the least recently seen is forgotten first. */
  maxClients?: number;
  /** How long an address that gave the right token passes everyone's block (24 h). */
  trustMs?: number;
  /** Addresses that gave the right token remembered (1 000): the least recent forgotten first. */
  maxTrusted?: number;
  /** Called when a wrong token starts a block (for the log). */
  onBlock?: (block: GuessBlock) => void;
}

/** Why a token is not even compared now, and for how long. */
export interface GuessBlock {
  /** `client`: this address guessed too often; `everyone`: all addresses together did. */
  scope: 'client' | 'everyone';
  client: string;
  /** Whole seconds until a token is compared again (for Retry-After). */
  seconds: number;
}

/** A token check: right, wrong, or not made because guessing is blocked. */
export type Guess = { ok: true } | { ok: false; blocked?: GuessBlock };

interface Budget {
  /** Failures in the current window, and when the window began. */
  failures: number;
  since: number;
  /** Rounds of `maxFailures` failures so far: the delay doubles with each. */
  rounds: number;
  blockedUntil: number;
}

const PER_CLIENT: FailureRule = {
  maxFailures: 5,
  windowMs: 60_000,
  baseDelayMs: 60_000,
  maxDelayMs: 3_600_000,
};
const EVERYONE: FailureRule = {
  maxFailures: 20,
  windowMs: 60_000,
  baseDelayMs: 30_000,
  maxDelayMs: 900_000,
};

/**
 * Slows down guessing one secret: one instance for each token of a `bpa serve` (the status
 * page's token, through its login form and as a bearer token; the API token; the artifacts
 * token; the webhook secret), since a guess at one is no guess at another. A client whose
 * budget is spent is refused before its token is compared, so the right token does not get in
 * either while the block holds. When everyone's budget is spent, every client is refused so
 * but those that gave the right token in the last `trustMs`: many addresses guessing cannot
 * lock out the clients that use the token (their own budget still holds). The right token
 * clears its client's budget, not everyone's. Memory is bounded: at most `maxClients`
 * addresses, `maxTrusted` trusted ones, and one shared budget.
 */
export class GuessLimiter {
  readonly perClient: FailureRule;
  readonly everyone: FailureRule;
  readonly maxClients: number;
  readonly trustMs: number;
  readonly maxTrusted: number;
  /** Insertion order is recency order: a client touched is moved to the end. */
  private readonly clients = new Map<string, Budget>();
  /** Clients that gave the right token, and until when that lets them pass everyone's block. */
  private readonly trusted = new Map<string, number>();
  private all: Budget | undefined;

  constructor(private readonly opts: GuessLimitOptions = {}) {
    this.perClient = { ...PER_CLIENT, ...opts.perClient };
    this.everyone = { ...EVERYONE, ...opts.everyone };
    this.maxClients = opts.maxClients ?? 10_000;
    this.trustMs = opts.trustMs ?? 24 * 3_600_000;
    this.maxTrusted = opts.maxTrusted ?? 1_000;
  }

  /** Compares a token (`isRight`) unless guessing is blocked for `address`, and counts a miss. */
  check(address: string, now: number, isRight: () => boolean): Guess {
    const client = clientKey(address);
    const before = this.blocked(client, now);
    if (before) return { ok: false, blocked: before };
    if (isRight()) {
      this.clients.delete(client);
      this.trusted.delete(client);
      this.trusted.set(client, now + this.trustMs);
      forgetOldest(this.trusted, this.maxTrusted);
      return { ok: true };
    }
    const mine = this.clients.get(client);
    if (mine) this.clients.delete(client);
    this.clients.set(client, fail(mine, this.perClient, now));
    this.all = fail(this.all, this.everyone, now);
    forgetOldest(this.clients, this.maxClients);
    const after = this.blocked(client, now);
    if (after) this.opts.onBlock?.(after);
    return after ? { ok: false, blocked: after } : { ok: false };
  }

  /**
   * The block on `address` now (its own, or everyone's unless it gave the right token within
   * `trustMs`, whichever lasts longer), if any.
   */
  blocked(address: string, now: number): GuessBlock | undefined {
    const client = clientKey(address);
    const own = Math.max(0, (this.clients.get(client)?.blockedUntil ?? 0) - now);
    const all = this.isTrusted(client, now) ? 0 : Math.max(0, (this.all?.blockedUntil ?? 0) - now);
    if (own === 0 && all === 0) return undefined;
    return {
      scope: own >= all ? 'client' : 'everyone',
      client,
      seconds: Math.ceil(Math.max(own, all) / 1000),
    };
  }

  /** How many client addresses are remembered (for tests). */
  get size(): number {
    return this.clients.size;
  }

  /** How many addresses that gave the right token are remembered (for tests). */
  get trustedSize(): number {
    return this.trusted.size;
  }

  private isTrusted(client: string, now: number): boolean {
    const until = this.trusted.get(client);
    if (until === undefined) return false;
    if (until > now) return true;
    this.trusted.delete(client);
    return false;
  }
}

/** Drops the least recently touched entries of `map` beyond `max`. */
function forgetOldest<V>(map: Map<string, V>, max: number): void {
  while (map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) break;
    map.delete(oldest);
  }
}

/** A budget after one more failure at `now`. */
function fail(budget: Budget | undefined, rule: FailureRule, now: number): Budget {
  let b = budget;
  // Rounds are forgotten once the client has been quiet for as long as its last delay.
  if (b && now - Math.max(b.since, b.blockedUntil) > Math.max(rule.windowMs, delay(rule, b.rounds)))
    b = undefined;
  b = b ? { ...b } : { failures: 0, since: now, rounds: 0, blockedUntil: 0 };
  if (now - b.since > rule.windowMs) {
    b.failures = 0;
    b.since = now;
  }
  b.failures++;
  if (b.failures >= rule.maxFailures) {
    b.rounds++;
    b.blockedUntil = now + delay(rule, b.rounds);
    b.failures = 0;
    b.since = now;
  }
  return b;
}

function delay(rule: FailureRule, rounds: number): number {
  if (rounds <= 0) return 0;
  return Math.min(rule.baseDelayMs * 2 ** Math.min(rounds - 1, 30), rule.maxDelayMs);
}

/**
 * Who a client is for the budget: its IPv4 address (also when written as `::ffff:a.b.c.d`),
 * or the /64 of its IPv6 address, since one subscriber usually holds a whole /64 and could
 * otherwise take a fresh address for every guess.
 */
export function clientKey(address: string): string {
  const a = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped?.[1]) return mapped[1];
  if (isIP(a) !== 6) return a;
  const [head = '', tail] = a.split('::');
  const groups = (s: string): string[] =>
    s ? s.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : [];
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all =
    tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
