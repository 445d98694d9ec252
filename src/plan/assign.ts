/**
 * Role assignment: which host becomes which node, for the whole site at once.
 *
 * Three passes, each over nodes in site order (clusters by name, then node order):
 *  1. sticky: a node keeps the host recorded in the applied state while that host is still
 *     eligible, still carries the node's MAC (if pinned) and still meets its requirements.
 *     A running node is never moved to make room for another one;
 *  2. MAC: a pinned node gets the one host with that MAC, or a diagnostic saying why not;
 *  3. resources: the other nodes are matched to the free eligible hosts by a maximum
 *     matching over capacity classes (./assign/class-matcher.ts). When hosts run short, the
 *     nodes left unplaced are the ones later in site order; a placed node is the smallest
 *     sufficient host its class could get (fewest cpus, then memory, then fewer special
 *     features, then host key), which keeps big hosts for the nodes that need them.
 * The outcome depends only on the content of the input, never on the order of `hosts`.
 */
import type { Host } from '../observe/types.js';
import type { ClusterModel, NodeSpec } from '../validate/model.js';
import { ClassMatcher } from './assign/class-matcher.js';
import { describeCompetition, describeIneligible } from './assign/diagnose.js';
import { describeFit, describeNeed, describeShortfalls, fits, shortfalls } from './assign/need.js';
import type { Need } from './assign/need.js';
import {
  compareText,
  hasMac,
  hostClasses,
  hostKey,
  indexHosts,
  neutralPatch,
  siteHosts,
} from './assign/site-hosts.js';
import type { HostClass, HostIndex, SiteHost, SiteHosts } from './assign/site-hosts.js';
import { describeFailure, failures, passes, requirementsOf } from './assign/requirements.js';
import type { Failure, Requirements } from './assign/requirements.js';
import { placeByTerms } from './assign/by-terms.js';

export { hostKey };

/** A placement recorded in the applied state; `host` is `hostKey(host)`. */
export interface PriorAssignment {
  cluster: string;
  node: string;
  host: string;
}

export interface Placement {
  cluster: string;
  node: string;
  host: Host;
  /** True when the node stays on the host it was applied on. */
  sticky: boolean;
  /** Why this host: "mac …", "resources: cpu 16>=8, …", "kept from applied state". */
  reason: string;
  /**
   * Kept on the host it was applied on although the host no longer passes the node's
   * required terms (re-inspected hardware, changed labels): what it fails. bpa never moves a
   * running node by itself; with pruning allowed the node is placed anew instead.
   */
  failing?: Failure[];
}

/** A host that came close to an unplaced node, and what it fails. */
export interface NearMiss {
  host: string;
  failures: Failure[];
}

export interface Unplaced {
  cluster: string;
  node: string;
  message: string;
  /** For nodes with placement terms: the hosts that came closest, requirement by requirement. */
  closest?: NearMiss[];
}

export interface AssignOptions {
  /**
   * Keep a node on its applied host when the host, still eligible, no longer passes the
   * node's required terms (plans without pruning): moving it would remove a running node.
   */
  keepFailing?: boolean;
}

export interface Assignment {
  placements: Placement[];
  unplaced: Unplaced[];
  /** What it was made from, for the next assignment to start from (`last`). */
  index: HostIndex;
  clusters: readonly ClusterModel[];
  prior: readonly PriorAssignment[];
  keepFailing: boolean;
}

export interface Slot {
  cluster: string;
  node: NodeSpec;
  req: Requirements;
  /** "node-3 (not eligible: powered off)" when the node had to leave its applied host. */
  movedFrom?: string;
  placed?: Placement;
  message?: string;
  closest?: NearMiss[];
}

/**
 * With `last` (the previous assignment of a long-running process): the same clusters (model
 * objects), prior placements and hosts give the same assignment; hosts that changed only in
 * what assignment does not look at (a label, say: assign/site-hosts.ts `neutralPatch`) give
 * the same placements on the new host objects. Otherwise it is made again.
 */
export function assignHosts(
  clusters: readonly ClusterModel[],
  hosts: readonly Host[],
  prior: readonly PriorAssignment[],
  last?: Assignment,
  options: AssignOptions = {},
): Assignment {
  const keepFailing = options.keepFailing === true;
  const index = indexHosts(hosts, last?.index);
  if (
    last &&
    last.keepFailing === keepFailing &&
    sameModels(clusters, last.clusters) &&
    samePrior(prior, last.prior)
  ) {
    if (index === last.index) return last;
    const patch = neutralPatch(index);
    if (patch?.from === last.index && (patch.factsSame || !usesTerms(clusters))) {
      const placements = last.placements.map((p) => {
        const host = patch.swap.get(p.host);
        return host ? { ...p, host } : p;
      });
      return { placements, unplaced: last.unplaced, index, clusters, prior, keepFailing };
    }
  }
  const slots = orderSlots(clusters);
  const site = siteHosts(index);
  keepPrior(slots, site, prior, keepFailing);
  placeByMac(slots, site);
  placeByResources(slots, site);

  const placements: Placement[] = [];
  const unplaced: Unplaced[] = [];
  for (const s of slots) {
    if (s.placed) placements.push(s.placed);
    else {
      unplaced.push({
        cluster: s.cluster,
        node: s.node.name,
        message: s.message ?? '',
        ...(s.closest ? { closest: s.closest } : {}),
      });
    }
  }
  return { placements, unplaced, index, clusters, prior, keepFailing };
}

