/**
 * The inventory indexed for assignment: hosts in a fixed order (so input order never changes
 * the outcome), by key, by MAC, and grouped into capacity classes.
 */
import type { Host } from '../../observe/types.js';
import { capacityOf } from './need.js';
import type { Capacity } from './need.js';
import { hostKey } from '../../observe/inventory/hosts.js';
import { ObjectMemo } from '../../util/memo.js';

/** Who holds a host once a node is placed on it. */
export interface Taker {
  cluster: string;
  node: string;
  sticky: boolean;
}

/** A host as assignment compares it: its capacity, worked out once (entryOf). */
export interface SiteHost {
  host: Host;
  cap: Capacity;
  /** `cap` as a key: hosts with the same one are in the same class (hostClasses). */
  capKey: string;
}

/** Eligible hosts with the same capacity; `hosts` sorted by key. */
export interface HostClass {
  cap: Capacity;
  hosts: SiteHost[];
}

/** A map as assignment reads it: by key only. */
export interface Lookup<K, V> {
  get(key: K): V | undefined;
}

/**
 * The inventory indexed, as made from one host list: never changed once made, so the next
 * reconcile's assignment can start from it (`indexHosts`' `last`).
 */
export interface HostIndex {
  /** The hosts indexed, in the order given. */
  hosts: readonly Host[];
  /** The entry of each of `hosts`, in the same order. */
  entries: readonly SiteHost[];
  /** Sorted by key (then origin): the order assignment goes through hosts in. */
  all: readonly SiteHost[];
  byKey: Lookup<string, SiteHost>;
  byMac: Lookup<string, readonly SiteHost[]>;
  ineligible: readonly SiteHost[];
}

/** One assignment's view of the index: who has taken which host so far. */
export interface SiteHosts extends HostIndex {
  index: HostIndex;
  takers: Map<SiteHost, Taker>;
}

export { hostKey };

/** Code-unit order: unlike localeCompare, the same on every machine and locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Each host's entry, kept for as long as the host object lives: under `bpa serve` the hosts
 * of unchanged inventory documents are the same objects from one reconcile to the next
 * (observe/inventory/hosts.ts), and neither a host nor an entry is changed once made.
 */
const entryMemo = new ObjectMemo<Host, SiteHost>();

function entryOf(host: Host): SiteHost {
  let entry = entryMemo.get(host);
  if (!entry) {
    const cap = capacityOf(host);
    entry = { host, cap, capKey: capKey(cap) };
    entryMemo.set(host, entry);
  }
  return entry;
}

/** More changed hosts than this and the index is built again rather than patched. */
const PATCH_LIMIT = 256;

/**
 * The hosts indexed. With `last` (the index of the previous reconcile): the same index when
 * `hosts` holds the same host objects in the same order (a pointer compare); when a few of
 * them are new objects with the same key, origin and MACs (a host document edited, say a
 * label), a copy of it with those entries replaced; otherwise built again. Either way the
 * result is what building from `hosts` gives.
 */
export function indexHosts(hosts: readonly Host[], last?: HostIndex): HostIndex {
  if (!last || last.hosts.length !== hosts.length) return buildIndex(hosts);
  const changed: number[] = [];
  for (let i = 0; i < hosts.length; i++) {
    if (hosts[i] === last.hosts[i]) continue;
    if (changed.push(i) > PATCH_LIMIT) return buildIndex(hosts);
  }
  if (changed.length === 0) return last;
  return patchIndex(hosts, last, changed) ?? buildIndex(hosts);
}

/** A fresh view of `index` for one assignment: no host taken yet. */
export function siteHosts(index: HostIndex): SiteHosts {
  return { ...index, index, takers: new Map() };
}

