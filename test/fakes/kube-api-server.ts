// A Kubernetes API server that speaks just enough of the real protocol (JSON over HTTP, list
// pagination, selectors, watch with resourceVersion, Status errors) for bpa's tests to drive it
// through the real @kubernetes/client-node. It keeps everything in memory; nothing is persisted.
//
// Where kube-apiserver's behaviour has bitten bpa, the fake does the same: DeleteOptions are
// read from the body of a DELETE and from its query only when it has no body; a batch/v1 Job
// orphans its pods unless told otherwise, and a garbage collector orphans or deletes
// dependents; the log of a pod with no node is 204 without a Content-Type; a namespace that
// does not exist lists as empty; custom resources of a CRD created through the API are
// pruned and validated against its schema (kube-crd-schema.ts).
import http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type CrdSchema,
  type FieldError,
  fieldErrorText,
  pruneNonNullableNulls,
  pruneUnknownFields,
  validateAgainstSchema,
} from './kube-crd-schema.js';
import { kubeConfigFor, writeKubeconfig } from './kubeconfig.js';

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  /** Writes to the main resource keep the stored `.status`; `/status` writes change only it. */
  statusSubresource: boolean;
  /** Built-in types omit kind/apiVersion on list items, as the real server does; CRDs keep them. */
  builtin: boolean;
  /** DELETE answers with the deleted object (pods, custom resources) instead of a Status. */
  returnsDeletedObject: boolean;
  /** The CRD's openAPIV3Schema: writes are pruned and validated against it, as the real server does. */
  schema?: CrdSchema;
}

export interface FakeKubeOptions {
  /** Delay before every response, to expose ordering and timeout assumptions. */
  latencyMs?: number;
  /** How many watch events are kept for `?watch&resourceVersion=N` replays (default 1000). */
  historyLimit?: number;
  /** Bearer token the server expects (default: a random one, written into the kubeconfig). */
  token?: string;
  /** Reject requests without the token with 401 (default true). */
  requireAuth?: boolean;
  /** Extra resource types served next to the built-in table. */
  resources?: ResourceType[];
  /** Clock for creationTimestamp/deletionTimestamp. */
  now?: () => Date;
  /**
   * Delay before the garbage collector acts on a deletion (orphaning or deleting dependents,
   * then lifting its finalizer), as the real one does shortly after the DELETE (default 0).
   */
  gcDelayMs?: number;
  /**
   * Which policy group version the server serves, as its Kubernetes version does: 'v1'
   * (default; 1.22 and newer), 'v1beta1' (1.20 and older: PodDisruptionBudget and the Eviction
   * of `pods/eviction` are policy/v1beta1 only, and a policy/v1 Eviction is refused as
   * kube-apiserver's decoder refuses a kind its scheme does not know), or 'none' (a server
   * without the Eviction API: no policy group, no `pods/eviction`). Discovery and /version
   * follow it.
   */
  policyVersion?: 'v1' | 'v1beta1' | 'none';
}

export interface RecordedRequest {
  method: string;
  /** URL path, still percent-encoded as sent. */
  path: string;
  query: Record<string, string>;
  contentType?: string;
  /** Parsed JSON body of writes. */
  body?: unknown;
}

export interface FaultMatch {
  method?: string;
  pathPrefix?: string;
  /** How many matching requests fail; unlimited when omitted (see `clearFaults`). */
  times?: number;
}

export interface FaultSpec {
  code: number;
  message: string;
  /** Status reason; derived from the code when omitted (403 Forbidden, 500 InternalError, …). */
  reason?: string;
}

