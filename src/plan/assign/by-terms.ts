/**
 * Placement of nodes with placement terms (hostSelector, hardware, preferred): a min-cost
 * maximum flow over classes. Nodes with the same requirements form one node class; free
 * eligible hosts that every node class judges alike (passes or not, and the preference weight
 * it scores) form one host class, so 10,000 hosts of a few hardware profiles make a graph of
 * a few dozen vertices. Each requirement is compiled once per node entry
 * (assign/requirements.ts) and run once per host and node class.
 *
 * Costs are lexicographic: the flow is maximal (most nodes placed); among maximal flows the
 * total preference weight is largest (weight × M, M larger than any sum of the tie-break);
 * then node classes earlier in site order are served first (their rank).
 */
import { describeFit } from './need.js';
import { MinCostFlow } from './min-cost-flow.js';
import {
  describeRequirements,
  failures,
  passes,
  weightOf,
  type Failure,
  type Requirements,
} from './requirements.js';
import type { SiteHost, SiteHosts } from './site-hosts.js';
import { pluralize, word } from '../../util/pluralize.js';

const CLOSEST = 3;
const LISTED = 3;

/** What assign.ts's slots carry that this needs (a structural type: no import cycle). */
export interface TermSlot {
  cluster: string;
  node: { name: string };
  req: Requirements;
  placed?: unknown;
  closest?: Array<{ host: string; failures: Failure[] }>;
}

export interface TermCallbacks<S> {
  place(site: SiteHosts, slot: S, entry: SiteHost, sticky: boolean, reason: string): void;
  fail(slot: S, text: string): void;
  /** What to say when the inventory is empty. */
  empty: string;
  /** "2 hosts ineligible: …", or "". */
  ineligible: string;
}

interface HostGroup {
  hosts: SiteHost[];
  /** The node classes whose required terms the hosts pass, each with the weight they score. */
  classes: number[];
  weights: number[];
}

