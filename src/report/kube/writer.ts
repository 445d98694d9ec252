// Keeps the site's objects of bpa's kinds, their status and Events in the bootstrap cluster
// (--kube-status): a view of what git says and what bpa did, for kubectl and GitOps tools.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { ApplyResult } from '../../apply/engine.js';
import { MANAGED_BY, MANAGED_BY_LABEL, explainApiError, httpStatus } from '../../kube/api.js';
import type { LoadedDocument } from '../../load/index.js';
import type { Plan } from '../../plan/index.js';
import { INVENTORY_REPORT, STATUS_DIR } from '../../source/site-path.js';
import { parseReport } from '../../source/site-source.js';
import type { Logger } from '../../util/log.js';
import type { SiteModel } from '../../validate/model.js';
import type { ApprovalBlock, ClusterStatusDoc, SiteStatusDoc } from '../status.js';
import { EventRecorder, type BpaEvent, type Regarding } from './events.js';
import { clusterEvents } from './events-of.js';
import {
  API_VERSION,
  GROUP,
  KINDS,
  PLURALS,
  REVISION_ANNOTATION,
  SOURCE_ANNOTATION,
  desiredObjects,
  type BpaKind,
  type DesiredObject,
} from './objects.js';
import {
  clusterObjectStatus,
  conditionsOf,
  siteObjectStatus,
  type ObjectStatus,
} from './status.js';

export const FIELD_MANAGER = 'bpa';
const VERSION = 'v1alpha1';
/** Set on the Site object (any value) to ask for a reconcile now; echoed in lastHandledReconcileAt. */
export const REQUESTED_AT_ANNOTATION = 'reconcile.bpa.akraino.org/requestedAt';

export interface KubeStatusInput {
  /** The site as last read and checked without errors, and its documents and revision. */
  site?: { model: SiteModel; documents: readonly LoadedDocument[]; revision: string };
  /** The revision the reconcile looked at (it may have been rejected). */
  attemptedRevision?: string;
  /** The status reports as they stand (`status/*.yaml` → text). */
  reports: ReadonlyMap<string, string>;
  /** What this reconcile did, for Events; absent when it did nothing new. */
  result?: ApplyResult;
  plan?: Plan;
  approval?: ApprovalBlock;
  /** The requestedAt annotation this reconcile was asked with, if any. */
  handledRequest?: string;
}

export interface Stored {
  metadata: {
    name: string;
    uid: string;
    resourceVersion?: string;
    generation?: number;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec?: unknown;
  status?: Partial<ObjectStatus>;
}

/** The writer of `--kube-status`; one per serve (its Events are aggregated in memory). */
export class KubeStatusWriter {
  private readonly api: CustomObjectsApi;
  private readonly events: EventRecorder;
  /** Status writes refused for a newer resourceVersion (409) and made again. */
  statusConflicts = 0;

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
    private readonly log: Logger,
    private readonly opts: {
      instance: string;
      kubeconfigSecrets: boolean;
      /**
       * Operator mode: the objects are the site, put there by someone else. Their status is
       * written; they are never applied, put back or deleted.
       */
      statusOnly?: boolean;
      now?: () => number;
      /** Called between reading an object's status and writing it (tests: another writer). */
      beforeStatusWrite?: (kind: BpaKind, name: string) => Promise<void>;
    },
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.events = new EventRecorder(kc, namespace, opts.instance, opts.now);
  }

  /** The Site object's requestedAt annotation, and the request its status says was handled. */
  async requestState(siteName: string): Promise<{ requested?: string; handled?: string }> {
    const site = await this.get('Site', siteName);
    const requested = site?.metadata.annotations?.[REQUESTED_AT_ANNOTATION];
    const handled = site?.status?.lastHandledReconcileAt;
    return { ...(requested !== undefined ? { requested } : {}), ...(handled ? { handled } : {}) };
  }