function matches(match: FaultMatch, method: string, pathname: string): boolean {
  return (
    (match.method === undefined || match.method.toUpperCase() === method) &&
    (match.pathPrefix === undefined || pathname.startsWith(match.pathPrefix))
  );
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface FakeKube {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly token: string;
  /** A kubeconfig file for this server (token user, insecure-skip-tls-verify). Removed by stop(). */
  readonly kubeconfigPath: string;
  /** Every request received, in arrival order (including failed and faulted ones). */
  readonly requests: RecordedRequest[];
  kubeConfig(namespace?: string): KubeConfig;
  /** Create or replace an object directly (no preconditions, status kept); watchers see it. */
  put(obj: KubeObject): KubeObject;
  get(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): KubeObject | undefined;
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  /** Remove at once, ignoring finalizers; watchers see DELETED. False when it was absent. */
  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean;
  /** Replace `.status` as a controller would; watchers see MODIFIED. Throws when absent. */
  updateStatus(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    status: unknown,
  ): KubeObject;
  /** Text served by GET .../pods/NAME/log (the pod itself must exist, as on a real server). */
  setPodLog(namespace: string, name: string, text: string): void;
  fail(match: FaultMatch, fault: FaultSpec): void;
  clearFaults(): void;
  /**
   * Requests that match wait, unanswered, until `release()` (or `stop()`): a write that hangs
   * exactly where a test wants bpa to be when it is killed.
   */
  hold(match: FaultMatch): void;
  release(): void;
  setLatency(ms: number): void;
  /** The newest resourceVersion handed out. */
  resourceVersion(): string;
  /** Watch streams currently open. */
  openWatches(): number;
  /** Ends every open watch stream, as a server does when a watch times out. */
  endWatches(): void;
  stop(): Promise<void>;
}

export const DEFAULT_RESOURCES: readonly ResourceType[] = [
  core('namespaces', 'namespace', 'Namespace', false, true),
  core('secrets', 'secret', 'Secret', true, false),
  core('configmaps', 'configmap', 'ConfigMap', true, false),
  { ...core('pods', 'pod', 'Pod', true, true), returnsDeletedObject: true },
  core('nodes', 'node', 'Node', false, true),
  builtin('apps', 'v1', 'daemonsets', 'daemonset', 'DaemonSet', true),
  builtin('apps', 'v1', 'replicasets', 'replicaset', 'ReplicaSet', true),
  builtin(
    'policy',
    'v1',
    'poddisruptionbudgets',
    'poddisruptionbudget',
    'PodDisruptionBudget',
    true,
  ),
  builtin('batch', 'v1', 'jobs', 'job', 'Job', true),
  builtin('coordination.k8s.io', 'v1', 'leases', 'lease', 'Lease', false),
  {
    ...builtin(
      'apiextensions.k8s.io',
      'v1',
      'customresourcedefinitions',
      'customresourcedefinition',
      'CustomResourceDefinition',
      true,
    ),
    namespaced: false,
  },
  custom('metal3.io', 'v1alpha1', 'baremetalhosts', 'baremetalhost', 'BareMetalHost', true),
  custom('metal3.io', 'v1alpha1', 'hardwaredata', 'hardwaredata', 'HardwareData', false),
];

function core(
  plural: string,
  singular: string,
  kind: string,
  namespaced: boolean,
  statusSubresource: boolean,
): ResourceType {
  const base = builtin('', 'v1', plural, singular, kind, statusSubresource);
  return { ...base, namespaced };
}

function builtin(
  group: string,
  version: string,
  plural: string,
  singular: string,
  kind: string,
  statusSubresource: boolean,
): ResourceType {
  const t = { group, version, plural, singular, kind, namespaced: true, statusSubresource };
  return { ...t, builtin: true, returnsDeletedObject: false };
}

function custom(
  group: string,
  version: string,
  plural: string,
  singular: string,
  kind: string,
  statusSubresource: boolean,
): ResourceType {
  const t = { group, version, plural, singular, kind, namespaced: true, statusSubresource };
  return { ...t, builtin: false, returnsDeletedObject: true };
}

/** A Node that reports Ready, as kubelet leaves it. */
export function readyNode(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/**
 * The cordon and uncordon PATCHes among `requests`, in order, as `node=true|false`
 * (`spec.unschedulable`), for tests of rolling changes.
 */
export function cordonPatches(requests: readonly RecordedRequest[]): string[] {
  return requests
    .filter((x) => x.method === 'PATCH' && x.path.startsWith('/api/v1/nodes/'))
    .map(
      (x) =>
        `${x.path.slice('/api/v1/nodes/'.length)}=${String((x.body as Array<{ value: boolean }>)[0]?.value)}`,
    );
}

export async function startFakeKube(opts: FakeKubeOptions = {}): Promise<FakeKube> {
  const fake = new FakeKubeServer(opts);
  await fake.start();
  return fake;
}

// ---------------------------------------------------------------------------------------------

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

class StatusError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason: string = REASONS[code] ?? 'Unknown',
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/**
 * kube-apiserver's answer to a path nothing serves (an unknown group/version, resource or
 * subresource): a NotFound naming nothing, so its details are empty rather than absent.
 */
function noSuchPath(): StatusError {
  return new StatusError(404, 'the server could not find the requested resource', 'NotFound', {});
}

interface StoredEvent {
  rv: number;
  type: WatchEventType;
  rt: ResourceType;
  object: KubeObject;
  previous?: KubeObject;
}

interface Watcher {
  rt: ResourceType;
  namespace?: string;
  matches: (obj: KubeObject) => boolean;
  res: http.ServerResponse;
}

interface Fault {
  match: FaultMatch;
  spec: FaultSpec;
  remaining: number;
}

type WriteMode = 'main' | 'status' | 'direct';

class FakeKubeServer implements FakeKube {
  url = '';
  kubeconfigPath = '';
  readonly token: string;
  readonly requests: RecordedRequest[] = [];

  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private types: ResourceType[];
  private readonly objects = new Map<ResourceType, Map<string, KubeObject>>();
  private readonly logs = new Map<string, string>();
  private readonly history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private faults: Fault[] = [];
  private gcPending = false;
  private rv = 0;
  // Events at or below this resourceVersion have been dropped from the history.
  private compactedRv = 0;
  private latencyMs: number;
  private holds: FaultMatch[] = [];
  private held: Array<() => void> = [];
  private tempDir = '';
  private stopped = false;

  constructor(private readonly opts: FakeKubeOptions) {
    this.token = opts.token ?? `bpa-fake-${randomBytes(8).toString('hex')}`;
    this.latencyMs = opts.latencyMs ?? 0;
    const policy = opts.policyVersion ?? 'v1';
    const builtins = DEFAULT_RESOURCES.flatMap((t) => {
      if (t.group !== 'policy' || policy === 'v1') return [t];
      return policy === 'none' ? [] : [{ ...t, version: policy }];
    });
    this.types = [...builtins, ...(opts.resources ?? [])];
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = this.server.address();
    if (addr === null || typeof addr === 'string') throw new Error('fake kube: no TCP address');
    this.url = `http://127.0.0.1:${addr.port}`;
    this.tempDir = await mkdtemp(path.join(tmpdir(), 'bpa-fake-kube-'));
    this.kubeconfigPath = await writeKubeconfig(path.join(this.tempDir, 'kubeconfig'), {
      server: this.url,
      token: this.token,
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const wake of this.held.splice(0)) wake();
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    if (this.tempDir) await rm(this.tempDir, { recursive: true, force: true });
  }

  kubeConfig(namespace?: string): KubeConfig {
    return kubeConfigFor({ server: this.url, token: this.token, namespace });
  }

  // --- test helpers ---------------------------------------------------------------------------

  put(obj: KubeObject): KubeObject {
    const rt = this.typeFor(obj.apiVersion, obj.kind);
    const ns = rt.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined;
    const name = obj.metadata?.name;
    if (!name) throw new Error('fake kube put: metadata.name is required');
    if (this.bucket(rt).has(objectKey(ns, name))) return this.replace(rt, ns, name, obj, 'direct');
    return this.create(rt, ns, obj, 'direct');
  }

  get(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): KubeObject | undefined {
    const rt = this.typeFor(apiVersion, kind);
    const found = this.bucket(rt).get(objectKey(rt.namespaced ? namespace : undefined, name));
    return found ? structuredClone(found) : undefined;
  }

  list(apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    const rt = this.typeFor(apiVersion, kind);
    return this.sorted(rt, namespace).map((o) => structuredClone(o));
  }

  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean {
    const rt = this.typeFor(apiVersion, kind);
    const ns = rt.namespaced ? namespace : undefined;
    const current = this.bucket(rt).get(objectKey(ns, name));
    if (!current) return false;
    this.commit(rt, 'DELETED', structuredClone(current), current);
    return true;
  }

  updateStatus(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    status: unknown,
  ): KubeObject {
    const rt = this.typeFor(apiVersion, kind);
    const ns = rt.namespaced ? namespace : undefined;
    const current = this.bucket(rt).get(objectKey(ns, name));
    if (!current) throw new Error(`fake kube updateStatus: ${kind} ${ns ?? ''}/${name} not found`);
    return this.replace(rt, ns, name, { ...structuredClone(current), status }, 'direct');
  }

  setPodLog(namespace: string, name: string, text: string): void {
    this.logs.set(objectKey(namespace, name), text);
  }

  fail(match: FaultMatch, spec: FaultSpec): void {
    this.faults.push({ match, spec, remaining: match.times ?? Number.POSITIVE_INFINITY });
  }

  clearFaults(): void {
    this.faults = [];
  }

  hold(match: FaultMatch): void {
    this.holds.push(match);
  }

  release(): void {
    this.holds = [];
    for (const wake of this.held.splice(0)) wake();
  }

  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  openWatches(): number {
    return this.watchers.size;
  }

  endWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  // --- storage ---------------------------------------------------------------------------------

  private typeFor(apiVersion: string, kind: string): ResourceType {
    const rt = this.types.find((t) => groupVersion(t) === apiVersion && t.kind === kind);
    if (!rt) throw new Error(`fake kube: unknown type ${apiVersion} ${kind}`);
    return rt;
  }

  private bucket(rt: ResourceType): Map<string, KubeObject> {
    let b = this.objects.get(rt);
    if (!b) {
      b = new Map();
      this.objects.set(rt, b);
    }
    return b;
  }

  private sorted(rt: ResourceType, namespace?: string): KubeObject[] {
    return [...this.bucket(rt).values()]
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
      .sort(compareObjects);
  }

  private now(): string {
    const d = this.opts.now ? this.opts.now() : new Date();
    return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  /** Stores the object under a fresh resourceVersion and tells the watchers. */
  private commit(
    rt: ResourceType,
    type: WatchEventType,
    next: KubeObject,
    previous?: KubeObject,
  ): KubeObject {
    this.rv += 1;
    next.metadata.resourceVersion = String(this.rv);
    const key = objectKey(next.metadata.namespace, next.metadata.name ?? '');
    if (type === 'DELETED') this.bucket(rt).delete(key);
    else this.bucket(rt).set(key, next);
    if (type === 'DELETED' && rt.kind === 'Pod') this.logs.delete(key);
    if (rt.group === 'apiextensions.k8s.io' && rt.kind === 'CustomResourceDefinition')
      this.serveCrd(type, next);
    // Any deletion may leave dependents without an owner: the collector has a look.
    if (type === 'DELETED') this.scheduleGc();

    const event: StoredEvent = { rv: this.rv, type, rt, object: structuredClone(next), previous };
    this.history.push(event);
    const limit = this.opts.historyLimit ?? 1000;
    while (this.history.length > limit) {
      const dropped = this.history.shift();
      if (dropped) this.compactedRv = dropped.rv;
    }
    for (const w of this.watchers) deliver(w, event);
    return structuredClone(next);
  }

  private create(
    rt: ResourceType,
    ns: string | undefined,
    body: unknown,
    mode: WriteMode,
    fieldValidation?: string,
  ): KubeObject {
    const obj = asObject(body, rt);
    checkTypeMeta(obj, rt);
    const meta = obj.metadata;
    if (rt.namespaced) {
      if (meta.namespace && ns && meta.namespace !== ns) {
        throw new StatusError(
          400,
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = ns ?? meta.namespace ?? 'default';
    } else {
      delete meta.namespace;
    }
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomSuffix();
    if (!meta.name) {
      throw new StatusError(
        422,
        `${rt.kind} "" is invalid: metadata.name: Required value: name or generateName is required`,
      );
    }
    if (mode !== 'direct') admitCustom(rt, obj, meta.name, fieldValidation);
    if (this.bucket(rt).has(objectKey(meta.namespace, meta.name))) {
      throw new StatusError(
        409,
        `${qualified(rt)} "${meta.name}" already exists`,
        'AlreadyExists',
        details(rt, meta.name),
      );
    }
    if (mode === 'main' && rt.statusSubresource) delete obj.status;
    meta.uid = randomUUID();
    meta.creationTimestamp = this.now();
    delete meta.deletionTimestamp;
    if (rt.statusSubresource) meta.generation = 1;
    prepareForWrite(rt, obj);
    return this.commit(rt, 'ADDED', obj);
  }

  private replace(
    rt: ResourceType,
    ns: string | undefined,
    name: string,
    body: unknown,
    mode: WriteMode,
    fieldValidation?: string,
  ): KubeObject {
    const current = this.bucket(rt).get(objectKey(ns, name));
    if (!current) throw notFound(rt, name);
    const given = asObject(body, rt);
    checkTypeMeta(given, rt);
    if (given.metadata.name !== undefined && given.metadata.name !== name) {
      throw new StatusError(
        400,
        `the name of the object (${given.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const givenRv = given.metadata.resourceVersion;
    if (mode !== 'direct' && givenRv && givenRv !== current.metadata.resourceVersion) {
      throw conflict(rt, name);
    }

    let next: KubeObject;
    if (mode === 'status') {
      next = structuredClone(current);
      if (given.status === undefined) delete next.status;
      else next.status = given.status;
    } else {
      next = given;
      if (mode === 'main' && rt.statusSubresource) {
        if (current.status === undefined) delete next.status;
        else next.status = structuredClone(current.status);
      }
    }
    const meta = next.metadata;
    meta.name = name;
    if (rt.namespaced) meta.namespace = current.metadata.namespace;
    else delete meta.namespace;
    meta.uid = current.metadata.uid;
    meta.creationTimestamp = current.metadata.creationTimestamp;
    if (current.metadata.deletionTimestamp)
      meta.deletionTimestamp = current.metadata.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (rt.statusSubresource) {
      const generation = current.metadata.generation ?? 1;
      meta.generation = specChanged(current, next) ? generation + 1 : generation;
    }
    if (mode !== 'direct') admitCustom(rt, next, name, fieldValidation);
    prepareForWrite(rt, next);
    meta.resourceVersion = current.metadata.resourceVersion;

    // A no-op write changes nothing, not even the resourceVersion, and wakes no watcher.
    if (stableJson(next) === stableJson(current)) return structuredClone(current);
    if (meta.deletionTimestamp && (meta.finalizers ?? []).length === 0) {
      return this.commit(rt, 'DELETED', next, current);
    }
    return this.commit(rt, 'MODIFIED', next, current);
  }

  private patch(
    rt: ResourceType,
    ns: string | undefined,
    name: string,
    contentType: string,
    patch: unknown,
    mode: WriteMode,
    fieldValidation?: string,
  ): KubeObject {
    const current = this.bucket(rt).get(objectKey(ns, name));
    if (!current) throw notFound(rt, name);
    let result: unknown;
    if (contentType === 'application/json-patch+json') {
      result = applyJsonPatch(structuredClone(current), patch);
    } else if (
      contentType === 'application/merge-patch+json' ||
      contentType === 'application/strategic-merge-patch+json'
    ) {
      if (!isRecord(patch)) throw new StatusError(400, 'a merge patch must be a JSON object');
      result = mergePatch(structuredClone(current), patch);
    } else {
      throw new StatusError(
        415,
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
      );
    }
    // The stored resourceVersion survives the patch unless the patch names one: then it is a
    // precondition, exactly as on a real server.
    return this.replace(
      rt,
      ns,
      name,
      result,
      mode === 'status' ? 'status' : 'main',
      fieldValidation,
    );
  }

  private remove(
    rt: ResourceType,
    ns: string | undefined,
    name: string,
    body: unknown,
    query: Record<string, string>,
  ): { code: number; body: unknown } {
    const current = this.bucket(rt).get(objectKey(ns, name));
    if (!current) throw notFound(rt, name);
    const opts = deleteOptions(body, query);
    const pre = opts.preconditions;
    if (
      (pre.resourceVersion !== undefined &&
        pre.resourceVersion !== current.metadata.resourceVersion) ||
      (pre.uid !== undefined && pre.uid !== current.metadata.uid)
    ) {
      throw conflict(rt, name);
    }
    if (opts.dryRun) return { code: 200, body: structuredClone(current) };
    const policy = opts.propagationPolicy ?? defaultPropagation(rt);
    const { gone, obj } = this.deleteObject(rt, current, policy);
    if (!gone) {
      // 202 only where the real server sends it: a cascading delete asked for the old way.
      return { code: opts.orphanDependents === false ? 202 : 200, body: obj };
    }
    if (rt.returnsDeletedObject) return { code: 200, body: obj };
    return {
      code: 200,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { ...details(rt, name), uid: current.metadata.uid },
      },
    };
  }

  /**
   * Deletes as the real registry does: Orphan and Foreground deletions put the garbage
   * collector's finalizer (`orphan`, `foregroundDeletion`) on the object, and any finalizer
   * postpones the deletion to when the last one is lifted.
   */
  private deleteObject(
    rt: ResourceType,
    current: KubeObject,
    policy: Propagation,
  ): { gone: boolean; obj: KubeObject } {
    const finalizers = [...(current.metadata.finalizers ?? [])];
    const gcFinalizer = GC_FINALIZERS[policy];
    if (gcFinalizer && !finalizers.includes(gcFinalizer)) finalizers.push(gcFinalizer);
    if (finalizers.length === 0)
      return { gone: true, obj: this.commit(rt, 'DELETED', structuredClone(current), current) };
    const unchanged =
      current.metadata.deletionTimestamp !== undefined &&
      finalizers.length === (current.metadata.finalizers ?? []).length;
    if (unchanged) return { gone: false, obj: structuredClone(current) };
    const next = structuredClone(current);
    next.metadata.finalizers = finalizers;
    next.metadata.deletionTimestamp = current.metadata.deletionTimestamp ?? this.now();
    const stored = this.commit(rt, 'MODIFIED', next, current);
    this.scheduleGc();
    return { gone: false, obj: stored };
  }

  // --- garbage collector ------------------------------------------------------------------------

  private scheduleGc(): void {
    if (this.stopped || this.gcPending) return;
    this.gcPending = true;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.gcPending = false;
      if (!this.stopped) this.collectGarbage();
    }, this.opts.gcDelayMs ?? 0);
    this.timers.add(t);
  }

  private everything(): Array<{ rt: ResourceType; obj: KubeObject }> {
    return [...this.objects.entries()].flatMap(([rt, bucket]) =>
      [...bucket.values()].map((obj) => ({ rt, obj })),
    );
  }

  private dependentsOf(uid: string | undefined): Array<{ rt: ResourceType; obj: KubeObject }> {
    return this.everything().filter(({ obj }) => ownerUids(obj).includes(uid ?? '\u0000'));
  }

  /**
   * One pass of the garbage collector: an owner deleted with `orphan` loses its owner
   * references from its dependents, one deleted with `foregroundDeletion` loses its
   * dependents, and then the finalizer is lifted; a dependent whose owners are all gone is
   * deleted (Background).
   */
  private collectGarbage(): void {
    for (const { rt, obj } of this.everything()) {
      const finalizers = obj.metadata.finalizers ?? [];
      if (!obj.metadata.deletionTimestamp) continue;
      const uid = obj.metadata.uid;
      if (finalizers.includes('orphan')) {
        for (const dep of this.dependentsOf(uid)) {
          const next = structuredClone(dep.obj);
          const refs = ((next.metadata.ownerReferences ?? []) as unknown[]).filter(
            (r) => !(isRecord(r) && r.uid === uid),
          );
          if (refs.length > 0) next.metadata.ownerReferences = refs;
          else delete next.metadata.ownerReferences;
          this.commit(dep.rt, 'MODIFIED', next, dep.obj);
        }
        this.liftFinalizer(rt, obj, 'orphan');
      } else if (finalizers.includes('foregroundDeletion')) {
        for (const dep of this.dependentsOf(uid)) {
          const current = this.bucket(dep.rt).get(keyString(dep.obj));
          if (current) this.deleteObject(dep.rt, current, 'Foreground');
        }
        if (this.dependentsOf(uid).length === 0) this.liftFinalizer(rt, obj, 'foregroundDeletion');
      }
    }
    const alive = new Set(this.everything().map(({ obj }) => obj.metadata.uid));
    for (const { rt, obj } of this.everything()) {
      const owners = ownerUids(obj);
      if (owners.length === 0 || obj.metadata.deletionTimestamp) continue;
      if (owners.some((uid) => alive.has(uid))) continue;
      const current = this.bucket(rt).get(keyString(obj));
      if (current) this.deleteObject(rt, current, 'Background');
    }
  }

  private liftFinalizer(rt: ResourceType, obj: KubeObject, finalizer: string): void {
    const current = this.bucket(rt).get(keyString(obj));
    if (!current) return;
    const next = structuredClone(current);
    next.metadata.finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    if (next.metadata.finalizers.length === 0) {
      delete next.metadata.finalizers;
      this.commit(rt, 'DELETED', next, current);
    } else {
      this.commit(rt, 'MODIFIED', next, current);
    }
  }

  // --- custom resource definitions ---------------------------------------------------------------

  /** A stored CRD serves its kind at once (a real server takes a moment to establish it). */
  private serveCrd(type: WatchEventType, crd: KubeObject): void {
    const spec = isRecord(crd.spec) ? crd.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    const group = String(spec.group ?? '');
    const plural = String(names.plural ?? '');
    const kind = String(names.kind ?? '');
    const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
    const served = type === 'DELETED' ? [] : versions.filter((v) => v.served === true);
    for (const rt of this.types.filter((t) => t.group === group && t.plural === plural)) {
      if (served.some((v) => v.name === rt.version)) continue;
      this.types = this.types.filter((t) => t !== rt);
      this.objects.delete(rt);
    }
    for (const v of served) {
      const schemaDoc = isRecord(v.schema) ? v.schema.openAPIV3Schema : undefined;
      const statusSubresource = isRecord(v.subresources) && isRecord(v.subresources.status);
      const singular = String(names.singular ?? kind.toLowerCase());
      const next: ResourceType = {
        ...custom(group, String(v.name), plural, singular, kind, statusSubresource),
        namespaced: spec.scope !== 'Cluster',
      };
      if (isRecord(schemaDoc)) next.schema = structuredClone(schemaDoc) as CrdSchema;
      const existing = this.types.find(
        (t) => t.group === group && t.version === next.version && t.plural === plural,
      );
      if (existing) {
        delete existing.schema;
        Object.assign(existing, next);
      } else {
        this.types.push(next);
      }
    }
  }

  // --- HTTP ------------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    const contentType =
      (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      return; // client went away mid-request
    }
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
    };
    if (contentType) record.contentType = contentType;
    let bodyError: StatusError | undefined;
    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
        record.body = body;
      } catch {
        bodyError = new StatusError(
          400,
          `the request body is not valid JSON (content type ${contentType || 'unset'})`,
        );
      }
    }
    this.requests.push(record);

    if (this.latencyMs > 0) await this.sleep(this.latencyMs);
    if (this.holds.some((m) => matches(m, method, url.pathname))) {
      await new Promise<void>((resolve) => this.held.push(resolve));
    }
    if (this.stopped) return;
    try {
      this.checkAuth(req);
      this.checkFaults(method, url.pathname);
      if (bodyError) throw bodyError;
      this.route(res, method, url, contentType, body);
    } catch (err: unknown) {
      const message = err instanceof Error ? err.message : String(err);
      const status =
        err instanceof StatusError ? err : new StatusError(500, `fake kube: ${message}`);
      sendJson(res, status.code, status.toStatus());
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private checkAuth(req: http.IncomingMessage): void {
    if (this.opts.requireAuth === false) return;
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      throw new StatusError(
        401,
        'Unauthorized: the fake API server expects the bearer token from its kubeconfig',
      );
    }
  }

  private checkFaults(method: string, pathname: string): void {
    const fault = this.faults.find((f) => f.remaining > 0 && matches(f.match, method, pathname));
    if (!fault) return;
    fault.remaining -= 1;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    throw new StatusError(fault.spec.code, fault.spec.message, fault.spec.reason);
  }

  private route(
    res: http.ServerResponse,
    method: string,
    url: URL,
    contentType: string,
    body: unknown,
  ): void {
    const seg = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const query = Object.fromEntries(url.searchParams);
    const [first] = seg;
    if (first === 'version' && seg.length === 1) {
      const minor = this.policyVersion() === 'v1' ? '31' : '20';
      return sendJson(res, 200, {
        major: '1',
        minor,
        gitVersion: `v1.${minor}.0-bpa-fake`,
        platform: 'linux/amd64',
      });
    }
    if ((first === 'healthz' || first === 'readyz' || first === 'livez') && seg.length === 1) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (first === 'api') {
      if (seg.length === 1) return sendJson(res, 200, this.apiVersions());
      group = '';
      version = seg[1];
      rest = seg.slice(2);
    } else if (first === 'apis') {
      if (seg.length === 1) return sendJson(res, 200, this.apiGroupList());
      group = seg[1] ?? '';
      if (seg.length === 2) {
        const g = this.apiGroupList().groups.find((x) => x.name === group);
        if (!g) throw noSuchPath();
        return sendJson(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...g });
      }
      version = seg[2];
      rest = seg.slice(3);
    } else {
      throw noSuchPath();
    }
    if (rest.length === 0) return sendJson(res, 200, this.resourceList(group, version ?? ''));

    let watch = query.watch === 'true' || query.watch === '1';
    if (rest[0] === 'watch') {
      watch = true;
      rest = rest.slice(1);
    }
    let ns: string | undefined;
    let parts = rest;
    const scoped =
      rest[0] === 'namespaces' && rest.length >= 3
        ? this.lookup(group, version, rest[2])
        : undefined;
    if (scoped?.namespaced) {
      ns = rest[1];
      parts = rest.slice(2);
    }
    const [plural, name, sub, ...extra] = parts;
    const rt = this.lookup(group, version, plural);
    if (!rt || extra.length > 0 || (rt.namespaced && ns === undefined && name !== undefined)) {
      throw noSuchPath();
    }

    if (name === undefined) {
      if (method === 'GET' && watch) return this.startWatch(res, rt, ns, query);
      if (method === 'GET') return sendJson(res, 200, this.listResponse(rt, ns, query));
      if (method === 'POST' && (ns !== undefined || !rt.namespaced)) {
        return sendJson(res, 201, this.create(rt, ns, body, 'main', query.fieldValidation));
      }
      throw methodNotAllowed(method);
    }
    if (sub === undefined) {
      if (method === 'GET' && watch) {
        return this.startWatch(res, rt, ns, {
          ...query,
          fieldSelector: joinSelector(query.fieldSelector, `metadata.name=${name}`),
        });
      }
      if (method === 'GET') return sendJson(res, 200, this.read(rt, ns, name));
      if (method === 'PUT')
        return sendJson(res, 200, this.replace(rt, ns, name, body, 'main', query.fieldValidation));
      if (method === 'PATCH') {
        const patched = this.patch(rt, ns, name, contentType, body, 'main', query.fieldValidation);
        return sendJson(res, 200, patched);
      }
      if (method === 'DELETE') {
        const answer = this.remove(rt, ns, name, body, query);
        return sendJson(res, answer.code, answer.body);
      }
      throw methodNotAllowed(method);
    }
    if (sub === 'status' && rt.statusSubresource) {
      if (method === 'GET') return sendJson(res, 200, this.read(rt, ns, name));
      if (method === 'PUT')
        return sendJson(
          res,
          200,
          this.replace(rt, ns, name, body, 'status', query.fieldValidation),
        );
      if (method === 'PATCH') {
        const patched = this.patch(
          rt,
          ns,
          name,
          contentType,
          body,
          'status',
          query.fieldValidation,
        );
        return sendJson(res, 200, patched);
      }
      throw methodNotAllowed(method);
    }
    if (sub === 'log' && rt.group === '' && rt.plural === 'pods' && method === 'GET') {
      return this.sendLog(res, rt, ns, name, query);
    }
    if (sub === 'eviction' && rt.group === '' && rt.plural === 'pods' && this.evictionVersion()) {
      if (method !== 'POST') throw methodNotAllowed(method);
      return sendJson(res, 201, this.evict(rt, ns as string, name, body));
    }
    throw noSuchPath();
  }

  /**
   * POST .../pods/NAME/eviction, as kube-apiserver's eviction REST handler does it: the pod's
   * PodDisruptionBudget (its selector matches the pod's labels; more than one is an error) is
   * read, and an eviction its `status.disruptionsAllowed` does not allow is 429
   * TooManyRequests with a DisruptionBudget cause; an allowed one decrements it (the
   * disruption controller recomputes it later; here, whoever set it) and deletes the pod
   * with the Eviction's DeleteOptions. A pod already terminating is deleted without a check.
   */
  private evict(podType: ResourceType, ns: string, name: string, body: unknown): unknown {
    if (!isRecord(body) || body.kind !== 'Eviction')
      throw new StatusError(400, 'the body of an eviction must be a policy/v1 Eviction');
    // A server from before policy/v1 decodes the body with a scheme that has no policy/v1
    // kinds: the create handler turns the decoder's not-registered error into this 400.
    // Newer servers still decode a policy/v1beta1 Eviction, so only the old side refuses.
    if (this.policyVersion() === 'v1beta1' && body.apiVersion === 'policy/v1') {
      throw new StatusError(
        400,
        'Eviction in version "v1" cannot be handled as a Eviction: no kind "Eviction" is registered for version "policy/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
      );
    }
    const meta = isRecord(body.metadata) ? body.metadata : {};
    if (meta.name !== undefined && meta.name !== name)
      throw new StatusError(400, `name in URL does not match name in Eviction object`);
    const pod = this.read(podType, ns, name);
    const deleteOpts = isRecord(body.deleteOptions) ? body.deleteOptions : undefined;
    if (!pod.metadata.deletionTimestamp) {
      const pdbType = this.typeFor(`policy/${this.evictionVersion()}`, 'PodDisruptionBudget');
      const labels = pod.metadata.labels ?? {};
      const pdbs = this.sorted(pdbType, ns).filter((pdb) => {
        const sel = (pdb.spec as { selector?: { matchLabels?: Record<string, string> } })?.selector;
        const want = sel?.matchLabels ?? {};
        return (
          Object.keys(want).length > 0 && Object.entries(want).every(([k, v]) => labels[k] === v)
        );
      });
      if (pdbs.length > 1)
        throw new StatusError(
          500,
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        );
      const pdb = pdbs[0];
      if (pdb) {
        const status = (isRecord(pdb.status) ? pdb.status : {}) as { disruptionsAllowed?: number };
        const allowed = status.disruptionsAllowed ?? 0;
        if (allowed <= 0) {
          throw new StatusError(
            429,
            `Cannot evict pod as it would violate the pod's disruption budget.`,
            'TooManyRequests',
            {
              causes: [
                {
                  reason: 'DisruptionBudget',
                  message: `The disruption budget ${pdb.metadata.name} needs ${String((pdb.spec as Record<string, unknown>)?.minAvailable ?? '')} healthy pods and has ${allowed} disruptions allowed`,
                },
              ],
            },
          );
        }
        this.replace(
          pdbType,
          ns,
          pdb.metadata.name ?? '',
          { ...structuredClone(pdb), status: { ...status, disruptionsAllowed: allowed - 1 } },
          'direct',
        );
      }
    }
    this.remove(podType, ns, name, deleteOpts ?? undefined, {});
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }

  private lookup(
    group: string,
    version: string | undefined,
    plural: string | undefined,
  ): ResourceType | undefined {
    return this.types.find(
      (t) => t.group === group && t.version === version && t.plural === plural,
    );
  }

  private read(rt: ResourceType, ns: string | undefined, name: string): KubeObject {
    const found = this.bucket(rt).get(objectKey(ns, name));
    if (!found) throw notFound(rt, name);
    return found;
  }

  private listResponse(
    rt: ResourceType,
    ns: string | undefined,
    query: Record<string, string>,
  ): unknown {
    const matches = selectorMatcher(query);
    const items = this.sorted(rt, ns).filter(matches);
    // Paging (limit/continue) is the real kube-apiserver's part (test/k8s/envtest.ts, e.g.
    // test/integration/kube/inventory.test.ts): a list that would need a second page, or a
    // continue token, is refused here rather than answered with made-up paging.
    const limit = query.limit ? Number(query.limit) : 0;
    if (!Number.isInteger(limit) || limit < 0)
      throw new StatusError(400, `invalid limit ${query.limit}`);
    if (query.continue || (limit > 0 && items.length > limit))
      throw new StatusError(
        501,
        `the fake API server does not page lists (${items.length} items, limit ${limit}); test paging on the real kube-apiserver`,
      );
    const metadata: Record<string, unknown> = { resourceVersion: String(this.rv) };
    return {
      kind: `${rt.kind}List`,
      apiVersion: groupVersion(rt),
      metadata,
      items: items.map((o) => (rt.builtin ? withoutTypeMeta(o) : o)),
    };
  }

  private startWatch(
    res: http.ServerResponse,
    rt: ResourceType,
    ns: string | undefined,
    query: Record<string, string>,
  ): void {
    const matches = selectorMatcher(query);
    const from = query.resourceVersion;
    let since: number | undefined;
    if (from !== undefined && from !== '' && from !== '0') {
      since = Number(from);
      if (!Number.isInteger(since) || since < 0)
        throw new StatusError(400, `invalid resourceVersion ${from}`);
    }
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    const watcher: Watcher = { rt, matches, res };
    if (ns !== undefined) watcher.namespace = ns;

    if (since !== undefined && since < this.compactedRv) {
      // The real server answers 200 and then a single ERROR event; informers relist on it.
      const gone = new StatusError(
        410,
        `too old resource version: ${since} (${this.compactedRv})`,
        'Expired',
      );
      res.end(JSON.stringify({ type: 'ERROR', object: gone.toStatus() }) + '\n');
      return;
    }
    if (since === undefined) {
      for (const obj of this.sorted(rt, ns).filter(matches)) writeEvent(res, 'ADDED', obj);
    } else {
      for (const event of this.history) if (event.rv > since) deliver(watcher, event);
    }
    this.watchers.add(watcher);

    const timeout = Number(query.timeoutSeconds ?? '0');
    let timer: NodeJS.Timeout | undefined;
    if (Number.isFinite(timeout) && timeout > 0) {
      timer = setTimeout(() => res.end(), timeout * 1000);
      this.timers.add(timer);
    }
    res.on('close', () => {
      this.watchers.delete(watcher);
      if (timer) {
        clearTimeout(timer);
        this.timers.delete(timer);
      }
    });
  }

  private sendLog(
    res: http.ServerResponse,
    pods: ResourceType,
    ns: string | undefined,
    name: string,
    query: Record<string, string>,
  ): void {
    const pod = this.bucket(pods).get(objectKey(ns, name));
    if (!pod) throw notFound(pods, name);
    const podSpec = isRecord(pod.spec) ? pod.spec : {};
    const names = [podSpec.containers, podSpec.initContainers]
      .flatMap((list) => (Array.isArray(list) ? list : []))
      .map((c: unknown) => (isRecord(c) ? String(c.name) : ''));
    if (query.container !== undefined && names.length > 0 && !names.includes(query.container)) {
      throw new StatusError(400, `container ${query.container} is not valid for pod ${name}`);
    }
    if (typeof podSpec.nodeName !== 'string' || podSpec.nodeName === '') {
      // A pod not yet scheduled has no kubelet to ask: the real server answers 204 No Content,
      // with no body and no Content-Type.
      res.writeHead(204);
      res.end();
      return;
    }
    let text = this.logs.get(objectKey(ns, name)) ?? '';
    if (query.tailLines !== undefined) {
      const n = Number(query.tailLines);
      const lines = text.split(/(?<=\n)/);
      text = n > 0 ? lines.slice(-n).join('') : '';
    }
    if (query.limitBytes !== undefined)
      text = Buffer.from(text).subarray(0, Number(query.limitBytes)).toString();
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(text);
  }

  // --- discovery -------------------------------------------------------------------------------

  private policyVersion(): 'v1' | 'v1beta1' | 'none' {
    return this.opts.policyVersion ?? 'v1';
  }

  /** The version of the Eviction kind `pods/eviction` takes, or undefined when not served. */
  private evictionVersion(): 'v1' | 'v1beta1' | undefined {
    const v = this.policyVersion();
    return v === 'none' ? undefined : v;
  }

  private apiVersions(): Record<string, unknown> {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [
        { clientCIDR: '0.0.0.0/0', serverAddress: this.url.replace(/^http:\/\//, '') },
      ],
    };
  }

  private apiGroupList(): {
    kind: string;
    apiVersion: string;
    groups: Array<Record<string, unknown> & { name: string }>;
  } {
    const groups = new Map<string, string[]>();
    for (const t of this.types) {
      if (t.group === '') continue;
      const versions = groups.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      groups.set(t.group, versions);
    }
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].map(([name, versions]) => {
        const entries = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
        return { name, versions: entries, preferredVersion: entries[0] };
      }),
    };
  }

  private resourceList(group: string, version: string): Record<string, unknown> {
    const types = this.types.filter((t) => t.group === group && t.version === version);
    if (types.length === 0) throw noSuchPath();
    const verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    const resources: Array<Record<string, unknown>> = [];
    for (const t of types) {
      const base = { singularName: t.singular, namespaced: t.namespaced, kind: t.kind };
      resources.push({ name: t.plural, ...base, verbs });
      if (t.statusSubresource)
        resources.push({
          name: `${t.plural}/status`,
          ...base,
          singularName: '',
          verbs: ['get', 'patch', 'update'],
        });
      if (t.group === '' && t.plural === 'pods') {
        resources.push({ name: 'pods/log', ...base, singularName: '', verbs: ['get'] });
        // As since Kubernetes 1.8: the subresource names the group/version of the kind it
        // takes, which is how a client (kubectl drain) picks the Eviction version to send.
        const evictionVersion = this.evictionVersion();
        if (evictionVersion)
          resources.push({
            name: 'pods/eviction',
            singularName: '',
            namespaced: true,
            group: 'policy',
            version: evictionVersion,
            kind: 'Eviction',
            verbs: ['create'],
          });
      }
    }
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources,
    };
  }
}

// --- object helpers ----------------------------------------------------------------------------

function groupVersion(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

function qualified(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}

function details(rt: ResourceType, name: string): Record<string, unknown> {
  return { name, group: rt.group, kind: rt.plural };
}

type Propagation = 'Orphan' | 'Background' | 'Foreground';

const GC_FINALIZERS: Record<Propagation, string | undefined> = {
  Orphan: 'orphan',
  Foreground: 'foregroundDeletion',
  Background: undefined,
};

/** batch/v1 Jobs orphan their pods unless told otherwise, for compatibility; the rest cascade. */
function defaultPropagation(rt: ResourceType): Propagation {
  return rt.group === 'batch' && rt.version === 'v1' && rt.kind === 'Job' ? 'Orphan' : 'Background';
}

interface DeleteOpts {
  propagationPolicy?: Propagation;
  orphanDependents?: boolean;
  preconditions: { uid?: unknown; resourceVersion?: unknown };
  dryRun: boolean;
}

/**
 * DeleteOptions as the real server reads them (k8s.io/apiserver, handlers/delete.go): from the
 * body when the request has one, and from the query parameters only when it has none. A
 * policy sent as a query parameter beside a body is silently ignored.
 */
function deleteOptions(body: unknown, query: Record<string, string>): DeleteOpts {
  let src: Record<string, unknown>;
  if (body !== undefined) {
    if (!isRecord(body))
      throw new StatusError(400, 'the body of a DELETE must be a DeleteOptions object');
    src = body;
  } else {
    src = {};
    if (query.propagationPolicy !== undefined) src.propagationPolicy = query.propagationPolicy;
    if (query.orphanDependents !== undefined)
      src.orphanDependents = query.orphanDependents === 'true';
    if (query.dryRun !== undefined) src.dryRun = [query.dryRun];
  }
  const invalid = (msg: string): StatusError =>
    new StatusError(422, `DeleteOptions.meta.k8s.io "" is invalid: ${msg}`);
  const opts: DeleteOpts = {
    preconditions: isRecord(src.preconditions) ? src.preconditions : {},
    dryRun: Array.isArray(src.dryRun) && src.dryRun.includes('All'),
  };
  const policy = src.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw invalid(
        `propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    opts.propagationPolicy = policy;
  }
  if (typeof src.orphanDependents === 'boolean') {
    if (opts.propagationPolicy !== undefined) {
      throw invalid(
        `propagationPolicy: Invalid value: "${opts.propagationPolicy}": orphanDependents and deletionPropagation cannot be both set`,
      );
    }
    opts.orphanDependents = src.orphanDependents;
    opts.propagationPolicy = src.orphanDependents ? 'Orphan' : 'Background';
  }
  return opts;
}

function ownerUids(o: KubeObject): string[] {
  const refs = o.metadata.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((r: unknown) => (isRecord(r) && typeof r.uid === 'string' ? [r.uid] : []));
}

function keyString(o: KubeObject): string {
  return objectKey(o.metadata.namespace, o.metadata.name ?? '');
}

/**
 * What the API server does to a custom resource before storing it: prune what the schema
 * does not declare (refuse it with fieldValidation=Strict), drop nulls it does not allow,
 * validate. Types without a schema (no CRD given) are stored as sent.
 */
function admitCustom(
  rt: ResourceType,
  obj: KubeObject,
  name: string,
  fieldValidation: string | undefined,
): void {
  if (!rt.schema) return;
  const unknown = pruneUnknownFields(obj, rt.schema);
  if (fieldValidation === 'Strict' && unknown.length > 0) {
    throw new StatusError(
      400,
      `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${unknown.map((f) => `unknown field "${f}"`).join(', ')}`,
    );
  }
  pruneNonNullableNulls(obj, rt.schema);
  const errors = validateAgainstSchema(obj, rt.schema);
  if (errors.length > 0) throw invalidObject(rt, name, errors);
}

function invalidObject(rt: ResourceType, name: string, errors: FieldError[]): StatusError {
  const texts = errors.map(fieldErrorText);
  const what = rt.group ? `${rt.kind}.${rt.group}` : rt.kind;
  return new StatusError(
    422,
    `${what} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`,
    'Invalid',
    {
      name,
      group: rt.group,
      kind: rt.kind,
      causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })),
    },
  );
}

function notFound(rt: ResourceType, name: string): StatusError {
  return new StatusError(
    404,
    `${qualified(rt)} "${name}" not found`,
    'NotFound',
    details(rt, name),
  );
}

function conflict(rt: ResourceType, name: string): StatusError {
  return new StatusError(
    409,
    `Operation cannot be fulfilled on ${qualified(rt)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    'Conflict',
    details(rt, name),
  );
}

function methodNotAllowed(method: string): StatusError {
  return new StatusError(
    405,
    `the server does not allow this method on the requested resource (${method})`,
  );
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

type SortKey = [string, string];

function keyOf(o: KubeObject): SortKey {
  return [o.metadata.namespace ?? '', o.metadata.name ?? ''];
}

function compareKeys(a: SortKey, b: SortKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

function compareObjects(a: KubeObject, b: KubeObject): number {
  return compareKeys(keyOf(a), keyOf(b));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asObject(body: unknown, rt: ResourceType): KubeObject {
  if (!isRecord(body)) throw new StatusError(400, `the request body must be a ${rt.kind} object`);
  const obj = structuredClone(body);
  if (obj.metadata === undefined) obj.metadata = {};
  if (!isRecord(obj.metadata)) throw new StatusError(400, 'metadata must be an object');
  return obj as KubeObject;
}

function checkTypeMeta(obj: KubeObject, rt: ResourceType): void {
  if (obj.kind !== undefined && obj.kind !== rt.kind) {
    throw new StatusError(
      400,
      `the body kind ${String(obj.kind)} does not match the resource ${rt.kind}`,
    );
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== groupVersion(rt)) {
    throw new StatusError(
      400,
      `the body apiVersion ${String(obj.apiVersion)} does not match ${groupVersion(rt)}`,
    );
  }
  obj.kind = rt.kind;
  obj.apiVersion = groupVersion(rt);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// Type-specific defaulting the real server applies and that callers can observe.
function prepareForWrite(rt: ResourceType, obj: KubeObject): void {
  if (rt.group === '' && rt.kind === 'Secret') {
    if (isRecord(obj.stringData)) {
      const data = isRecord(obj.data) ? obj.data : {};
      for (const [k, v] of Object.entries(obj.stringData))
        data[k] = Buffer.from(String(v)).toString('base64');
      obj.data = data;
    }
    delete obj.stringData;
    if (isRecord(obj.data)) {
      for (const v of Object.values(obj.data)) {
        if (typeof v !== 'string' || !BASE64.test(v)) {
          throw new StatusError(
            400,
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data',
          );
        }
      }
    }
    if (obj.type === undefined) obj.type = 'Opaque';
  }
  if (rt.group === '' && rt.kind === 'Namespace' && obj.status === undefined)
    obj.status = { phase: 'Active' };
  if (rt.group === 'apiextensions.k8s.io' && rt.kind === 'CustomResourceDefinition') {
    const spec = isRecord(obj.spec) ? obj.spec : {};
    const versions = Array.isArray(spec.versions) ? spec.versions.filter(isRecord) : [];
    obj.status = {
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts' },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted' },
      ],
      acceptedNames: spec.names ?? {},
      storedVersions: versions.filter((v) => v.storage === true).map((v) => v.name),
    };
  }
}

function specChanged(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): unknown => {
    const rest: Record<string, unknown> = { ...o };
    delete rest.metadata;
    delete rest.status;
    return rest;
  };
  return stableJson(strip(a)) !== stableJson(strip(b));
}

function withoutTypeMeta(o: KubeObject): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...o };
  delete rest.kind;
  delete rest.apiVersion;
  return rest;
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isRecord(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}

// --- selectors ---------------------------------------------------------------------------------

type Requirement = (fields: (key: string) => string | undefined) => boolean;

function joinSelector(a: string | undefined, b: string): string {
  return a ? `${a},${b}` : b;
}

function selectorMatcher(query: Record<string, string>): (o: KubeObject) => boolean {
  const labels = parseSelector(query.labelSelector ?? '', true);
  const fields = parseSelector(query.fieldSelector ?? '', false);
  return (o) => {
    const lbl = o.metadata.labels ?? {};
    const byLabel = (k: string): string | undefined => (Object.hasOwn(lbl, k) ? lbl[k] : undefined);
    const byField = (k: string): string | undefined => fieldValue(o, k);
    return labels.every((r) => r(byLabel)) && fields.every((r) => r(byField));
  };
}

function fieldValue(o: KubeObject, dotted: string): string {
  let cur: unknown = o;
  for (const part of dotted.split('.')) cur = isRecord(cur) ? cur[part] : undefined;
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'string' ? cur : JSON.stringify(cur);
}

/** Splits on commas outside parentheses, so `a in (x,y),b` is two requirements. */
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (s[i] === ',' && depth === 0) {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t.length > 0);
}

const KEY = '[A-Za-z0-9][-A-Za-z0-9_./]*';

function parseSelector(s: string, labels: boolean): Requirement[] {
  const kind = labels ? 'label' : 'field';
  return splitTerms(s).map((term): Requirement => {
    let m = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(.*)$`).exec(term);
    if (m) {
      const [, key = '', op, want = ''] = m;
      if (op === '!=') return (get) => get(key) !== want;
      return (get) => get(key) === want;
    }
    if (!labels) throw new StatusError(400, `invalid ${kind} selector term "${term}"`);
    m = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`).exec(term);
    if (m) {
      const [, key = '', op, list = ''] = m;
      const values = list.split(',').map((v) => v.trim());
      if (op === 'in') return (get) => values.includes(get(key) ?? '\u0000absent');
      return (get) => !values.includes(get(key) ?? '\u0000absent');
    }
    m = new RegExp(`^(!?)\\s*(${KEY})$`).exec(term);
    if (m) {
      const [, not, key = ''] = m;
      return not ? (get) => get(key) === undefined : (get) => get(key) !== undefined;
    }
    throw new StatusError(
      400,
      `unable to parse requirement: invalid ${kind} selector term "${term}"`,
    );
  });
}

// --- patches -----------------------------------------------------------------------------------

/** RFC 7386; strategic merge patches get the same treatment (lists are replaced, not merged). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function parsePointer(p: unknown): string[] {
  if (typeof p !== 'string' || (p !== '' && !p.startsWith('/'))) {
    throw new StatusError(400, `invalid JSON pointer ${String(p)}`);
  }
  return p === ''
    ? []
    : p
        .slice(1)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function invalidPatch(message: string): StatusError {
  return new StatusError(422, `the patch could not be applied: ${message}`);
}

function parentOf(doc: unknown, tokens: string[]): { parent: unknown; last: string } {
  if (tokens.length === 0) throw invalidPatch('the root cannot be the target');
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isRecord(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw invalidPatch(`path /${tokens.join('/')} does not exist`);
  }
  return { parent: cur, last: tokens[tokens.length - 1] ?? '' };
}

function getAt(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) return doc;
  const { parent, last } = parentOf(doc, tokens);
  const v = Array.isArray(parent)
    ? parent[Number(last)]
    : isRecord(parent)
      ? parent[last]
      : undefined;
  if (v === undefined) throw invalidPatch(`path /${tokens.join('/')} does not exist`);
  return v;
}

function removeAt(doc: unknown, tokens: string[]): unknown {
  const { parent, last } = parentOf(doc, tokens);
  const old = getAt(doc, tokens);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isRecord(parent)) delete parent[last];
  return old;
}

function addAt(doc: unknown, tokens: string[], value: unknown, replace: boolean): void {
  const { parent, last } = parentOf(doc, tokens);
  if (replace) getAt(doc, tokens);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length)
      throw invalidPatch(`bad array index ${last}`);
    parent.splice(index, replace ? 1 : 0, value);
  } else if (isRecord(parent)) {
    parent[last] = value;
  } else {
    throw invalidPatch(`path /${tokens.join('/')} has no parent object`);
  }
}

/** RFC 6902: add, remove, replace, move, copy, test. */
function applyJsonPatch(doc: KubeObject, ops: unknown): unknown {
  if (!Array.isArray(ops))
    throw new StatusError(400, 'a JSON patch must be an array of operations');
  for (const op of ops) {
    if (!isRecord(op)) throw new StatusError(400, 'a JSON patch operation must be an object');
    const at = parsePointer(op.path);
    switch (op.op) {
      case 'add':
        addAt(doc, at, structuredClone(op.value), false);
        break;
      case 'replace':
        addAt(doc, at, structuredClone(op.value), true);
        break;
      case 'remove':
        removeAt(doc, at);
        break;
      case 'move':
        addAt(doc, at, removeAt(doc, parsePointer(op.from)), false);
        break;
      case 'copy':
        addAt(doc, at, structuredClone(getAt(doc, parsePointer(op.from))), false);
        break;
      case 'test':
        if (stableJson(getAt(doc, at)) !== stableJson(op.value))
          throw invalidPatch(`test failed at ${String(op.path)}`);
        break;
      default:
        throw new StatusError(400, `unsupported JSON patch operation ${String(op.op)}`);
    }
  }
  return doc;
}

// --- wire --------------------------------------------------------------------------------------

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: http.ServerResponse, code: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function writeEvent(res: http.ServerResponse, type: WatchEventType, object: KubeObject): void {
  if (!res.writableEnded) res.write(JSON.stringify({ type, object }) + '\n');
}

/** Sends what this watcher should see of one change, honouring selectors as a real watch cache does. */
function deliver(w: Watcher, e: StoredEvent): void {
  if (e.rt !== w.rt) return;
  if (w.namespace !== undefined && e.object.metadata.namespace !== w.namespace) return;
  const now = w.matches(e.object);
  if (e.type !== 'MODIFIED') {
    if (now) writeEvent(w.res, e.type, e.object);
    return;
  }
  const before = e.previous ? w.matches(e.previous) : false;
  if (now && before) writeEvent(w.res, 'MODIFIED', e.object);
  else if (now) writeEvent(w.res, 'ADDED', e.object);
  else if (before) writeEvent(w.res, 'DELETED', e.object);
}
