/**
 * Operator mode (`bpa serve --source kubernetes`): the site is every Site, Cluster,
 * Provisioning and Software object of the watched namespaces, kept by list+watch informers
 * (@kubernetes/client-node). Each sync writes the objects, stripped of what the server adds
 * (status, managedFields, resourceVersion, uid, ...), as one YAML file per object under
 * `<stateDir>/kubernetes/site/objects/`: the load, validate and plan stages then run exactly as
 * for a site from git, and a problem is placed back on its object and field path.
 *
 * BareMetalHosts and HardwareData are watched too: a change of what the plan reads of them
 * starts a reconcile, and the inventory stage takes them from this cache instead of listing
 * 10,000 hosts at every reconcile. As controller-runtime's transform functions do, the cache
 * keeps only what the plan reads of each (no managedFields, annotations, BMC details or
 * operation history), and the informer's own copy only the name and resourceVersion it
 * compares on a relist.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ListPromise,
  type ObjectCache,
} from '@kubernetes/client-node';
import { explainApiError } from '../kube/api.js';
import { TransientError, messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { parsePointer, type Problem } from '../util/problem.js';
import { yamlText } from '../util/yaml-text.js';
import { LocalSource } from './local-source.js';
import type { SiteObjectRef, SiteSource, WatchedMetal3Object } from './site-source.js';

export const SITE_GROUP = 'bpa.akraino.org';
export const SITE_VERSION = 'v1alpha1';

/** The kinds that make the site, with their resource names. */
export const SITE_KINDS = [
  { kind: 'Site', plural: 'sites' },
  { kind: 'Cluster', plural: 'clusters' },
  { kind: 'Provisioning', plural: 'provisionings' },
  { kind: 'Software', plural: 'softwares' },
] as const;

/** Asks for a reconcile of the object's site when its value changes (issue 29's annotation). */
export const REQUESTED_AT = 'reconcile.bpa.akraino.org/requestedAt';

interface Entry {
  ref: SiteObjectRef;
  /** The site file's path (site-relative) and text. */
  path: string;
  text: string;
  /** The requestedAt annotation: a change of it, of the text or a deletion starts a reconcile. */
  requestedAt: string;
}

interface Watched {
  what: string;
  /** The metal3 kind it watches, if any. */
  metal3?: Metal3Kind;
  informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  listed: boolean;
  errors: number;
  failingSince?: number;
  lastError?: string;
  /** A kind not served at all (metal3 not installed): nothing to watch, not a failure. */
  absent?: boolean;
  /**
   * Not needed to go on: while it is not listed (an older role without `watch` on it), the
   * inventory lists instead.
   */
  auxiliary?: boolean;
  timer?: NodeJS.Timeout;
}

export interface KubernetesSourceOptions {
  /** The cluster holding bpa's objects (the bootstrap cluster). */
  kubeConfig: KubeConfig;
  namespaces: readonly string[];
  stateDir: string;
  /** Where BareMetalHosts are watched (the inventory's cluster), undefined: not watched. */
  hosts?: { kubeConfig: KubeConfig; namespaces: readonly string[] };
  /** DHCP lease files: a changed one is new input too. */
  leaseFiles?: readonly string[];
  /** Called for each change that may change the plan (after the first listing). */
  onChange?: (what: string) => void;
  log: Logger;
  /** How long a watch may fail before the source says it is not ready (30 s). */
  failureGraceMs?: number;
  /** First delay before a failed list or watch is tried again; doubles up to 30 s (1 s). */
  retryBaseMs?: number;
  now?: () => number;
}

export class KubernetesSource implements SiteSource {
  readonly siteDir: string;
  private readonly entries = new Map<string, Entry>();
  /** BareMetalHosts and HardwareData by `kind/namespace/name`, with their fingerprints. */
  private readonly metal3 = new Map<string, { object: WatchedMetal3Object; print: string }>();
  private readonly watches: Watched[] = [];
  /** The files of the last sync, by path, and the objects they came from. */
  private written = new Map<string, string>();
  /** Each written file's git blob id and stat: the load stage reads none of them again. */
  private checked = new Map<string, { oid: string; size: number; mtimeMs: number; ino: number }>();
  private synced = new Map<string, SiteObjectRef>();
  private cleaned = false;
  private started = false;
  private stopped = false;
  private readonly reports: LocalSource;
  private readonly now: () => number;

