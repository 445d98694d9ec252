import { normalizeMac } from '../../util/mac.js';
import type { Lease } from '../types.js';

/** A lease still in force after supersession, with its position in the input for tie-breaks. */
export interface Candidate {
  lease: Lease;
  seq: number;
}

/**
 * True when `a` should replace `b` as a MAC's lease: an IPv4 lease beats an IPv6 one (a host
 * is reached at its IPv4 address first), then the later expiry wins, an infinite lease beats
 * any finite one, and on a tie the caller's later entry wins (it passes `a` as the later).
 */
export function supersedes(a: Lease, b: Lease): boolean {
  const v6 = a.ip.includes(':');
  if (v6 !== b.ip.includes(':')) return !v6;
  if (a.expires === undefined) return true;
  if (b.expires === undefined) return false;
  return a.expires >= b.expires;
}

export function isExpired(lease: Lease, now: number): boolean {
  return lease.expires !== undefined && lease.expires <= now;
}

/**
 * Keeps the newest unexpired lease per MAC. Returns them in input order (by `seq`), so a later
 * merge can still break ties by file order.
 */
export function newestPerMac(candidates: Iterable<Candidate>, now: number): Lease[] {
  const best = new Map<string, Candidate>();
  for (const c of candidates) {
    if (isExpired(c.lease, now)) continue;
    const held = best.get(c.lease.mac);
    if (!held) {
      best.set(c.lease.mac, c);
      continue;
    }
    const later = held.seq < c.seq ? c : held;
    const earlier = later === c ? held : c;
    if (supersedes(later.lease, earlier.lease)) best.set(c.lease.mac, later);
    else best.set(c.lease.mac, earlier);
  }
  const kept = [...best.values()];
  // Often already in order (dnsmasq; files without duplicates): skip the sort then.
  let ordered = true;
  for (let k = 1; k < kept.length && ordered; k++)
    ordered = (kept[k - 1]?.seq ?? 0) < (kept[k]?.seq ?? 0);
  if (!ordered) kept.sort((x, y) => x.seq - y.seq);
  return kept.map((c) => c.lease);
}

/**
 * Merges the leases of several files into MAC → newest lease. Files are given in order, oldest
 * or lowest priority first: on equal expiry the later file's lease wins.
 */
export function mergeLeases(results: Lease[][]): Map<string, Lease> {
  const merged = new Map<string, Lease>();
  for (const leases of results) {
    for (const lease of leases) {
      const mac = normalizeMac(lease.mac);
      if (!mac) continue;
      const held = merged.get(mac);
      if (!held || supersedes(lease, held))
        merged.set(mac, mac === lease.mac ? lease : { ...lease, mac });
    }
  }
  return merged;
}
