// Events (events.k8s.io/v1) on bpa's objects, aggregated as Kubernetes' own recorder does:
// the same event again adds to its series instead of writing a new Event.
import { randomBytes } from 'node:crypto';
import {
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { httpStatus } from '../../kube/api.js';
import { redact } from '../../util/redact.js';

/**
 * The reasons of bpa's Events: stable, listed in docs/kubernetes-status.md. Tools and people
 * select on them (`kubectl events --for … | grep ActionFailed`): never rename one.
 */
export const EVENT_REASONS = {
  ActionStarted: 'an action of the plan started (install, add nodes, packages, …)',
  ActionSucceeded: 'an action finished',
  ActionFailed: 'an action failed: the step, error code and log id, never installer output',
  NodeDrained: 'a node was cordoned and drained for a rolling change',
  WaitingForWindow: "the cluster's changes wait for its next maintenance window",
  WaitingForWave: 'the cluster waits for the clusters of an earlier wave',
  ApprovalMissing: 'the plan is not applied: its commit lacks the approved plan hash',
  SpecReverted:
    'the spec was edited in the cluster and put back as the site says (git is the truth)',
  ReconcileRequested: 'a reconcile was requested with the requestedAt annotation and handled',
} as const;
export type EventReason = keyof typeof EVENT_REASONS;

export interface Regarding {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid?: string;
}

export interface BpaEvent {
  regarding: Regarding;
  reason: EventReason;
  type: 'Normal' | 'Warning';
  note: string;
  /** When it happened (ISO 8601); now by default. */
  at?: string;
}

/** Kubernetes' MicroTime: RFC 3339 with six digits of fraction. */
export function microTime(iso: string): string {
  return new Date(iso).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

interface Series {
  name: string;
  count: number;
}

/**
 * Writes Events, one per distinct (object, reason, type, note) while bpa runs; a repeat of
 * one patches its `series` (count, lastObservedTime), so a failing retry loop is one Event.
 */
export class EventRecorder {
  private readonly api: EventsV1Api;
  private readonly seen = new Map<string, Series>();

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
    private readonly instance: string,
    private readonly now: () => number = Date.now,
  ) {
    this.api = kc.makeApiClient(EventsV1Api);
  }

  async record(e: BpaEvent): Promise<void> {
    const note = redact(e.note).slice(0, 1000);
    const key = JSON.stringify([
      e.regarding.kind,
      e.regarding.name,
      e.regarding.uid,
      e.reason,
      e.type,
      note,
    ]);
    const at = microTime(e.at ?? new Date(this.now()).toISOString());
    const known = this.seen.get(key);
    if (known) {
      try {
        await this.api.patchNamespacedEvent(
          {
            name: known.name,
            namespace: this.namespace,
            body: { series: { count: known.count + 1, lastObservedTime: at } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        known.count += 1;
        return;
      } catch (err: unknown) {
        // Events expire (an hour by default): a repeat after that starts a new one.
        if (httpStatus(err) !== 404) throw err;
      }
    }
    const name = `${e.regarding.name}.${randomBytes(8).toString('hex')}`;
    await this.api.createNamespacedEvent({
      namespace: this.namespace,
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace: this.namespace },
        eventTime: at as unknown as Date,
        reportingController: 'bpa.akraino.org/bpa',
        reportingInstance: this.instance,
        action: 'Reconcile',
        reason: e.reason,
        type: e.type,
        note,
        regarding: { ...e.regarding },
      },
    });
    this.seen.set(key, { name, count: 1 });
  }
}