  constructor(private readonly opts: KubernetesSourceOptions) {
    this.siteDir = join(opts.stateDir, 'kubernetes', 'site');
    this.reports = new LocalSource(this.siteDir, () => Promise.resolve(''));
    this.now = opts.now ?? Date.now;
    const api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    for (const namespace of opts.namespaces) {
      for (const { kind, plural } of SITE_KINDS) {
        const path = `/apis/${SITE_GROUP}/${SITE_VERSION}/namespaces/${namespace}/${plural}`;
        const informer = makeInformer(
          opts.kubeConfig,
          path,
          lister(api, SITE_GROUP, SITE_VERSION, plural, namespace),
        );
        this.watch(`${plural}.${SITE_GROUP} in namespace ${namespace}`, informer);
        const changed = (obj: KubernetesObject): void => this.siteObject(kind, obj);
        informer.on('add', changed);
        informer.on('update', changed);
        informer.on('delete', (obj) => this.siteObjectGone(kind, obj));
      }
    }
    if (opts.hosts) {
      const hostApi = opts.hosts.kubeConfig.makeApiClient(CustomObjectsApi);
      const spaces = opts.hosts.namespaces.length ? opts.hosts.namespaces : [undefined];
      for (const namespace of spaces) {
        for (const [kind, plural] of [
          ['BareMetalHost', 'baremetalhosts'],
          ['HardwareData', 'hardwaredata'],
        ] as const) {
          const path = namespace
            ? `/apis/metal3.io/v1alpha1/namespaces/${namespace}/${plural}`
            : `/apis/metal3.io/v1alpha1/${plural}`;
          // Objects are made small page by page as they are listed: 10,000 never pile up.
          const list = lister(hostApi, 'metal3.io', 'v1alpha1', plural, namespace, (o) =>
            this.metal3Object(kind, o),
          );
          const informer = makeInformer(opts.hosts.kubeConfig, path, list);
          const w = this.watch(
            `${plural}.metal3.io in ${namespace ? `namespace ${namespace}` : 'all namespaces'}`,
            informer,
            true,
          );
          w.metal3 = kind;
          w.auxiliary = kind === 'HardwareData';
          informer.on('add', (obj) => this.metal3Object(kind, obj));
          informer.on('update', (obj) => this.metal3Object(kind, obj));
          informer.on('delete', (obj) => {
            const key = `${kind}/${objectKey(obj)}`;
            if (this.metal3.delete(key)) this.changed(`${kind} ${objectKey(obj)} deleted`);
          });
        }
      }
    }
  }

  describe(): string {
    return `kubernetes: namespace${this.opts.namespaces.length > 1 ? 's' : ''} ${this.opts.namespaces.join(', ')}`;
  }

