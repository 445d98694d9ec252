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
import type { Need } from './need.js';
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
  need: Need;
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
  /** Per node class: -1 when the hosts fail its required terms, else the weight they score. */
  score: number[];
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

  const groups = new Map<string, HostGroup>();
  for (const entry of site.all) {
    if (!entry.host.eligible || site.takers.has(entry)) continue;
    const score = reqs.map((r) => (passes(r, entry.host) ? weightOf(r, entry.host) : -1));
    if (score.every((x) => x < 0)) continue;
    const k = score.join(',');
    const g = groups.get(k);
    if (g) g.hosts.push(entry);
    else groups.set(k, { hosts: [entry], score });
  }
  // Smallest hosts first, as the resource matcher prefers them: ties in the flow go there.
  const hostGroups = [...groups.values()].sort((a, b) => bySize(a.hosts[0], b.hosts[0]));

  const nc = reqs.length;
  const hc = hostGroups.length;
  const flow = new MinCostFlow(nc + hc + 2);
  const source = nc + hc;
  const sink = source + 1;
  // Weight × m outweighs any sum of ranks; the ranks are dropped where the costs would lose
  // integer precision (a site far larger than any real one), keeping the weights exact.
  let maxWeight = 0;
  for (const r of reqs) maxWeight += r.preferred.reduce((sum, p) => sum + p.weight, 0);
  const ranked = (maxWeight + 1) * pending.length * (nc * pending.length + 1) < 2 ** 52;
  const m = ranked ? nc * pending.length + 1 : 1;
  members.forEach((list, i) => flow.addEdge(source, i, list.length, ranked ? i : 0));
  const edges: Array<{ i: number; j: number; id: number }> = [];
  hostGroups.forEach((g, j) => {
    g.score.forEach((w, i) => {
      if (w >= 0) edges.push({ i, j, id: flow.addEdge(i, nc + j, pending.length, -w * m) });
    });
    flow.addEdge(nc + j, sink, g.hosts.length, 0);
  });
  flow.run(source, sink);

  const nextMember = members.map(() => 0);
  const nextHost = hostGroups.map(() => 0);
  for (const { i, j, id } of edges) {
    const units = flow.flowOn(id);
    const g = hostGroups[j] as HostGroup;
    const w = g.score[i] as number;
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

function reasonOf(slot: TermSlot, entry: SiteHost, weight: number): string {
  if (!slot.req.extended) return describeFit(slot.need, entry.cap);
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
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
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
  const closest = near.map((n) => ({ host: n.entry.key, failures: failures(req, n.entry.host) }));
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