function buildIndex(hosts: readonly Host[]): HostIndex {
  const entries = hosts.map(entryOf);
  // Observe hands hosts over sorted by key already: checked in one pass, sorted only if not.
  const all = inOrder(entries) ? [...entries] : [...entries].sort(byKeyThenOrigin);
  const byKey = new Map<string, SiteHost>();
  const byMac = new Map<string, SiteHost[]>();
  const ineligible: SiteHost[] = [];
  for (const entry of all) {
    if (!byKey.has(entry.host.key)) byKey.set(entry.host.key, entry);
    if (!entry.host.eligible) ineligible.push(entry);
    for (const mac of entry.host.macs) {
      const list = byMac.get(mac);
      if (!list) byMac.set(mac, [entry]);
      else list.push(entry);
    }
  }
  return { hosts: [...hosts], entries, all, byKey, byMac, ineligible };
}

function byKeyThenOrigin(a: SiteHost, b: SiteHost): number {
  return compareText(a.host.key, b.host.key) || compareText(a.host.origin, b.host.origin);
}

function inOrder(entries: readonly SiteHost[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    if (byKeyThenOrigin(entries[i - 1] as SiteHost, entries[i] as SiteHost) > 0) return false;
  }
  return true;
}

/**
 * An index patched from another where every replaced host is the same for assignment (key,
 * origin, MACs, capacity, eligibility and its reason; for nodes with placement terms, labels
 * and hardware facts too, see `factsSame`): assignment over it places nodes exactly
 * as over `from`, on the new host objects (`swap`: old host → new). See assign.ts.
 */
export interface NeutralPatch {
  from: HostIndex;
  swap: ReadonlyMap<Host, Host>;
  /** Labels and hardware facts unchanged too: neutral also for nodes with placement terms. */
  factsSame: boolean;
}

const neutral = new WeakMap<HostIndex, NeutralPatch>();

/** How `index` was patched from another, when assignment over it is the same. */
export function neutralPatch(index: HostIndex): NeutralPatch | undefined {
  return neutral.get(index);
}

/**
 * `last` with the entries at `changed` replaced, when each new host keeps the key, origin and
 * MACs of the one it replaces: its place in `all`, `byKey` and `byMac` is then the same.
 * Undefined when one does not.
 */
function patchIndex(
  hosts: readonly Host[],
  last: HostIndex,
  changed: readonly number[],
): HostIndex | undefined {
  const entries = [...last.entries];
  const swap = new Map<SiteHost, SiteHost>();
  const hostSwap = new Map<Host, Host>();
  const keys = new Map<string, SiteHost>();
  const macs = new Map<string, readonly SiteHost[]>();
  const classes = classCache.get(last);
  const classKeys = new Set<string>();
  let sameClasses = classes !== undefined;
  let sameIneligible = true;
  let same = true;
  let factsSame = true;
  for (const i of changed) {
    const host = hosts[i] as Host;
    const before = last.entries[i] as SiteHost;
    const entry = entryOf(host);
    if (
      host.key !== before.host.key ||
      host.origin !== before.host.origin ||
      !sameList(host.macs, before.host.macs)
    )
      return undefined;
    entries[i] = entry;
    swap.set(before, entry);
    hostSwap.set(before.host, host);
    if ((keys.get(host.key) ?? last.byKey.get(host.key)) === before) keys.set(host.key, entry);
    for (const mac of host.macs) {
      const list = macs.get(mac) ?? last.byMac.get(mac);
      if (list) macs.set(mac, replaced(list, before, entry));
    }
    const eligible = host.eligible === before.host.eligible;
    if (!eligible || !host.eligible || !before.host.eligible) sameIneligible = false;
    // Host classes follow when the host stays in its class (same capacity and eligibility).
    if (entry.capKey !== before.capKey || !eligible) sameClasses = false;
    else if (host.eligible) classKeys.add(entry.capKey);
    if (
      entry.capKey !== before.capKey ||
      !eligible ||
      host.ineligibleReason !== before.host.ineligibleReason
    )
      same = false;
    if (factsSame && !sameFacts(host, before.host)) factsSame = false;
  }
  const all = last.all.map((e) => swap.get(e) ?? e);
  const index: HostIndex = {
    hosts: [...hosts],
    entries,
    all,
    byKey: overlay(last.byKey, keys),
    byMac: overlay(last.byMac, macs),
    ineligible: sameIneligible
      ? last.ineligible.map((e) => swap.get(e) ?? e)
      : all.filter((e) => !e.host.eligible),
  };
  if (classes && sameClasses) {
    classCache.set(
      index,
      classes.map((c) =>
        classKeys.has(capKey(c.cap)) ? { ...c, hosts: c.hosts.map((e) => swap.get(e) ?? e) } : c,
      ),
    );
  }
  // Only the last step is ever asked about: `last` forgets its own, so the indexes of earlier
  // reconciles are not kept alive through a chain of patches.
  neutral.delete(last);
  if (same) neutral.set(index, { from: last, swap: hostSwap, factsSame });
  return index;
}