  /**
   * Starts every list+watch; resolves once each has listed (or failed once, or `waitMs` has
   * passed): a first reconcile then sees the whole site rather than part of it.
   */
  async start(waitMs = 10_000): Promise<void> {
    const all = Promise.all(this.watches.map((w) => this.run(w)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.watches) {
      clearTimeout(w.timer);
      await w.informer.stop();
    }
  }

  /**
   * Why the source cannot follow the cluster now, or undefined: a kind not listed yet, or a
   * watch that has failed for longer than the grace period (/readyz says so).
   */
  notReady(): string | undefined {
    const grace = this.opts.failureGraceMs ?? 30_000;
    for (const w of this.watches) {
      if (w.absent || w.auxiliary) continue;
      if (!w.listed) return `${w.what}: not listed yet${w.lastError ? ` (${w.lastError})` : ''}`;
      if (w.failingSince !== undefined && this.now() - w.failingSince >= grace)
        return `${w.what}: the watch cannot be re-established since ${new Date(w.failingSince).toISOString()} (${w.lastError ?? 'unknown error'})`;
    }
    return undefined;
  }

  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    const missing = this.watches.find((w) => !w.listed && !w.absent && !w.auxiliary);
    if (missing)
      throw new TransientError(
        'SITE_OBJECTS_UNAVAILABLE',
        `${missing.what}: not listed yet${missing.lastError ? `: ${missing.lastError}` : ''}`,
      );
    const files = new Map<string, string>();
    const synced = new Map<string, SiteObjectRef>();
    // A Cluster being deleted takes the Provisioning and Software it names with it: they are
    // no cluster of their own meanwhile (reconcile/deletion.ts settles it).
    const going = new Set<string>();
    for (const e of this.entries.values()) {
      if (e.ref.kind !== 'Cluster' || !e.ref.deletionTimestamp) continue;
      for (const [field, kind] of [
        ['provisioningCR', 'Provisioning'],
        ['softwareCR', 'Software'],
      ] as const) {
        const name = e.ref.spec[field];
        if (typeof name === 'string') going.add(`${e.ref.namespace}/${kind}/${name}`);
      }
    }
    for (const [key, e] of this.entries) {
      synced.set(e.path, e.ref);
      // An object being deleted is no part of the site any more.
      if (!e.ref.deletionTimestamp && !going.has(key)) files.set(e.path, e.text);
    }
    const objectsDir = join(this.siteDir, 'objects');
    if (!this.cleaned) {
      // What an earlier process wrote may name objects deleted since.
      await rm(objectsDir, { recursive: true, force: true });
      this.cleaned = true;
    }
    for (const [path, text] of files) {
      if (this.written.get(path) === text) continue;
      const file = join(this.siteDir, path);
      await mkdir(dirname(file), { recursive: true });
      const bytes = Buffer.from(text);
      await writeFile(file, bytes);
      const s = await stat(file);
      const oid = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
      this.checked.set(path, { oid, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
    }
    for (const path of this.written.keys())
      if (!files.has(path)) {
        this.checked.delete(path);
        await rm(join(this.siteDir, path), { force: true });
      }
    this.written = files;
    this.synced = synced;
    const h = createHash('sha256');
    for (const path of [...files.keys()].sort())
      h.update(path)
        .update('\0')
        .update(files.get(path) as string)
        .update('\0');
    // The hosts and leases are input too: a change of them is planned at once, not at the resync.
    h.update('hosts\0');
    for (const key of [...this.metal3.keys()].sort())
      h.update(key)
        .update('\0')
        .update(this.metal3.get(key)?.print as string)
        .update('\0');
    h.update('leases\0');
    for (const file of this.opts.leaseFiles ?? []) {
      const s = await stat(file).catch(() => undefined);
      h.update(`${file}\0${s ? `${s.size}:${s.mtimeMs}:${s.ino}` : '-'}\0`);
    }
    const digest = `sha256:${h.digest('hex')}`;
    return { siteDir: this.siteDir, revision: digest, digest };
  }

  watchedInventory(namespaces: readonly string[]): WatchedMetal3Object[] | undefined {
    const hosts = this.opts.hosts;
    if (!hosts || !sameSet(namespaces, hosts.namespaces)) return undefined;
    for (const w of this.watches) {
      if (!w.metal3) continue;
      // No BareMetalHost API: the inventory lists, to say why it cannot. No HardwareData
      // API (older metal3): hardware comes from the hosts' status, as when listed.
      if (w.metal3 === 'BareMetalHost' && (w.absent || !w.listed)) return undefined;
      if (w.metal3 === 'HardwareData' && !w.absent && (!w.listed || w.failingSince !== undefined))
        return undefined;
    }
    // The same objects, in the same order, while they are unchanged: the hosts built from
    // them last time are kept (observe/inventory/hosts.ts).
    return Array.from(this.metal3.values(), (e) => e.object);
  }

  /** The files the last sync wrote, as git's checkout says them (load/cache.ts). */
  checkedOut(): Promise<
    ReadonlyMap<string, { oid: string; size: number; mtimeMs: number; ino: number }>
  > {
    return Promise.resolve(new Map(this.checked));
  }

  /** The objects of the last sync (those being deleted included), for status and finalizers. */
  siteObjects(): SiteObjectRef[] {
    return [...this.synced.values()];
  }

  /** The object a site file was written from. */
  objectOf(path: string): SiteObjectRef | undefined {
    return this.synced.get(path);
  }

  /**
   * Problems placed on their object and field path (`Provisioning/provisioning-east
   * spec.masters[0].master-1.mac-address`) rather than on a file bpa wrote itself.
   */
  placeProblems(problems: Problem[]): Problem[] {
    const many = this.opts.namespaces.length > 1;
    for (const p of problems) {
      const ref = p.file !== undefined ? this.synced.get(p.file) : undefined;
      if (!ref) continue;
      p.object = `${many ? `${ref.namespace}/` : ''}${ref.kind}/${ref.name}`;
      p.field = fieldPath(p.pointer ?? '');
      delete p.file;
      delete p.line;
      delete p.column;
      delete p.doc;
    }
    return problems;
  }

  /**
   * Says in an object's status that its deletion is held (kstatus: Ready False, Stalled
   * True). Only bpa's conditions change; the rest of the status stays.
   */
  async setDeletionStalled(ref: SiteObjectRef, reason: string, message: string): Promise<void> {
    const plural = SITE_KINDS.find((k) => k.kind === ref.kind)?.plural;
    if (!plural) throw new Error(`no resource known for kind ${ref.kind}`);
    const api = this.opts.kubeConfig.makeApiClient(CustomObjectsApi);
    const where = { group: SITE_GROUP, version: SITE_VERSION, namespace: ref.namespace, plural };
    const now = new Date().toISOString();
    try {
      const current = (await api.getNamespacedCustomObject({ ...where, name: ref.name })) as {
        metadata?: { generation?: number };
        status?: { conditions?: Array<{ type: string; status: string; reason?: string }> };
      };
      const generation = current.metadata?.generation ?? ref.generation ?? 1;
      const kept = (current.status?.conditions ?? []).filter(
        (c) => !['Ready', 'Reconciling', 'Stalled'].includes(c.type),
      );
      const condition = (type: string, status: string): Record<string, unknown> => {
        const was = current.status?.conditions?.find((c) => c.type === type);
        const same = was?.status === status && was.reason === reason;
        return {
          type,
          status,
          reason,
          message,
          observedGeneration: generation,
          lastTransitionTime: same
            ? ((was as { lastTransitionTime?: string }).lastTransitionTime ?? now)
            : now,
        };
      };
      const conditions = [condition('Ready', 'False'), condition('Stalled', 'True'), ...kept];
      await api.patchNamespacedCustomObjectStatus({
        ...where,
        name: ref.name,
        body: [
          { op: 'test', path: '/metadata/uid', value: ref.uid },
          current.status
            ? { op: 'add', path: '/status/conditions', value: conditions }
            : { op: 'add', path: '/status', value: { conditions } },
        ],
      });
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'KUBE_API_ERROR',
        `writing the status of ${ref.kind} ${ref.namespace}/${ref.name}`,
        `patch on ${plural}/status.${SITE_GROUP} in namespace ${ref.namespace}`,
      );
    }
  }

  /**
   * Sets an object's finalizers (bpa only ever adds or removes its own). The patch holds only
   * if the object is still the one seen, with the finalizers seen: anything else is a 422,
   * and the next reconcile looks again.
   */
  async setFinalizers(ref: SiteObjectRef, finalizers: string[]): Promise<void> {
    const plural = SITE_KINDS.find((k) => k.kind === ref.kind)?.plural;
    if (!plural) throw new Error(`no resource known for kind ${ref.kind}`);
    const api = this.opts.kubeConfig.makeApiClient(CustomObjectsApi);
    try {
      await api.patchNamespacedCustomObject({
        group: SITE_GROUP,
        version: SITE_VERSION,
        namespace: ref.namespace,
        plural,
        name: ref.name,
        body: [
          { op: 'test', path: '/metadata/uid', value: ref.uid },
          ...(ref.finalizers.length
            ? [{ op: 'test', path: '/metadata/finalizers', value: ref.finalizers }]
            : []),
          { op: 'add', path: '/metadata/finalizers', value: finalizers },
        ],
      });
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'KUBE_API_ERROR',
        `setting the finalizers of ${ref.kind} ${ref.namespace}/${ref.name}`,
        `patch on ${plural}.${SITE_GROUP} in namespace ${ref.namespace}`,
      );
    }
  }