export function placeByTerms<S extends TermSlot>(
  pending: S[],
  site: SiteHosts,
  cb: TermCallbacks<S>,
): void {
  const classIndex = new Map<string, number>();
  const reqs: Requirements[] = [];
  const members: S[][] = [];
  for (const s of pending) {
    let i = classIndex.get(s.req.key);
    if (i === undefined) {
      i = reqs.length;
      classIndex.set(s.req.key, i);
      reqs.push(s.req);
      members.push([]);
    }
    (members[i] as S[]).push(s);
  }

  // Each node class against the free hosts it could use (those with its anchor label, when it
  // has one): per host, the classes it passes and the weight it scores for each.
  const free = site.all.filter((e) => e.host.eligible && !site.takers.has(e));
  const at = new Map<SiteHost, number>();
  free.forEach((e, n) => at.set(e, n));
  const passed: number[][] = free.map(() => []);
  const byLabel = anchorIndex(reqs, free);
  // Whether a host passes, per distinct required set: 0 not asked yet, 1 passes, 2 fails.
  const verdicts = new Map<string, Uint8Array>();
  reqs.forEach((r, i) => {
    const candidates = r.anchor
      ? r.anchor.values.flatMap((v) => byLabel.get(r.anchor?.key as string)?.get(v) ?? [])
      : free;
    let verdict = verdicts.get(r.requiredKey);
    if (!verdict) verdicts.set(r.requiredKey, (verdict = new Uint8Array(free.length)));
    for (const entry of candidates) {
      const n = at.get(entry) as number;
      if (verdict[n] === 0) verdict[n] = passes(r, entry.host) ? 1 : 2;
      if (verdict[n] === 2) continue;
      (passed[n] as number[]).push(i, r.preferred.length ? weightOf(r, entry.host) : 0);
    }
  });
  const groups = new Map<string, HostGroup>();
  free.forEach((entry, n) => {
    const pairs = passed[n] as number[];
    if (pairs.length === 0) return;
    const k = pairs.join(',');
    const g = groups.get(k);
    if (g) g.hosts.push(entry);
    else {
      const classes: number[] = [];
      const weights: number[] = [];
      for (let p = 0; p < pairs.length; p += 2) {
        classes.push(pairs[p] as number);
        weights.push(pairs[p + 1] as number);
      }
      groups.set(k, { hosts: [entry], classes, weights });
    }
  });
  // Smallest hosts first, as the resource matcher prefers them: ties in the flow go there.
  const hostGroups = [...groups.values()].sort((a, b) => bySize(a.hosts[0], b.hosts[0]));

  const nc = reqs.length;
  const hc = hostGroups.length;
  // Weight × m outweighs any sum of ranks; the ranks are dropped where the costs would lose
  // integer precision (a site far larger than any real one), keeping the weights exact.
  let maxWeight = 0; // the most one node can score
  for (const r of reqs)
    maxWeight = Math.max(
      maxWeight,
      r.preferred.reduce((sum, p) => sum + p.weight, 0),
    );
  const ranked = (maxWeight + 1) * pending.length * (nc * pending.length + 1) < 2 ** 52;
  const m = ranked ? nc * pending.length + 1 : 1;

  // The graph falls apart into parts that share no host; each is solved on its own, so nodes
  // that each select their own host make many tiny graphs, not one of 10,000 vertices.
  const parent = Int32Array.from({ length: nc + hc }, (_, k) => k);
  const find = (k: number): number => {
    while (parent[k] !== k) {
      parent[k] = parent[parent[k] as number] as number;
      k = parent[k] as number;
    }
    return k;
  };
  hostGroups.forEach((g, j) => {
    for (const i of g.classes) {
      const a = find(i);
      const b = find(nc + j);
      if (a !== b) parent[a] = b;
    }
  });
  const parts = new Map<number, { classes: number[]; groups: number[] }>();
  const partOf = (k: number): { classes: number[]; groups: number[] } => {
    const root = find(k);
    let part = parts.get(root);
    if (!part) parts.set(root, (part = { classes: [], groups: [] }));
    return part;
  };
  for (let i = 0; i < nc; i++) partOf(i).classes.push(i);
  for (let j = 0; j < hc; j++) partOf(nc + j).groups.push(j);

  const edges: Array<{ i: number; j: number; w: number; id: number; flow: MinCostFlow }> = [];
  for (const part of parts.values()) {
    if (part.groups.length === 0) continue;
    const local = new Map<number, number>();
    part.classes.forEach((i, k) => local.set(i, k));
    const size = part.classes.length + part.groups.length;
    const flow = new MinCostFlow(size + 2);
    part.classes.forEach((i, k) =>
      flow.addEdge(size, k, (members[i] as S[]).length, ranked ? i : 0),
    );
    part.groups.forEach((j, q) => {
      const g = hostGroups[j] as HostGroup;
      g.classes.forEach((i, p) => {
        const w = g.weights[p] as number;
        const id = flow.addEdge(
          local.get(i) as number,
          part.classes.length + q,
          pending.length,
          -w * m,
        );
        edges.push({ i, j, w, id, flow });
      });
      flow.addEdge(part.classes.length + q, size + 1, g.hosts.length, 0);
    });
    flow.run(size, size + 1);
  }

  const nextMember = members.map(() => 0);
  const nextHost = hostGroups.map(() => 0);
  for (const { i, j, w, id, flow } of edges) {
    const units = flow.flowOn(id);
    const g = hostGroups[j] as HostGroup;
    for (let u = 0; u < units; u++) {
      const slot = (members[i] as S[])[nextMember[i] as number] as S;
      nextMember[i] = (nextMember[i] as number) + 1;
      const entry = g.hosts[nextHost[j] as number] as SiteHost;
      nextHost[j] = (nextHost[j] as number) + 1;
      cb.place(site, slot, entry, false, reasonOf(slot, entry, w));
    }
  }

  const explained = new Map<number, { text: string; closest: S['closest'] }>();
  members.forEach((list, i) => {
    for (const slot of list) {
      if (slot.placed) continue;
      let why = explained.get(i);
      if (!why) {
        why = explain(reqs[i] as Requirements, site);
        explained.set(i, why);
      }
      const need = describeRequirements(slot.req);
      if (site.all.length === 0) cb.fail(slot, `needs ${need}; ${cb.empty}`);
      else {
        cb.fail(slot, `needs ${need}; ${why.text}${cb.ineligible ? `. ${cb.ineligible}` : ''}`);
        if (why.closest?.length) slot.closest = why.closest;
      }
    }
  });
}

