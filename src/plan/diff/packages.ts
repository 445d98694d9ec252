import type { AppliedCluster } from '../../state/applied.js';
import { pluralize, word } from '../../util/pluralize.js';
import type { ClusterModel, PackageSpec, Role } from '../../validate/model.js';
import type { Action, PackageChange, PlannedNode } from '../types.js';
import { inputsOf, nodesOf, packagesFor, type ClusterDiff } from './context.js';
import { driftOf, driftReason, observedHeld, observedPackages } from './drift.js';

/**
 * OS packages of a running cluster, after the node diff: new nodes get everything of their
 * roles; others get the difference between what their roles ask for now and what bpa applied
 * before; and where the node itself reports something else than what was applied, fix-drift.
 */
export function diffPackages(d: ClusterDiff): void {
  const changes: Record<'install' | 'upgrade' | 'remove' | 'drift', PackageChange[]> = {
    install: [],
    upgrade: [],
    remove: [],
    drift: [],
  };
  for (const n of d.nodes) {
    if (n.change === 'remove') continue;
    const want = packagesFor(d.cluster, n.roles);
    if (n.change === 'add') {
      for (const p of want) changes.install.push({ node: n.name, name: p.name, to: p.version });
      continue;
    }
    const seen = observedPackages(d, n.name);
    const held = observedHeld(d, n.name);
    const had = new Map(appliedPackages(d.applied, n.roles).map((p) => [p.name, p]));
    for (const p of want) {
      const h = had.get(p.name);
      const now = seen?.[p.name];
      had.delete(p.name);
      if (!h) {
        changes.install.push({ node: n.name, name: p.name, from: now ?? undefined, to: p.version });
      } else if (p.version !== undefined && h.version !== p.version) {
        // Unpinning needs no change on the node; a new or changed pin does.
        changes.upgrade.push({ node: n.name, name: p.name, from: now ?? h.version, to: p.version });
      } else {
        const drift = driftOf(n.name, p, seen, held);
        if (drift) changes.drift.push(drift);
      }
    }
    for (const h of had.values()) {
      if (d.prune)
        changes.remove.push({ node: n.name, name: h.name, from: seen?.[h.name] ?? h.version });
    }
    if (!d.prune && had.size) {
      d.notes.push(
        `node ${n.name}: ${word(had.size, 'package')} ${[...had.keys()].join(', ')} no longer listed; run with --prune to remove ${word(had.size, 'it', 'them')}`,
      );
    }
  }
  const add = (kind: Action['kind'], list: PackageChange[], reason: string): void => {
    if (list.length) d.actions.push(packageAction(d.cluster, kind, list, reason));
  };
  add('install-packages', changes.install, summarize('install', changes.install));
  add('upgrade-packages', changes.upgrade, summarize('upgrade', changes.upgrade));
  add('remove-packages', changes.remove, summarize('remove', changes.remove));
  add('fix-drift', changes.drift, driftReason(changes.drift));
}

/** A new cluster: every node gets the packages of its roles; undefined when there are none. */
export function newClusterPackages(
  cluster: ClusterModel,
  nodes: readonly PlannedNode[],
): Action | undefined {
  const packages = nodes.flatMap((n) =>
    packagesFor(cluster, n.roles).map((p) => ({ node: n.name, name: p.name, to: p.version })),
  );
  if (!packages.length) return undefined;
  return packageAction(
    cluster,
    'install-packages',
    packages,
    'new cluster: every node gets the packages of its roles',
  );
}

function packageAction(
  cluster: ClusterModel,
  kind: Action['kind'],
  packages: PackageChange[],
  reason: string,
): Action {
  return {
    kind,
    cluster: cluster.name,
    nodes: nodesOf(packages),
    reason,
    inputs: inputsOf(cluster, 'software'),
    packages,
  };
}

function appliedPackages(applied: AppliedCluster, roles: readonly Role[]): PackageSpec[] {
  const out = new Map<string, PackageSpec>();
  for (const role of roles)
    for (const p of applied.packages[role] ?? []) if (!out.has(p.name)) out.set(p.name, p);
  return [...out.values()];
}

function summarize(verb: string, changes: PackageChange[]): string {
  const names = [...new Set(changes.map((c) => (c.to ? `${c.name}=${c.to}` : c.name)))];
  return `${verb} ${names.join(', ')} on ${pluralize(nodesOf(changes).length, 'node')}`;
}