/** Whether any node reads labels or hardware facts beyond the capacity (placement terms). */
function usesTerms(clusters: readonly ClusterModel[]): boolean {
  return clusters.some((c) => c.nodes.some((n) => requirementsOf(n).extended));
}

function sameModels(a: readonly ClusterModel[], b: readonly ClusterModel[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

function samePrior(a: readonly PriorAssignment[], b: readonly PriorAssignment[]): boolean {
  return (
    a.length === b.length &&
    a.every((p, i) => {
      const q = b[i] as PriorAssignment;
      return p.cluster === q.cluster && p.node === q.node && p.host === q.host;
    })
  );
}

function orderSlots(clusters: readonly ClusterModel[]): Slot[] {
  const ordered = clusters
    .map((c, i) => ({ c, i }))
    .sort((a, b) => compareText(a.c.name, b.c.name) || a.i - b.i);
  const slots: Slot[] = [];
  for (const { c } of ordered) {
    for (const node of c.nodes) {
      slots.push({ cluster: c.name, node, req: requirementsOf(node) });
    }
  }
  return slots;
}

export function place(
  site: SiteHosts,
  slot: Slot,
  entry: SiteHost,
  sticky: boolean,
  reason: string,
  failing?: Failure[],
): void {
  const why = !sticky && slot.movedFrom ? `moved from ${slot.movedFrom}; ${reason}` : reason;
  const placed: Placement = {
    cluster: slot.cluster,
    node: slot.node.name,
    host: entry.host,
    sticky,
    reason: why,
  };
  if (failing) placed.failing = failing;
  slot.placed = placed;
  // The placement is also the host's taker: it names the cluster and node that hold it.
  site.takers.set(entry, placed);
}

/** What a host fails of a node's required terms, as one text ("" when it passes). */
function failText(slot: Slot, entry: SiteHost): string {
  if (!slot.req.extended) return describeShortfalls(shortfalls(slot.req.need, entry.cap));
  return failures(slot.req, entry.host).map(describeFailure).join('; ');
}

function qualifies(slot: Slot, entry: SiteHost): boolean {
  return slot.req.extended ? passes(slot.req, entry.host) : fits(slot.req.need, entry.cap);
}

export function fail(slot: Slot, text: string): void {
  const moved = slot.movedFrom ? `was on ${slot.movedFrom}; ` : '';
  slot.message = `${slot.node.name}: ${moved}${text}`;
}

function takerText(site: SiteHosts, entry: SiteHost): string {
  const t = site.takers.get(entry);
  if (!t) return '';
  return `${t.cluster}/${t.node}${t.sticky ? ' (kept from applied state)' : ''}`;
}

/** Pass 1: keep nodes on the hosts they were applied on, where those still qualify. */
function keepPrior(
  slots: Slot[],
  site: SiteHosts,
  prior: readonly PriorAssignment[],
  keepFailing: boolean,
): void {
  if (prior.length === 0) return; // nothing applied yet: no node has a host to keep
  const recorded = new Map<string, string>();
  for (const p of prior) {
    const k = `${p.cluster}\u0000${p.node}`;
    if (!recorded.has(k)) recorded.set(k, p.host);
  }
  for (const slot of slots) {
    const key = recorded.get(`${slot.cluster}\u0000${slot.node.name}`);
    if (key === undefined) continue;
    const entry = site.byKey.get(key);
    let why: string | undefined;
    if (!entry) why = 'no longer in the inventory';
    else if (!entry.host.eligible)
      why = `not eligible: ${entry.host.ineligibleReason ?? 'unknown'}`;
    else if (slot.node.mac && !hasMac(entry, slot.node.mac))
      why = `it does not have mac ${slot.node.mac}`;
    else if (site.takers.has(entry)) why = `also recorded for ${takerText(site, entry)}`;
    else if (!qualifies(slot, entry)) {
      if (keepFailing) {
        const failing = failures(slot.req, entry.host);
        const text = failing.map(describeFailure).join('; ');
        place(site, slot, entry, true, `kept from applied state, though it fails ${text}`, failing);
        continue;
      }
      why = failText(slot, entry);
    }
    if (why === undefined && entry) place(site, slot, entry, true, 'kept from applied state');
    else slot.movedFrom = `${key} (${why})`;
  }
}

/** Pass 2: nodes pinned by MAC take exactly that host, verified against their requirements. */
function placeByMac(slots: Slot[], site: SiteHosts): void {
  for (const slot of slots) {
    const mac = slot.node.mac;
    if (slot.placed || !mac) continue;
    const found = site.byMac.get(mac) ?? [];
    const entry = found[0];
    if (!entry) {
      fail(slot, `no host has mac ${mac}${site.all.length ? '' : ` (${EMPTY})`}`);
      continue;
    }
    if (found.length > 1) {
      fail(
        slot,
        `mac ${mac} belongs to more than one host: ${found.map((e) => e.host.key).join(', ')}`,
      );
      continue;
    }
    if (!entry.host.eligible)
      fail(
        slot,
        `${pinned(entry, mac)} is not eligible: ${entry.host.ineligibleReason ?? 'unknown reason'}`,
      );
    else if (!qualifies(slot, entry)) fail(slot, `${pinned(entry, mac)} ${failText(slot, entry)}`);
    else if (site.takers.has(entry))
      fail(slot, `${pinned(entry, mac)} is taken by ${takerText(site, entry)}`);
    else place(site, slot, entry, false, `mac ${mac}`);
  }
}

/** "host metal3/node-1 (mac …)", written only for a problem: most pinned nodes get their host. */
function pinned(entry: SiteHost, mac: string): string {
  return `host ${entry.host.key} (mac ${mac})`;
}

/** Pass 3: a maximum matching of the remaining nodes to the free eligible hosts. */
function placeByResources(slots: Slot[], site: SiteHosts): void {
  const pending = slots.filter((s) => !s.placed && !s.node.mac);
  if (pending.length === 0) return;
  if (pending.some((s) => s.req.extended)) {
    placeByTerms(pending, site, {
      place,
      fail,
      empty: EMPTY,
      ineligible: describeIneligible(site.ineligible),
    });
    return;
  }
  const classes = hostClasses(site.index);
  const free = classes.map((c) => c.hosts.filter((e) => !site.takers.has(e)));

  // Nodes with equal requirements form one class; classes keep the order of their first node.
  const needIndex = new Map<string, number>();
  const needs: Need[] = [];
  const members: Slot[][] = [];
  /** The need class of each of `pending`, in the same order. */
  const classOf = new Int32Array(pending.length);
  pending.forEach((s, at) => {
    const k = needKeyOf(s.req.need);
    let i = needIndex.get(k);
    if (i === undefined) {
      i = needs.length;
      needIndex.set(k, i);
      needs.push(s.req.need);
      members.push([]);
    }
    members[i]?.push(s);
    classOf[at] = i;
  });
  const matcher = new ClassMatcher(
    needs,
    classes.map((c) => c.cap),
    free.map((f) => f.length),
  );
  for (const i of classOf) matcher.place(i);

  // Nodes of a class were served in site order, so the ones placed are its first ones.
  const next = free.map(() => 0);
  members.forEach((list, i) => {
    let n = 0;
    for (const [j, units] of matcher.placements(i)) {
      const pool = free[j] as SiteHost[];
      const cls = classes[j] as HostClass;
      // The same text for every node of the class on this host class, unless a node wrote
      // its memory differently (8Gi vs 8192Mi).
      const reasons = new Map<string, string>();
      for (let u = 0; u < units; u++) {
        const slot = list[n++] as Slot;
        const entry = pool[next[j] ?? 0] as SiteHost;
        next[j] = (next[j] ?? 0) + 1;
        let reason = reasons.get(slot.req.need.memText);
        if (reason === undefined) {
          reason = describeFit(slot.req.need, cls.cap);
          reasons.set(slot.req.need.memText, reason);
        }
        place(site, slot, entry, false, reason);
      }
    }
  });

  const ineligible = describeIneligible(site.ineligible);
  const competition = new Map<number, string>();
  pending.forEach((s, at) => {
    if (s.placed) return;
    const i = classOf[at] as number;
    let text = competition.get(i);
    if (text === undefined) {
      text = describeCompetition(s.req.need, classes, site.takers);
      competition.set(i, text);
    }
    const need = describeNeed(s.req.need) || 'any eligible host';
    if (site.all.length === 0) fail(s, `needs ${need}; ${EMPTY}`);
    else fail(s, `needs ${need}; ${text}${ineligible ? `. ${ineligible}` : ''}`);
  });
}

/** Said instead of "no eligible host qualifies" when there is no host to qualify at all. */
const EMPTY = 'the inventory holds no BareMetalHost (check the inventory source and its warnings)';

function needKeyOf(need: Need): string {
  return `${need.cpu}/${need.memMib}/${need.sriov ? 1 : 0}/${need.qat ? 1 : 0}`;
}