/** Free hosts by the value of each label some node class is anchored on. */
function anchorIndex(
  reqs: readonly Requirements[],
  free: readonly SiteHost[],
): Map<string, Map<string, SiteHost[]>> {
  const index = new Map<string, Map<string, SiteHost[]>>();
  for (const r of reqs)
    if (r.anchor && !index.has(r.anchor.key)) index.set(r.anchor.key, new Map());
  for (const [key, values] of index) {
    for (const entry of free) {
      const v = entry.host.labels[key];
      if (v === undefined) continue;
      const list = values.get(v);
      if (list) list.push(entry);
      else values.set(v, [entry]);
    }
  }
  return index;
}

function reasonOf(slot: TermSlot, entry: SiteHost, weight: number): string {
  if (!slot.req.extended) return describeFit(slot.req.need, entry.cap);
  const n = slot.req.required.length;
  const pref = slot.req.preferred.length ? `, preferred weight ${weight}` : '';
  return `terms: ${n} required passed${pref}`;
}

function bySize(a: SiteHost | undefined, b: SiteHost | undefined): number {
  if (!a || !b) return 0;
  return (
    a.cap.cpu - b.cap.cpu ||
    a.cap.memMib - b.cap.memMib ||
    Number(a.cap.sriov) + Number(a.cap.qat) - Number(b.cap.sriov) - Number(b.cap.qat) ||
    (a.host.key < b.host.key ? -1 : a.host.key > b.host.key ? 1 : 0)
  );
}

/**
 * Why a node class found no host: how many eligible hosts pass and who holds them, and the
 * eligible hosts that came closest (fewest unmet requirements, then by key), each with what
 * it fails and the value it has.
 */
function explain(
  req: Requirements,
  site: SiteHosts,
): { text: string; closest: Array<{ host: string; failures: Failure[] }> } {
  let qualify = 0;
  const takers: string[] = [];
  let near: Array<{ entry: SiteHost; misses: number }> = [];
  for (const entry of site.all) {
    if (!entry.host.eligible) continue;
    let misses = 0;
    for (const c of req.required) if (!c.ok(entry.host)) misses++;
    if (misses === 0) {
      qualify++;
      const t = site.takers.get(entry);
      if (t) takers.push(`${t.cluster}/${t.node}`);
      continue;
    }
    const worst = near[near.length - 1];
    if (near.length < CLOSEST || (worst && misses < worst.misses)) {
      near.push({ entry, misses });
      near.sort((a, b) => a.misses - b.misses); // stable: equal misses stay in key order
      near = near.slice(0, CLOSEST);
    }
  }
  const closest = near.map((n) => ({
    host: n.entry.host.key,
    failures: failures(req, n.entry.host),
  }));
  let text: string;
  if (qualify === 0) text = 'no eligible host passes its required terms';
  else {
    const shown = takers.slice(0, LISTED).join(', ');
    const more = takers.length > LISTED ? `, and ${takers.length - LISTED} more` : '';
    text = `${pluralize(qualify, 'host')} ${word(qualify, 'passes', 'pass')}, ${qualify === takers.length ? 'all' : takers.length} taken by ${shown}${more}`;
  }
  if (closest.length) {
    text += `; closest: ${closest
      .map((c) => `${c.host} (${c.failures.map(describeFailureShort).join('; ')})`)
      .join(', ')}`;
  }
  return { text, closest };
}

function describeFailureShort(f: Failure): string {
  return f.has === 'not reported'
    ? `${f.requirement} not reported, needs ${f.needs}`
    : `${f.requirement} ${f.has}, needs ${f.needs}`;
}
