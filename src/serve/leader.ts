import {
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
  type V1LeaseSpec,
  V1MicroTime,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortable, httpStatus, serverMessage } from '../kube/api.js';
import { StalledError, messageOf } from '../util/errors.js';
import { type Logger, silentLogger } from '../util/log.js';
import { retry } from '../util/retry.js';

export interface LeaderOptions {
  namespace: string;
  /** Name of the coordination.k8s.io/v1 Lease. */
  name: string;
  /** This replica, usually the pod name. */
  identity: string;
  /** How long a lease holds without renewal (15). */
  leaseDurationSeconds: number;
  /** How long the leader keeps trying to renew before it steps down (10). */
  renewDeadlineSeconds: number;
  /** Pause between attempts (2). */
  retryPeriodSeconds: number;
  /** Wall clock for the times written into the Lease and for judging its expiry. */
  now?: () => number;
  logger?: Logger;
}

export interface LeaderCallbacks {
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

type Attempt = 'leader' | 'held-by-other' | 'failed';

/**
 * Leader election on a Lease, with client-go's semantics: the lease is taken when it does
 * not exist, when it is ours, or when it has not changed for leaseDuration; every write
 * carries the resourceVersion read, so of two candidates only one wins. Expiry is judged from
 * when this replica last saw the record change (not from the holder's renewTime), which
 * keeps clock skew between replicas from causing two leaders. The leader steps down once it
 * has failed to renew for renewDeadline, measured from when its last successful renewal was
 * sent, so it stops before any other replica can consider the lease expired.
 */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly requestMs: number;
  private readonly stopped = new AbortController();
  private leading = false;
  private loop: Promise<void> | undefined;
  /** The Lease as last written by us while we held it. */
  private held: V1Lease | undefined;
  private observedRecord = '';
  private observedAt = 0;
  /** Monotonic time at which the last successful acquire/renew request was sent. */
  private renewedAt = 0;