  /**
   * One pass: objects applied from the site (an edited spec put back, with an Event), objects
   * whose documents left the site deleted, every status written, the reconcile's Events.
   */
  async sync(input: KubeStatusInput): Promise<void> {
    const now = new Date((this.opts.now ?? Date.now)()).toISOString();
    const reports = parseReports(input.reports);
    const desired = input.site
      ? desiredObjects(input.site.model, input.site.documents, this.namespace, input.site.revision)
      : undefined;
    const applied = new Map<string, Stored>();
    for (const d of desired ?? []) {
      const { kind, metadata } = d.object;
      // The object as applied, or (status only) as read for its status write: each object is
      // read once per pass, not once more for the status.
      const was = this.opts.statusOnly ? undefined : await this.apply(d);
      const written = await this.writeStatus(d, reports, input, now, was);
      const stored = written ? written.stored : (was ?? (await this.get(kind, metadata.name)));
      if (!stored) continue;
      applied.set(`${kind}/${metadata.name}`, stored);
    }
    if (desired && !this.opts.statusOnly) await this.prune(new Set(applied.keys()));
    for (const e of clusterEvents(input)) {
      const clusterObject = desired?.find(
        (d) => d.object.kind === 'Cluster' && d.cluster === e.cluster,
      );
      const stored = clusterObject && applied.get(`Cluster/${clusterObject.object.metadata.name}`);
      if (!stored) continue;
      await this.event({ ...e, regarding: this.regarding('Cluster', stored) });
    }
    const siteStored = [...applied.entries()].find(([k]) => k.startsWith('Site/'))?.[1];
    if (siteStored && input.handledRequest)
      await this.event({
        regarding: this.regarding('Site', siteStored),
        reason: 'ReconcileRequested',
        type: 'Normal',
        note: `reconcile requested at ${input.handledRequest} handled`,
      });
  }

  /** Server-side apply of one object; an edited spec is first put back as the site says. */
  private async apply(d: DesiredObject): Promise<Stored> {
    const { kind, metadata } = d.object;
    const existing = await this.get(kind, metadata.name);
    const differs = existing !== undefined && !sameJson(existing.spec ?? {}, d.object.spec);
    // The same revision applied before and another spec now: someone edited it in the cluster
    // (a new revision changes the spec from git, which is no revert).
    const edited =
      differs &&
      existing.metadata.annotations?.[REVISION_ANNOTATION] ===
        d.object.metadata.annotations[REVISION_ANNOTATION];
    if (differs) {
      // Apply alone would keep fields another manager (kubectl edit) added: the whole spec
      // is replaced first, then applied so that bpa owns it again.
      await this.call(
        `put back the spec of ${kind} ${metadata.name}`,
        `patch on ${PLURALS[kind]}`,
        () =>
          this.api.patchNamespacedCustomObject(
            {
              ...this.path(kind),
              name: metadata.name,
              body: [{ op: 'replace', path: '/spec', value: d.object.spec }],
              fieldManager: FIELD_MANAGER,
            },
            setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
          ),
      );
    }
    const stored = (await this.call(
      `apply ${kind} ${metadata.name}`,
      `create and patch on ${PLURALS[kind]}`,
      () =>
        this.api.patchNamespacedCustomObject(
          {
            ...this.path(kind),
            name: metadata.name,
            body: d.object,
            fieldManager: FIELD_MANAGER,
            force: true,
          },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
        ),
    )) as Stored;
    if (edited) {
      this.log.info(
        { kind, name: metadata.name },
        'spec edited in the cluster put back from the site',
      );
      await this.event({
        regarding: this.regarding(kind, stored),
        reason: 'SpecReverted',
        type: 'Warning',
        note: `the spec was changed in the cluster; put back to revision ${d.object.metadata.annotations[REVISION_ANNOTATION]?.slice(0, 12) ?? ''} of the site (${d.object.metadata.annotations[SOURCE_ANNOTATION] ?? 'git'}): change the site instead`,
      });
    }
    return stored;
  }

