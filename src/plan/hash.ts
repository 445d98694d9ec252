import { createHash } from 'node:crypto';
import type { ExecutionSettings } from '../config/execution.js';
import type { Action, ClusterPlan, PackageChange } from './types.js';

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
  // Written out key by key, in sorted order, as canonicalJson would write the object
  // (test/unit/plan/plan-cache.test.ts compares the two): building the object and then
  // walking it for key order took a quarter of a 10,000-node plan's planning.
  return (
    `{"actions":${actionsText(c.actions)}` +
    member('cluster', c.cluster) +
    member('desired', c.desired) +
    member('etcd', c.etcd) +
    member('flavour', c.flavour) +
    member('hostsIni', c.hostsIni) +
    `,"nodes":${objectsText(c.nodes, NODE_KEYS)}` +
    member('podSubnet', c.podSubnet) +
    member('rollout', c.rollout) +
    '}'
  );
}

/** What the hash covers of a node, in sorted order. */
const NODE_KEYS = ['change', 'host', 'ip', 'mac', 'name', 'roles'] as const;

/**
 * Every key of a package change, in sorted order: all of them are hashed, and the compiler
 * holds this list to the type (each key once, no other).
 */
const PACKAGE_KEYS = Object.keys({
  from: 1,
  name: 1,
  node: 1,
  to: 1,
  unheld: 1,
} satisfies Record<keyof PackageChange, 1>).sort() as (keyof PackageChange)[];

/**
 * The actions as the hash covers them (kind, nodes, packages, plugins, in that order), each
 * package change written out key by key like the other entries: sorting the keys of ~20,000
 * package changes made a fifth of what a 10,000-node plan allocated.
 */
function actionsText(actions: readonly Action[]): string {
  let out = '[';
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i] as Action;
    let body = member('kind', a.kind) + member('nodes', a.nodes);
    if (Array.isArray(a.packages)) body += `,"packages":${objectsText(a.packages, PACKAGE_KEYS)}`;
    else body += member('packages', a.packages);
    body += member('plugins', a.plugins);
    out += `${i === 0 ? '' : ','}{${body.slice(1)}}`;
  }
  return out + ']';
}

/** A JSON array of objects holding `keys` of each item (in the order given: sorted). */
function objectsText<T extends object>(items: readonly T[], keys: readonly (keyof T)[]): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    let body = '';
    for (const key of keys) body += member(key as string, item[key]);
    out += `${i === 0 ? '' : ','}{${body.slice(1)}}`;
  }
  return out + ']';
}

/**
 * `,"key":value` as canonicalJson writes a member of an object after another (nothing for
 * undefined, as JSON.stringify leaves such members out); the caller drops the first comma.
 */
function member(key: string, value: unknown): string {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return '';
  // A string, or a list of strings, has no keys to order: JSON.stringify writes it as is.
  const plain =
    typeof value === 'string' ||
    (Array.isArray(value) && value.every((v) => typeof v === 'string'));
  const text = plain ? JSON.stringify(value) : canonicalJson(value);
  return `,"${key}":${text}`;
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
