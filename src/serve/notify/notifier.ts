import { randomUUID } from 'node:crypto';
import type { ReconcileSummary } from '../../reconcile/summary.js';
import type { Logger } from '../../util/log.js';
import { Deliverer, parseTarget, type DelivererOptions } from './deliver.js';
import { emptyMemory, transitions, type NotifyEvent } from './events.js';

export interface NotifierOptions {
  /** Receivers: `https://…` (JSON, signed) or `slack+https://…` (Slack-compatible text). */
  urls: readonly string[];
  /** HMAC secret for the X-Bpa-Signature-256 header. */
  secret?: string;
  /** The status page as people reach it (read when an event is made): events link to it. */
  pageUrl: string | (() => string);
  log: Logger;
  now?: () => number;
  delivery?: Omit<DelivererOptions, 'target' | 'secret' | 'log'>;
}

/**
 * Tells people what changed: after each reconcile the scheduler hands over its summary, the
 * transitions are worked out against what was announced before (events.ts) and queued to
 * every receiver. Nothing here waits on a receiver.
 */
export class Notifier {
  private readonly memory = emptyMemory();
  readonly deliverers: Deliverer[];

  constructor(private readonly opts: NotifierOptions) {
    this.deliverers = opts.urls.map(
      (url) =>
        new Deliverer({
          target: parseTarget(url),
          ...(opts.secret ? { secret: opts.secret } : {}),
          log: opts.log.child({ component: 'notify' }),
          ...opts.delivery,
        }),
    );
  }

  /** The events of a finished reconcile, queued; returned for logs and tests. */
  observe(summary: ReconcileSummary): NotifyEvent[] {
    const events = transitions(summary, this.memory, {
      now: new Date((this.opts.now ?? Date.now)()).toISOString(),
      pageUrl: pageBase(this.opts.pageUrl),
      nextId: randomUUID,
    });
    for (const e of events) for (const d of this.deliverers) d.enqueue(e);
    if (events.length)
      this.opts.log.info(
        { events: events.map((e) => `${e.type}${e.cluster ? ` ${e.cluster}` : ''}`) },
        'notifications queued',
      );
    return events;
  }

  async stop(graceMs?: number): Promise<void> {
    await Promise.all(this.deliverers.map((d) => d.stop(graceMs)));
  }
}

function pageBase(url: string | (() => string)): string {
  const text = typeof url === 'string' ? url : url();
  return text.endsWith('/') ? text : `${text}/`;
}