  /**
   * The status, server-side applied to the status subresource: only bpa's fields, so another
   * writer's fields and conditions stay. A conflict (409) is read again and retried.
   */
  private async writeStatus(
    d: DesiredObject,
    reports: Reports,
    input: KubeStatusInput,
    now: string,
    was: Stored | undefined,
  ): Promise<{ stored: Stored | undefined } | undefined> {
    const { kind } = d.object;
    const report = d.cluster ? reports.clusters.get(d.cluster) : undefined;
    if (kind === 'Site' ? !reports.site : !report) return undefined;
    const stored = await this.patchStatus(kind, d.object.metadata.name, was, (current) => {
      const common = {
        generation: current.metadata.generation ?? 1,
        previous: current.status,
        now,
        ...(input.attemptedRevision ? { attemptedRevision: input.attemptedRevision } : {}),
        ...(input.handledRequest ? { handledRequest: input.handledRequest } : {}),
      };
      const status =
        kind === 'Site' || !report
          ? siteObjectStatus(reports.site as SiteStatusDoc, common)
          : clusterObjectStatus(report, {
              ...common,
              desiredNodes:
                input.site?.model.clusters.find((c) => c.name === d.cluster)?.nodes.length ?? 0,
              ...(reports.site?.status.source.appliedRevision
                ? { appliedRevision: reports.site.status.source.appliedRevision }
                : {}),
              full: kind === 'Cluster',
              ...(this.opts.kubeconfigSecrets
                ? { kubeconfigSecret: `${d.cluster}-kubeconfig` }
                : {}),
            });
      return statusPatch(current, status);
    });
    return { stored };
  }

  /**
   * While a reconcile applies: the site's objects (a new cluster's too, so that `kubectl wait`
   * finds it) and, on the objects of each cluster with work, Reconciling True and Ready
   * Unknown (`Progressing`, as Flux's controllers say while they work). The rest of the status
   * stays as the last reconcile left it; the next sync writes the outcome.
   */
  async progress(
    site: NonNullable<KubeStatusInput['site']>,
    working: ReadonlyMap<string, readonly string[]>,
  ): Promise<void> {
    const now = new Date((this.opts.now ?? Date.now)()).toISOString();
    for (const d of desiredObjects(site.model, site.documents, this.namespace, site.revision)) {
      if (!this.opts.statusOnly) await this.apply(d);
      const actions = d.cluster ? working.get(d.cluster) : undefined;
      if (!actions) continue;
      const message = `applying ${actions.join(', ')}`;
      await this.patchStatus(d.object.kind, d.object.metadata.name, undefined, (current) => {
        const generation = current.metadata.generation ?? 1;
        const conditions = conditionsOf(
          {
            ready: { status: 'Unknown', reason: 'Progressing', message },
            reconciling: { reason: 'Progressing', message },
          },
          generation,
          current.status?.conditions,
          now,
        );
        const others = (current.status?.conditions ?? []).filter(
          (c) => !BPA_CONDITIONS.has(c.type),
        );
        return {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          status: { observedGeneration: generation, conditions: [...conditions, ...others] },
        };
      });
    }
  }

  /**
   * A merge patch of an object's status made from the object as read now (or as the apply
   * just answered, `first`), guarded by its resourceVersion: a concurrent write (409) is read
   * again and the patch made again. Returns the object the patch was made from.
   */
  private async patchStatus(
    kind: BpaKind,
    name: string,
    first: Stored | undefined,
    build: (current: Stored) => Record<string, unknown>,
  ): Promise<Stored | undefined> {
    for (let attempt = 1; ; attempt++) {
      const current = attempt === 1 && first ? first : await this.get(kind, name);
      if (!current) return undefined;
      const body = build(current);
      await this.opts.beforeStatusWrite?.(kind, name);
      try {
        await this.api.patchNamespacedCustomObjectStatus(
          { ...this.path(kind), name, body, fieldManager: FIELD_MANAGER },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return current;
      } catch (err: unknown) {
        if (httpStatus(err) !== 409 || attempt >= 5)
          throw explainApiError(
            err,
            'KUBE_STATUS_FAILED',
            `write the status of ${kind} ${name}`,
            `patch on ${PLURALS[kind]}/status in namespace ${this.namespace}`,
          );
        this.statusConflicts += 1;
        this.log.debug({ kind, name, attempt }, 'status conflict: read and write again');
      }
    }
  }

  /** Deletes bpa's objects whose documents left the site (only those bpa labelled). */
  private async prune(keep: ReadonlySet<string>): Promise<void> {
    for (const kind of KINDS) {
      const list = (await this.call(`list ${PLURALS[kind]}`, `list on ${PLURALS[kind]}`, () =>
        this.api.listNamespacedCustomObject({
          ...this.path(kind),
          labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
        }),
      )) as { items: Stored[] };
      for (const item of list.items) {
        if (keep.has(`${kind}/${item.metadata.name}`)) continue;
        this.log.info({ kind, name: item.metadata.name }, 'object no longer in the site: deleted');
        try {
          await this.api.deleteNamespacedCustomObject({
            ...this.path(kind),
            name: item.metadata.name,
          });
        } catch (err: unknown) {
          if (httpStatus(err) !== 404)
            throw explainApiError(
              err,
              'KUBE_STATUS_FAILED',
              `delete ${kind} ${item.metadata.name}`,
              `delete on ${PLURALS[kind]} in namespace ${this.namespace}`,
            );
        }
      }
    }
  }

  private async get(kind: BpaKind, name: string): Promise<Stored | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ ...this.path(kind), name })) as Stored;
    } catch (err: unknown) {
      if (httpStatus(err) === 404) return undefined;
      throw explainApiError(
        err,
        'KUBE_STATUS_FAILED',
        `read ${kind} ${name}`,
        `get on ${PLURALS[kind]} in namespace ${this.namespace}`,
      );
    }
  }

  private async event(e: BpaEvent): Promise<void> {
    try {
      await this.events.record(e);
    } catch (err: unknown) {
      // An Event is a courtesy: one that cannot be written never stops the status.
      this.log.warn(
        {
          reason: e.reason,
          err: explainApiError(
            err,
            'KUBE_STATUS_FAILED',
            'write an Event',
            `create and patch on events.events.k8s.io in namespace ${this.namespace}`,
          ).message,
        },
        'Event not written',
      );
    }
  }

  private regarding(kind: BpaKind, stored: Stored): Regarding {
    return {
      apiVersion: API_VERSION,
      kind,
      name: stored.metadata.name,
      namespace: this.namespace,
      uid: stored.metadata.uid,
    };
  }

  private path(kind: BpaKind): {
    group: string;
    version: string;
    namespace: string;
    plural: string;
  } {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURALS[kind] };
  }

  private async call<T>(action: string, permission: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'KUBE_STATUS_FAILED',
        action,
        `${permission} in namespace ${this.namespace}`,
      );
    }
  }
}

