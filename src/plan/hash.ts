import { createHash } from 'node:crypto';
import type { ExecutionSettings } from '../config/execution.js';
import type { Action, ClusterPlan, PackageChange, PlannedNode } from './types.js';

/**
 * JSON with object keys sorted at every level: the same data always gives the same text.
 * Written as JSON.stringify, without a replacer, of the value with every object whose keys are
 * out of order copied in order (a replacer rebuilding every object took twice as long on a
 * 10,000-host plan); objects already in order, as planHash builds its own, are not copied.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value, ''));
}

/** `value` as JSON.stringify would see it, each object's keys in sorted order; itself if so. */
function sorted(value: unknown, key: string): unknown {
  let v = value;
  if (v === null || (typeof v !== 'object' && typeof v !== 'bigint')) return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function')
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? v.toString() : v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = sorted(x, String(i));
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  // In order already: string keys ascending, none integer-like (JavaScript puts those first).
  let inOrder = true;
  for (let i = 0; i < keys.length && inOrder; i++) {
    const k = keys[i] as string;
    const c = k.charCodeAt(0);
    if ((c >= 0x30 && c <= 0x39) || (i > 0 && !((keys[i - 1] as string) < k))) inOrder = false;
  }
  if (inOrder) {
    let out: Record<string, unknown> | undefined;
    for (const k of keys) {
      const x = obj[k];
      const y = sorted(x, k);
      if (y !== x) (out ??= { ...obj })[k] = y;
    }
    return out ?? obj;
  }
  const out: Record<string, unknown> = {};
  // Integer-like keys still come first, in numeric order: JavaScript orders them so in any object.
  for (const k of keys.sort()) out[k] = sorted(obj[k], k);
  return out;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The plan hash covers what would run and nothing else: per cluster its nodes (name, roles,
 * host, MAC, address, change), its actions (kind, nodes, plugins, packages), the inventory
 * the installer gets (with its etcd members and pod subnet) and what is recorded as applied; and how bpa acts (installer commands,
 * package mirror, SSH user and port). Explanations (reasons, placement texts, notes) and where
 * things were read from (file paths, lease line numbers) are left out, so the same site and
 * world give the same hash from any directory and any order of lease lines.
 */
export function planHash(
  clusters: readonly ClusterPlan[],
  settings: ExecutionSettings | undefined,
): string {
  return hashOfEntries(clusters.map(clusterHashText), settings);
}

/**
 * One cluster's entry in the plan hash, as canonical JSON: the hash is that of
 * `{"clusters":[entry,…],"settings":…}`, so an unchanged cluster's entry can be kept.
 */
export function clusterHashText(c: ClusterPlan): string {
  // One JSON.stringify of an object built with its keys in sorted order, as canonicalJson
  // would write it (test/unit/plan/plan-cache.test.ts compares the two): twice as fast on a
  // 10,000-node plan as writing the text member by member, and it makes a fraction of the
  // strings. The plan's types make it canonical at every level: the other members are strings
  // and lists of strings, written as they are, and the free-form values (desired, rollout) are
  // put in order by `sorted`, which returns them as they are when they already are.
  const entry: Record<HashedClusterKey, unknown> = {
    actions: c.actions.map(hashedAction),
    cluster: c.cluster,
    desired: sorted(c.desired, 'desired'),
    etcd: c.etcd,
    flavour: c.flavour,
    hostsIni: c.hostsIni,
    nodes: c.nodes.map(hashedNode),
    podSubnet: c.podSubnet,
    rollout: sorted(c.rollout, 'rollout'),
  };
  return JSON.stringify(entry);
}

/** What the hash covers of a cluster. */
type HashedClusterKey =
  | 'actions'
  | 'cluster'
  | 'desired'
  | 'etcd'
  | 'flavour'
  | 'hostsIni'
  | 'nodes'
  | 'podSubnet'
  | 'rollout';

/** What the hash covers of a node, keys in sorted order. */
function hashedNode(
  n: PlannedNode,
): Pick<PlannedNode, 'change' | 'host' | 'ip' | 'mac' | 'name' | 'roles'> {
  return { change: n.change, host: n.host, ip: n.ip, mac: n.mac, name: n.name, roles: n.roles };
}

/** What the hash covers of an action (kind, nodes, packages, plugins), keys in sorted order. */
function hashedAction(a: Action): Record<'kind' | 'nodes' | 'packages' | 'plugins', unknown> {
  return {
    kind: a.kind,
    nodes: a.nodes,
    packages: Array.isArray(a.packages) ? a.packages.map(hashedPackage) : a.packages,
    plugins: a.plugins,
  };
}

/**
 * Every key of a package change, in sorted order: all of them are hashed, and the compiler
 * holds the literal to the type (every key of PackageChange, no other).
 */
function hashedPackage(p: PackageChange): Record<keyof PackageChange, unknown> {
  return { from: p.from, name: p.name, node: p.node, to: p.to, unheld: p.unheld };
}

/**
 * The plan hash from the clusters' entries (clusterHashText): the SHA-256 of
 * `canonicalJson({ clusters, settings })`, fed piece by piece, written as JSON.stringify
 * writes it (no spaces; no settings key when there are none).
 */
export function hashOfEntries(
  entries: readonly string[],
  settings: ExecutionSettings | undefined,
): string {
  const hash = createHash('sha256');
  hash.update('{"clusters":[');
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) hash.update(',');
    hash.update(entries[i] as string);
  }
  hash.update(']');
  if (settings !== undefined) hash.update(`,"settings":${canonicalJson(settings)}`);
  hash.update('}');
  return hash.digest('hex');
}