  /** The cluster bpa's objects are in (the bootstrap cluster). */
  get kubeConfig(): KubeConfig {
    return this.opts.kubeConfig;
  }

  isolate(problems: readonly Problem[]): { clusters: string[]; files: Set<string> } | undefined {
    const clusters = new Set<string>();
    for (const p of problems) {
      if (p.severity !== 'error') continue;
      const ref = p.file !== undefined ? this.synced.get(p.file) : undefined;
      if (!ref || ref.kind === 'Site') return undefined;
      clusters.add(this.clusterOf(ref));
    }
    const files = new Set<string>();
    for (const [path, ref] of this.synced) if (clusters.has(this.clusterOf(ref))) files.add(path);
    return { clusters: [...clusters].sort(), files };
  }

  /** The cluster an object belongs to: the Cluster naming it, else its label, else its name. */
  private clusterOf(ref: SiteObjectRef): string {
    if (ref.kind === 'Provisioning' || ref.kind === 'Software') {
      const field = ref.kind === 'Provisioning' ? 'provisioningCR' : 'softwareCR';
      for (const o of this.synced.values())
        if (o.kind === 'Cluster' && o.namespace === ref.namespace && o.spec[field] === ref.name)
          return o.labels['cluster'] ?? o.name;
    }
    return ref.labels['cluster'] ?? ref.name;
  }

