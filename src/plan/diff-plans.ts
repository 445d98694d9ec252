import type { ClusterPlan, PackageChange, Plan, PlannedNode } from './types.js';

/** One line of what a plan would do: a node's placement, an action, a package change, a note. */
export interface PlanItem {
  kind: 'node' | 'action' | 'package' | 'note';
  /** What the item is about, the same in both plans (a node name, an action kind and nodes…). */
  key: string;
  /** How the plan has it. */
  text: string;
}

export interface ClusterDiff {
  cluster: string;
  /** Items only the base plan has, or has otherwise. */
  base: PlanItem[];
  /** Items only the head plan has, or has otherwise. */
  head: PlanItem[];
}

export interface PlanDiff {
  baseHash: string;
  headHash: string;
  /** Clusters whose plans differ, by name. */
  clusters: ClusterDiff[];
}

/**
 * What differs between two plans of the same site (a base and a head revision, planned against
 * the same world): per cluster, the node placements, actions, package changes and notes that
 * only one of them has. Pure; the same plans always give the same diff, in plan order.
 */
export function diffPlans(base: Plan, head: Plan): PlanDiff {
  const names = [...new Set([...base.clusters, ...head.clusters].map((c) => c.cluster))].sort();
  const clusters: ClusterDiff[] = [];
  for (const name of names) {
    const a = items(base.clusters.find((c) => c.cluster === name));
    const b = items(head.clusters.find((c) => c.cluster === name));
    const inB = new Set(b.map(id));
    const inA = new Set(a.map(id));
    const onlyA = a.filter((i) => !inB.has(id(i)));
    const onlyB = b.filter((i) => !inA.has(id(i)));
    if (onlyA.length || onlyB.length) clusters.push({ cluster: name, base: onlyA, head: onlyB });
  }
  return { baseHash: base.hash, headHash: head.hash, clusters };
}

function id(i: PlanItem): string {
  return `${i.kind}\0${i.key}\0${i.text}`;
}

const SYMBOL: Record<PlannedNode['change'], string> = {
  add: 'add',
  remove: 'remove',
  update: 'update',
  keep: 'keep',
};

function items(c: ClusterPlan | undefined): PlanItem[] {
  if (!c) return [];
  const out: PlanItem[] = [];
  for (const n of c.nodes)
    out.push({
      kind: 'node',
      key: n.name,
      text: `${n.name} (${n.roles.join('+')}) ${SYMBOL[n.change]} on ${n.host} ${n.ip}${n.details?.length ? ` (${n.details.join('; ')})` : ''}`,
    });
  for (const a of c.actions) {
    out.push({
      kind: 'action',
      key: a.kind,
      text: `${a.kind}${a.nodes.length ? ` ${a.nodes.join(', ')}` : ''}${a.plugins?.length ? ` plugins ${a.plugins.join(', ')}` : ''}`,
    });
    for (const p of a.packages ?? [])
      out.push({ kind: 'package', key: `${p.node}/${p.name}`, text: packageText(a.kind, p) });
  }
  for (const n of c.notes) out.push({ kind: 'note', key: n, text: n });
  return out;
}

function packageText(kind: string, p: PackageChange): string {
  return `${p.node}: ${p.name} ${p.from ?? '(none)'} → ${kind === 'remove-packages' ? '(removed)' : (p.to ?? 'any version')} (${kind})`;
}
