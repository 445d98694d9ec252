import type { NodeFacts } from '../../observe/facts.js';
import type { AppliedCluster } from '../../state/applied.js';
import type { ClusterModel, PackageSpec, Role } from '../../validate/model.js';
import type { Action, PackageChange, PlannedNode } from '../types.js';

/**
 * One running cluster compared with the site: what each per-concern diff (nodes, plugins,
 * packages, drift) reads, and the actions and notes they add to. The diffs run in that order;
 * the node diff decides which nodes are added, kept or removed, the later ones follow it.
 */
export interface ClusterDiff {
  cluster: ClusterModel;
  /** The placed nodes; the node diff marks each add/keep/update and appends removed ones. */
  nodes: PlannedNode[];
  applied: AppliedCluster;
  /** Allow remove-nodes and remove-packages. */
  prune: boolean;
  /** What nodes report, keyed `cluster/node`; absent: not observed. */
  facts?: ReadonlyMap<string, NodeFacts>;
  actions: Action[];
  notes: string[];
}

/** The site documents an action of this cluster comes from, as the plan names them. */
export function inputsOf(
  cluster: ClusterModel,
  what: 'provisioning' | 'software' | 'both',
): string[] {
  const out: string[] = [];
  if (what !== 'software')
    out.push(`Provisioning ${cluster.provisioning.name} (${cluster.provisioning.ref.file})`);
  if (what !== 'provisioning' && cluster.software)
    out.push(`Software ${cluster.software.name} (${cluster.software.ref.file})`);
  return out;
}

/**
 * The packages of a node's roles; a dual-role node gets both lists, the masters' pin first
 * (two different pins are a PACKAGE_CONFLICT of the site: it does not validate).
 */
export function packagesFor(cluster: ClusterModel, roles: readonly Role[]): PackageSpec[] {
  const out = new Map<string, PackageSpec>();
  for (const role of roles) {
    for (const p of role === 'master' ? cluster.masterSoftware : cluster.workerSoftware)
      if (!out.has(p.name)) out.set(p.name, p);
  }
  return [...out.values()];
}

/** The nodes package changes touch, each once, in order. */
export function nodesOf(changes: readonly PackageChange[]): string[] {
  return [...new Set(changes.map((c) => c.node))];
}