  previousReports(siteDir: string): Promise<Map<string, unknown>> {
    return this.reports.previousReports(siteDir);
  }

  /** The reports stay in the state directory (status/ beside objects/); the objects' status is issue 29's. */
  publish(siteDir: string, files: ReadonlyMap<string, string | null>): Promise<string | undefined> {
    return this.reports.publish(siteDir, files);
  }

  private watch(
    what: string,
    informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>,
    optional = false,
  ): Watched {
    const w: Watched = { what, informer, listed: false, errors: 0 };
    informer.on('error', (err: unknown) => this.failed(w, err, optional));
    this.watches.push(w);
    return w;
  }

  /** Lists and watches; a failure is retried with backoff (ListWatch stops after an error). */
  private async run(w: Watched): Promise<void> {
    if (this.stopped) return;
    const before = w.errors;
    try {
      await w.informer.start();
    } catch (err: unknown) {
      this.failed(w, err, false);
      return;
    }
    if (w.errors !== before || this.stopped) return;
    if (w.failingSince !== undefined || !w.listed)
      this.opts.log.info({ watch: w.what }, 'watching');
    w.listed = true;
    w.absent = false;
    w.failingSince = undefined;
    w.lastError = undefined;
    w.errors = 0;
    // Objects listed again after a failure may have changed meanwhile.
    if (before > 0) this.changed(`${w.what} listed again`);
  }

  private failed(w: Watched, err: unknown, optional: boolean): void {
    if (this.stopped) return;
    const status = statusOf(err);
    w.errors++;
    w.failingSince ??= this.now();
    w.lastError = status ? `HTTP ${status}` : messageOf(err);
    // No metal3 API: the hosts come from elsewhere (an embedded inventory); looked for again later.
    if (optional && status === 404) w.absent = true;
    this.opts.log.warn(
      { watch: w.what, err: w.lastError, attempt: w.errors },
      'list or watch failed: retrying',
    );
    const base = this.opts.retryBaseMs ?? 1_000;
    const delay = w.absent ? 60_000 : Math.min(30_000, base * 2 ** Math.min(w.errors - 1, 10));
    clearTimeout(w.timer);
    w.timer = setTimeout(() => void this.run(w), delay);
    w.timer.unref?.();
  }