  constructor(
    kc: KubeConfig,
    private readonly opts: LeaderOptions,
  ) {
    const {
      leaseDurationSeconds: lease,
      renewDeadlineSeconds: renew,
      retryPeriodSeconds: retry,
    } = opts;
    if (!opts.identity)
      throw new StalledError('LEADER_CONFIG', 'leader election needs a non-empty identity');
    if (!(retry > 0 && renew > retry * 1.2 && lease > renew)) {
      throw new StalledError(
        'LEADER_CONFIG',
        `leader election needs leaseDuration (${lease}s) > renewDeadline (${renew}s) > 1.2 × retryPeriod (${retry}s) > 0`,
      );
    }
    this.api = kc.makeApiClient(CoordinationV1Api);
    this.now = opts.now ?? Date.now;
    this.log = (opts.logger ?? silentLogger()).child({
      lease: `${opts.namespace}/${opts.name}`,
      identity: opts.identity,
    });
    this.leaseMs = lease * 1000;
    this.renewDeadlineMs = renew * 1000;
    this.retryMs = retry * 1000;
    // One attempt (read + write) must not eat the whole renew deadline.
    this.requestMs = Math.max(this.retryMs, this.renewDeadlineMs / 2);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns, leads, and campaigns again after losing the lease, until stop(). */
  run(callbacks: LeaderCallbacks): Promise<void> {
    if (this.loop) throw new Error('LeaderElector.run() was already called');
    this.loop = this.campaign(callbacks);
    return this.loop;
  }

  /** Ends the loop (onStoppedLeading runs first if leading) and hands the lease back at once. */
  async stop(): Promise<void> {
    this.stopped.abort();
    if (this.loop) await this.loop.catch(() => undefined);
    await this.release();
  }

  private async campaign(callbacks: LeaderCallbacks): Promise<void> {
    while (!this.stopped.signal.aborted) {
      if (!(await this.acquire())) return;
      this.leading = true;
      this.log.info('became leader');
      try {
        callbacks.onStartedLeading();
        await this.renewWhileLeading();
      } finally {
        this.leading = false;
        this.log.info('stopped leading');
      }
      callbacks.onStoppedLeading();
    }
  }

  /** Tries for the lease every retry period until it is had; false when stopped first. */
  private async acquire(): Promise<boolean> {
    if (this.stopped.signal.aborted) return false;
    const once = async (): Promise<true> => {
      const sentAt = performance.now();
      if ((await this.attempt(this.requestMs)) !== 'leader') throw new NotLeader();
      this.renewedAt = sentAt;
      return true;
    };
    return retry(once, {
      attempts: Infinity,
      retryIf: (err) => err instanceof NotLeader,
      // Jitter keeps candidates that started together from colliding on every attempt.
      delayMs: () => this.retryMs * (1 + Math.random() * 0.2),
      signal: this.stopped.signal,
    }).catch((err: unknown) => {
      if (err instanceof NotLeader) return false;
      throw err;
    });
  }

  private async renewWhileLeading(): Promise<void> {
    for (;;) {
      await sleep(Math.max(0, Math.min(this.retryMs, this.untilDeadline())), undefined, {
        signal: this.stopped.signal,
      }).catch(() => undefined);
      if (this.stopped.signal.aborted) return;
      const left = this.untilDeadline();
      if (left <= 0) break;
      const sentAt = performance.now();
      const result = await this.attempt(Math.min(left, this.requestMs));
      if (result === 'leader') {
        this.renewedAt = sentAt;
      } else if (result === 'held-by-other') {
        this.log.warn('the lease is held by another replica; stepping down');
        return;
      } else if (this.untilDeadline() <= 0) {
        break;
      }
    }
    this.log.warn(
      { renewDeadlineSeconds: this.opts.renewDeadlineSeconds },
      'could not renew the lease in time; stepping down',
    );
  }

  private untilDeadline(): number {
    return this.renewedAt + this.renewDeadlineMs - performance.now();
  }

  /** One read and, when allowed, one write of the Lease, abandoned after `timeoutMs`. */
  private async attempt(timeoutMs: number): Promise<Attempt> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), Math.max(1, timeoutMs));
    try {
      return await this.tryAcquireOrRenew(abortable(timeout.signal));
    } catch (err: unknown) {
      const status = httpStatus(err);
      const reason =
        status === 409 ? 'lost the race (409)' : (serverMessage(err) ?? messageOf(err));
      this.log.debug({ status }, `lease attempt failed: ${reason}`);
      return 'failed';
    } finally {
      clearTimeout(timer);
    }
  }

  private async tryAcquireOrRenew(options: ReturnType<typeof abortable>): Promise<Attempt> {
    const { namespace, name, identity } = this.opts;
    const nowMs = this.now();
    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ name, namespace }, options);
    } catch (err: unknown) {
      if (httpStatus(err) !== 404) throw err;
      const spec: V1LeaseSpec = {
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(this.opts.leaseDurationSeconds),
        acquireTime: microTime(nowMs),
        renewTime: microTime(nowMs),
        leaseTransitions: 0,
      };
      // A 409 here means another candidate created it first; the caller counts it as lost.
      const created = await this.api.createNamespacedLease(
        {
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec,
          },
        },
        options,
      );
      return this.won(created, nowMs);
    }

    const spec = current.spec ?? {};
    this.observe(spec, nowMs);
    const holder = spec.holderIdentity ?? '';
    if (holder !== '' && holder !== identity && this.stillValid(spec, nowMs)) {
      this.held = undefined;
      return 'held-by-other';
    }
    const takeover = holder !== identity;
    const next: V1LeaseSpec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.opts.leaseDurationSeconds),
      acquireTime: takeover || spec.acquireTime === undefined ? microTime(nowMs) : spec.acquireTime,
      renewTime: microTime(nowMs),
      leaseTransitions: (spec.leaseTransitions ?? 0) + (takeover ? 1 : 0),
    };
    const updated = await this.api.replaceNamespacedLease(
      {
        name,
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: current.metadata,
          spec: next,
        },
      },
      options,
    );
    if (takeover)
      this.log.info(
        { previous: holder || null, transitions: next.leaseTransitions },
        'took over the lease',
      );
    return this.won(updated, nowMs);
  }

  private won(lease: V1Lease, nowMs: number): Attempt {
    this.held = lease;
    this.observe(lease.spec ?? {}, nowMs);
    return 'leader';
  }

  /** Notes when the record last changed, by our clock: expiry is measured from there. */
  private observe(spec: V1LeaseSpec, nowMs: number): void {
    const record = JSON.stringify([
      spec.holderIdentity ?? '',
      timeText(spec.renewTime),
      timeText(spec.acquireTime),
      spec.leaseTransitions ?? 0,
      spec.leaseDurationSeconds ?? 0,
    ]);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = nowMs;
    }
  }

  private stillValid(spec: V1LeaseSpec, nowMs: number): boolean {
    const seconds = spec.leaseDurationSeconds ?? this.opts.leaseDurationSeconds;
    return nowMs < this.observedAt + seconds * 1000;
  }

  /** Hands the lease back (empty holder) so a successor need not wait for it to expire. */
  private async release(): Promise<void> {
    const held = this.held;
    if (!held?.metadata || held.spec?.holderIdentity !== this.opts.identity) return;
    const nowMs = this.now();
    const { name, namespace } = this.opts;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.requestMs);
    try {
      await this.api.replaceNamespacedLease(
        {
          name,
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: held.metadata,
            spec: {
              ...held.spec,
              holderIdentity: '',
              leaseDurationSeconds: 1,
              acquireTime: microTime(nowMs),
              renewTime: microTime(nowMs),
            },
          },
        },
        abortable(timeout.signal),
      );
      this.log.info('released the lease');
    } catch (err: unknown) {
      // 409: someone changed it since our last renewal, so it is not ours to release.
      this.log.warn(
        { status: httpStatus(err) },
        `could not release the lease: ${serverMessage(err) ?? messageOf(err)}`,
      );
    } finally {
      clearTimeout(timer);
      this.held = undefined;
    }
  }
}

/** RFC 3339 with microseconds (`2026-11-22T00:00:00.000000Z`), the Lease's MicroTime. */
export function microTime(ms: number): V1MicroTime {
  return new V1MicroTime(ms);
}

function timeText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : '';
}

/** The lease is held by another replica (or could not be read or written): not leading yet. */
class NotLeader extends Error {}
