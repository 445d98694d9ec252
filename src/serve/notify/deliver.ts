import { createHmac } from 'node:crypto';
import type { Logger } from '../../util/log.js';
import { sanitize } from '../../util/redact.js';
import type { NotifyEvent } from './events.js';

export type NotifyFormat = 'json' | 'slack';

/** Where events go: `slack+https://…` is a Slack-compatible incoming webhook, else JSON. */
export interface NotifyTarget {
  url: string;
  format: NotifyFormat;
}

export function parseTarget(text: string): NotifyTarget {
  const slack = text.startsWith('slack+');
  return { url: slack ? text.slice(6) : text, format: slack ? 'slack' : 'json' };
}

/** The header a receiver checks: HMAC-SHA256 of the exact body with the shared secret. */
export const SIGNATURE_HEADER = 'x-bpa-signature-256';

export function sign(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The request body for a format. */
export function bodyFor(event: NotifyEvent, format: NotifyFormat): string {
  if (format === 'json') return JSON.stringify(event);
  const where = event.cluster ? `cluster ${event.cluster}` : `site ${event.site}`;
  const what =
    event.type === 'phase-changed'
      ? `is ${event.phase}${event.previousPhase ? ` (was ${event.previousPhase})` : ''}`
      : event.type.replace(/-/g, ' ');
  const rev = event.revision ? ` @ ${event.revision.replace(/^sha256:/, '').slice(0, 7)}` : '';
  // Slack's mrkdwn: <url|text> is a link; &, < and > must be escaped in the text.
  const text = `*${esc(event.site)}*: ${esc(where)} ${esc(what)}${esc(rev)}: ${esc(event.reason)}${event.message ? ` — ${esc(event.message)}` : ''} <${event.link}|open>`;
  return JSON.stringify({ text });
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface DelivererOptions {
  target: NotifyTarget;
  secret?: string;
  log: Logger;
  /** Events waiting beyond this are dropped, oldest first (1000). */
  maxQueue?: number;
  /** First retry delay, doubled per failed attempt up to maxBackoffMs (1 s, 60 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** One attempt's time limit (10 s). */
  timeoutMs?: number;
  /** Called when an event is delivered or given up on, for tests and metrics. */
  onOutcome?: (event: NotifyEvent, outcome: 'delivered' | 'rejected' | 'dropped') => void;
}

/**
 * One receiver's queue: events in order, one request at a time, retried with exponential
 * backoff while the receiver is down or answers 5xx/408/429, for as long as the bounded queue
 * holds them (the oldest is dropped when it overflows, and logged). A 4xx answer is final:
 * that receiver will not take the event; so is a redirect, which is never followed. Enqueueing never waits, so a slow or dead receiver
 * never holds up a reconcile.
 */
export class Deliverer {
  private readonly queue: NotifyEvent[] = [];
  private running = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  dropped = 0;
  delivered = 0;

  constructor(private readonly opts: DelivererOptions) {}

  get pending(): number {
    return this.queue.length;
  }

  enqueue(event: NotifyEvent): void {
    if (this.stopped) return;
    this.queue.push(event);
    const max = this.opts.maxQueue ?? 1000;
    while (this.queue.length > max) {
      const lost = this.queue.shift();
      this.dropped += 1;
      if (lost) this.opts.onOutcome?.(lost, 'dropped');
      this.opts.log.warn(
        { receiver: this.shown(), dropped: this.dropped },
        'notification queue full: the oldest event was dropped',
      );
    }
    if (!this.running) void this.drain();
  }

  /** Stops retrying; waits up to `graceMs` for the queue to empty. */
  async stop(graceMs = 5_000): Promise<void> {
    const until = Date.now() + graceMs;
    while (this.queue.length && Date.now() < until && this.running) await delay(50);
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
  }

  private shown(): string {
    // Slack webhook URLs are secrets: only the host is ever logged.
    try {
      return new URL(this.opts.target.url).host;
    } catch {
      return 'receiver';
    }
  }

  private async drain(): Promise<void> {
    this.running = true;
    let failures = 0;
    try {
      while (!this.stopped && this.queue.length) {
        const event = this.queue[0] as NotifyEvent;
        const outcome = await this.attempt(event);
        if (outcome === 'retry') {
          failures += 1;
          const base = this.opts.backoffMs ?? 1_000;
          const wait = Math.min(
            base * 2 ** Math.min(failures - 1, 20),
            this.opts.maxBackoffMs ?? 60_000,
          );
          await new Promise<void>((resolve) => {
            this.wake = resolve;
            this.timer = setTimeout(resolve, wait);
            this.timer.unref();
          });
          this.wake = undefined;
          continue;
        }
        failures = 0;
        // The event may have been dropped from a full queue meanwhile.
        if (this.queue[0] === event) this.queue.shift();
        if (outcome === 'delivered') this.delivered += 1;
        this.opts.onOutcome?.(event, outcome);
      }
    } finally {
      this.running = false;
    }
  }

  private async attempt(event: NotifyEvent): Promise<'delivered' | 'rejected' | 'retry'> {
    const body = bodyFor(event, this.opts.target.format);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'bpa-notifier',
      'x-bpa-event': event.type,
      'x-bpa-delivery': event.id,
    };
    if (this.opts.secret) headers[SIGNATURE_HEADER] = sign(body, this.opts.secret);
    try {
      const res = await fetch(this.opts.target.url, {
        method: 'POST',
        headers,
        body,
        // Never followed: the signed body would go to a host the operator did not name.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return 'delivered';
      if (res.status >= 300 && res.status < 400) {
        // Retrying would get the same answer forever and hold every later event behind it.
        this.opts.log.error(
          { receiver: this.shown(), status: res.status, event: event.type },
          'notification answered with a redirect, which bpa does not follow: given up; give the final URL in --notify-url',
        );
        return 'rejected';
      }
      if (res.status >= 500 || res.status === 408 || res.status === 429) {
        this.opts.log.warn(
          { receiver: this.shown(), status: res.status, event: event.type },
          'notification not taken: retrying',
        );
        return 'retry';
      }
      this.opts.log.error(
        { receiver: this.shown(), status: res.status, event: event.type },
        'notification refused by the receiver: given up',
      );
      return 'rejected';
    } catch (err: unknown) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      this.opts.log.warn(
        { receiver: this.shown(), err: sanitize(String(cause)), event: event.type },
        'notification not delivered: retrying',
      );
      return 'retry';
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