  private siteObject(kind: string, obj: KubernetesObject): void {
    const m = obj.metadata ?? {};
    const namespace = m.namespace ?? '';
    const name = m.name ?? '';
    const key = `${namespace}/${kind}/${name}`;
    const before = this.entries.get(key);
    // bpa's own status writes come back as updates of every object at every reconcile: the
    // same generation and labels are the same document, not written out again.
    const same =
      before !== undefined &&
      m.generation !== undefined &&
      before.ref.generation === m.generation &&
      sameLabels(before.ref.labels, m.labels ?? {});
    const text = same ? before.text : yamlText(siteDocument(obj));
    const ref: SiteObjectRef = {
      kind,
      namespace,
      name,
      uid: m.uid ?? '',
      ...(m.generation !== undefined ? { generation: m.generation } : {}),
      resourceVersion: m.resourceVersion ?? '',
      labels: m.labels ?? {},
      finalizers: m.finalizers ?? [],
      ...(m.deletionTimestamp ? { deletionTimestamp: String(m.deletionTimestamp) } : {}),
      spec: refSpec((obj as { spec?: Record<string, unknown> }).spec),
    };
    const requestedAt = m.annotations?.[REQUESTED_AT] ?? '';
    this.entries.set(key, { ref, path: `objects/${key}.yaml`, text, requestedAt });
    // The informer's copy is compared by resourceVersion only: the rest (status, managedFields,
    // annotations) is not kept twice for 3,000 objects.
    slim(obj);
    // A status-only update (or bpa's own finalizer) changes nothing the plan reads.
    if (
      before?.text !== text ||
      before.requestedAt !== requestedAt ||
      before.ref.deletionTimestamp !== ref.deletionTimestamp
    )
      this.changed(`${kind} ${namespace}/${name}`);
  }

  private siteObjectGone(kind: string, obj: KubernetesObject): void {
    const key = `${obj.metadata?.namespace ?? ''}/${kind}/${obj.metadata?.name ?? ''}`;
    if (this.entries.delete(key)) this.changed(`${kind} ${key} deleted`);
  }

  /**
   * Keeps what the plan reads of a BareMetalHost or HardwareData, and drops the rest of it
   * from the informer's cache (which compares resourceVersions only).
   */
  private metal3Object(kind: Metal3Kind, obj: KubernetesObject): void {
    const o = obj as KubernetesObject & Record<string, unknown>;
    if (!('spec' in o) && !('status' in o)) return; // slimmed already, as listed
    const object = watchedObject(kind, o);
    const print = createHash('sha256').update(printOf(object)).digest('base64');
    slim(obj);
    const key = `${kind}/${object.origin}`;
    const before = this.metal3.get(key);
    // Unchanged for the plan: the object it was built from stays the same one.
    if (before?.print === print) return;
    this.metal3.set(key, { object, print });
    this.changed(`${kind} ${object.origin}`);
  }

  private changed(what: string): void {
    if (!this.started || this.stopped) return;
    this.opts.log.debug({ change: what }, 'site input changed');
    this.opts.onChange?.(what);
  }
}

/** The object as the site's document: what was applied, without anything the server adds. */
export function siteDocument(obj: KubernetesObject): Record<string, unknown> {
  const m = obj.metadata ?? {};
  const metadata: Record<string, unknown> = { name: m.name };
  if (m.labels && Object.keys(m.labels).length) metadata['labels'] = m.labels;
  const doc: Record<string, unknown> = { apiVersion: obj.apiVersion, kind: obj.kind, metadata };
  const spec = (obj as { spec?: unknown }).spec;
  if (spec !== undefined) doc['spec'] = spec;
  return doc;
}

/** The fields of a spec read from the object itself (deletion, and the cluster it belongs to). */
const REF_SPEC = ['provisioningCR', 'softwareCR', 'deletionPolicy'] as const;

/**
 * What of an object's spec is kept beside its document: the rest is the document's, which
 * the load stage parses from the text; the whole spec would be the site held twice.
 */
function refSpec(spec: Record<string, unknown> | undefined): Record<string, unknown> {
  return spec ? pick(spec, REF_SPEC) : {};
}

type Metal3Kind = WatchedMetal3Object['kind'];

/** The fields of a BareMetalHost's spec and status the plan reads (observe/inventory/hosts.ts). */
const HOST_SPEC = ['online', 'bootMACAddress', 'consumerRef'] as const;
const HOST_STATUS = [
  'poweredOn',
  'operationalStatus',
  'errorMessage',
  'errorType',
  'hardware',
] as const;