/**
 * A lookup with a few entries replaced: the entries of `base` (itself a plain map, or such a
 * lookup) and `changes`, without copying the whole map; made plain again once the replaced
 * entries grow many.
 */
class Overlay<K, V> implements Lookup<K, V> {
  constructor(
    readonly base: ReadonlyMap<K, V>,
    readonly over: ReadonlyMap<K, V>,
  ) {}
  get(key: K): V | undefined {
    const v = this.over.get(key);
    return v === undefined ? this.base.get(key) : v;
  }
}

const FLATTEN_AT = 256;

function overlay<K, V>(last: Lookup<K, V>, changes: ReadonlyMap<K, V>): Lookup<K, V> {
  if (changes.size === 0) return last;
  if (last instanceof Overlay) {
    const over = new Map<K, V>(last.over as ReadonlyMap<K, V>);
    for (const [k, v] of changes) over.set(k, v);
    if (over.size < FLATTEN_AT) return new Overlay<K, V>(last.base as ReadonlyMap<K, V>, over);
    const flat = new Map<K, V>(last.base as ReadonlyMap<K, V>);
    for (const [k, v] of over) flat.set(k, v);
    return flat;
  }
  return new Overlay(last as ReadonlyMap<K, V>, changes);
}

function replaced<T>(list: readonly T[], before: T, after: T): T[] {
  return list.map((x) => (x === before ? after : x));
}

/** Labels and inspected hardware: what placement terms read beyond the capacity. */
function sameFacts(a: Host, b: Host): boolean {
  return (
    (a.labels === b.labels || JSON.stringify(a.labels) === JSON.stringify(b.labels)) &&
    (a.hardware === b.hardware || JSON.stringify(a.hardware) === JSON.stringify(b.hardware))
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export function hasMac(entry: SiteHost, mac: string): boolean {
  return entry.host.macs.includes(mac);
}

function capKey(c: Capacity): string {
  return `${c.cpu}/${c.memMib}/${c.sriov ? 1 : 0}/${c.qat ? 1 : 0}`;
}

function features(c: Capacity): number {
  return (c.sriov ? 1 : 0) + (c.qat ? 1 : 0);
}

/**
 * Eligible hosts grouped by capacity, smallest first (cpu, then memory, then fewer special
 * features), so the first class that satisfies a node is its smallest sufficient host.
 */
export function hostClasses(site: HostIndex): HostClass[] {
  const known = classCache.get(site);
  if (known) return known;
  const groups = new Map<string, HostClass>();
  for (const entry of site.all) {
    if (!entry.host.eligible) continue;
    const group = groups.get(entry.capKey);
    if (group) group.hosts.push(entry);
    else groups.set(entry.capKey, { cap: entry.cap, hosts: [entry] });
  }
  const classes = [...groups.values()].sort(
    (a, b) =>
      a.cap.cpu - b.cap.cpu ||
      a.cap.memMib - b.cap.memMib ||
      features(a.cap) - features(b.cap) ||
      Number(a.cap.sriov) - Number(b.cap.sriov) ||
      Number(a.cap.qat) - Number(b.cap.qat),
  );
  classCache.set(site, classes);
  return classes;
}

/** Host classes of an index, made once per index (an index is never changed). */
const classCache = new WeakMap<HostIndex, HostClass[]>();
