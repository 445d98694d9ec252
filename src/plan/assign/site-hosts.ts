/**
 * The inventory indexed for assignment: hosts in a fixed order (so input order never changes
 * the outcome), by key, by MAC, and grouped into capacity classes.
 */
import { hostMacs } from '../../observe/types.js';
import { normalizeMac } from '../../util/mac.js';
import type { Host } from '../../observe/types.js';
import { capacityOf } from './need.js';
import type { Capacity } from './need.js';
import { hostKey } from '../../observe/inventory/hosts.js';

/** Who holds a host once a node is placed on it. */
export interface Taker {
  cluster: string;
  node: string;
  sticky: boolean;
}

export interface SiteHost {
  host: Host;
  key: string;
  cap: Capacity;
  taker?: Taker;
}

/** Eligible hosts with the same capacity; `hosts` sorted by key. */
export interface HostClass {
  cap: Capacity;
  hosts: SiteHost[];
}

export interface SiteHosts {
  all: SiteHost[];
  byKey: Map<string, SiteHost>;
  byMac: Map<string, SiteHost[]>;
  ineligible: SiteHost[];
}

export { hostKey };

/** Code-unit order: unlike localeCompare, the same on every machine and locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * What indexing derives from a host alone, kept for as long as the host object lives: under
 * `bpa serve` the hosts of unchanged inventory documents are the same objects from one
 * reconcile to the next (observe/inventory/hosts.ts), and a host is never changed once built.
 */
const derived = new WeakMap<Host, { key: string; cap: Capacity; macs: string[] }>();

function deriveHost(host: Host): { key: string; cap: Capacity; macs: string[] } {
  let d = derived.get(host);
  if (!d) {
    d = { key: hostKey(host), cap: capacityOf(host), macs: hostMacs(host).map(canonicalMac) };
    derived.set(host, d);
  }
  return d;
}

export function indexHosts(hosts: readonly Host[]): SiteHosts {
  const all = hosts
    .map((host): SiteHost => {
      const d = deriveHost(host);
      return { host, key: d.key, cap: d.cap };
    })
    .sort((a, b) => compareText(a.key, b.key) || compareText(a.host.origin, b.host.origin));
  const byKey = new Map<string, SiteHost>();
  const byMac = new Map<string, SiteHost[]>();
  const ineligible: SiteHost[] = [];
  for (const entry of all) {
    if (!byKey.has(entry.key)) byKey.set(entry.key, entry);
    if (!entry.host.eligible) ineligible.push(entry);
    for (const mac of deriveHost(entry.host).macs) {
      const list = byMac.get(mac);
      if (!list) byMac.set(mac, [entry]);
      // Two spellings of one MAC on the same host still name one host.
      else if (list[list.length - 1] !== entry) list.push(entry);
    }
  }
  return { all, byKey, byMac, ineligible };
}

const CANONICAL_MAC = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/;

/**
 * Observe hands over normalized MACs already; normalizing again keeps hand-built hosts
 * honest, and the cheap check first keeps that from costing time on large inventories.
 */
export function canonicalMac(raw: string): string {
  return CANONICAL_MAC.test(raw) ? raw : (normalizeMac(raw) ?? raw.toLowerCase());
}

export function hasMac(entry: SiteHost, mac: string): boolean {
  return hostMacs(entry.host).some((m) => canonicalMac(m) === mac);
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
export function hostClasses(site: SiteHosts): HostClass[] {
  const groups = new Map<string, HostClass>();
  for (const entry of site.all) {
    if (!entry.host.eligible) continue;
    const k = capKey(entry.cap);
    const group = groups.get(k);
    if (group) group.hosts.push(entry);
    else groups.set(k, { cap: entry.cap, hosts: [entry] });
  }
  return [...groups.values()].sort(
    (a, b) =>
      a.cap.cpu - b.cap.cpu ||
      a.cap.memMib - b.cap.memMib ||
      features(a.cap) - features(b.cap) ||
      Number(a.cap.sriov) - Number(b.cap.sriov) ||
      Number(a.cap.qat) - Number(b.cap.qat),
  );
}