/**
 * What the plan reads of a BareMetalHost (labels; online, boot MAC and consumerRef; state,
 * power, errors, hardware) or of a HardwareData (its hardware), nothing else.
 */
export function watchedObject(kind: Metal3Kind, o: Record<string, unknown>): WatchedMetal3Object {
  const m = (o['metadata'] ?? {}) as {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
  };
  const metadata: WatchedMetal3Object['metadata'] = {
    name: m.name ?? '',
    namespace: m.namespace ?? '',
  };
  if (m.labels) metadata.labels = m.labels;
  const origin = `${metadata.namespace}/${metadata.name}`;
  const spec = record(o['spec']);
  if (kind === 'HardwareData')
    return {
      kind,
      metadata,
      spec: spec?.['hardware'] ? { hardware: spec['hardware'] } : {},
      origin,
    };
  const out: WatchedMetal3Object = { kind, metadata, origin };
  if (spec) out.spec = pick(spec, HOST_SPEC);
  const status = record(o['status']);
  // Empty or absent stays so: metal3 has not reported on the host (an ineligibility of its own).
  if (!status || Object.keys(status).length === 0) {
    if (o['status'] !== undefined) out.status = o['status'] as Record<string, unknown>;
    return out;
  }
  const provisioning = record(status['provisioning']);
  out.status = {
    // Present even when undefined: a status with none of these is still a status.
    provisioning: provisioning ? { state: provisioning['state'] } : status['provisioning'],
    ...Object.fromEntries(HOST_STATUS.map((k) => [k, status[k]])),
  };
  return out;
}

/** What the plan reads of a BareMetalHost, as one string: a change of it starts a reconcile. */
export function hostFingerprint(o: Record<string, unknown>): string {
  return printOf(watchedObject('BareMetalHost', o));
}

function printOf(o: WatchedMetal3Object): string {
  return JSON.stringify([o.metadata.labels ?? {}, o.spec ?? null, o.status ?? null]);
}

/** What an informer compares an object by, as a new object: name, namespace, resourceVersion. */
function informerCopy(o: KubernetesObject): KubernetesObject {
  const { name, namespace, resourceVersion } = o.metadata ?? {};
  return { metadata: { name, namespace, resourceVersion } };
}

/** An informer's own copy of an object, cut down in place to what informerCopy keeps. */
function slim(o: KubernetesObject): void {
  const kept = informerCopy(o).metadata;
  const fields = o as KubernetesObject & Record<string, unknown>;
  for (const k of Object.keys(fields)) if (k !== 'metadata') delete fields[k];
  o.metadata = kept;
}

function pick(from: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function sameLabels(a: Readonly<Record<string, string>>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/** `/spec/masters/0/master-1/mac-address` → `spec.masters[0].master-1.mac-address`. */
export function fieldPath(pointer: string): string {
  let out = '';
  for (const seg of parsePointer(pointer)) {
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function objectKey(obj: KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  const n = typeof e?.statusCode === 'number' ? e.statusCode : e?.code;
  return typeof n === 'number' ? n : undefined;
}

/** A list of every page (500 objects each), as the informer's list function. */
function lister(
  api: CustomObjectsApi,
  group: string,
  version: string,
  plural: string,
  namespace: string | undefined,
  eachItem?: (o: KubernetesObject) => void,
): ListPromise<KubernetesObject> {
  return async () => {
    const items: KubernetesObject[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = (
        namespace
          ? await api.listNamespacedCustomObject({
              group,
              version,
              namespace,
              plural,
              limit: 500,
              _continue: cont,
            })
          : await api.listClusterCustomObject({
              group,
              version,
              plural,
              limit: 500,
              _continue: cont,
            })
      ) as KubernetesListObject<KubernetesObject>;
      if (!eachItem) items.push(...page.items);
      else
        for (const item of page.items) {
          eachItem(item);
          // The informer keeps a new object of what it compares on: the item itself, its
          // other fields deleted by eachItem, would be a dictionary of ~500 bytes.
          items.push(informerCopy(item));
        }
      // Custom objects come as the server's JSON: `continue`, not the typed `_continue`.
      cont = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (cont);
    return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion } };
  };
}