/** The fields of a status bpa writes; any other is another writer's and is left alone. */
const BPA_STATUS_FIELDS: ReadonlyArray<keyof ObjectStatus> = [
  'observedGeneration',
  'conditions',
  'lastHandledReconcileAt',
  'lastAppliedRevision',
  'lastAttemptedRevision',
  'planHash',
  'nodes',
  'nodeStatuses',
  'lastOperations',
  'kubeconfigSecretRef',
  'history',
];
const BPA_CONDITIONS = new Set(['Ready', 'Reconciling', 'Stalled']);

/**
 * A JSON merge patch of the status, guarded by the resourceVersion read (a concurrent write
 * is a 409, read again): bpa's fields set, those it no longer writes removed, the conditions
 * of other types kept where they were, everything else untouched. A merge patch and not an
 * apply: Kubernetes before 1.22 merges a CRD's lists under x-kubernetes-preserve-unknown-fields
 * whole, and an apply of bpa's conditions would drop another writer's.
 */
export function statusPatch(current: Stored, status: ObjectStatus): Record<string, unknown> {
  const others = (current.status?.conditions ?? []).filter((c) => !BPA_CONDITIONS.has(c.type));
  const out: Record<string, unknown> = {};
  for (const key of BPA_STATUS_FIELDS) out[key] = status[key] ?? null;
  out['conditions'] = [...status.conditions, ...others];
  return { metadata: { resourceVersion: current.metadata.resourceVersion }, status: out };
}

interface Reports {
  site?: SiteStatusDoc;
  clusters: Map<string, ClusterStatusDoc>;
}

function parseReports(texts: ReadonlyMap<string, string>): Reports {
  const out: Reports = { clusters: new Map() };
  for (const [path, text] of texts) {
    // The inventory (every host) is no object's status: not parsed for nothing.
    if (!path.startsWith(`${STATUS_DIR}/`) || path === INVENTORY_REPORT) continue;
    let doc: unknown;
    try {
      doc = parseReport(text);
    } catch {
      continue;
    }
    const kind = (doc as { kind?: unknown } | undefined)?.kind;
    if (kind === 'SiteStatus') out.site = doc as SiteStatusDoc;
    if (kind === 'ClusterStatus') {
      const c = doc as ClusterStatusDoc;
      out.clusters.set(c.metadata.name, c);
    }
  }
  return out;
}

/** Equal as JSON values, whatever the order of keys; a null field is an absent one. */
function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null)
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== null)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}
