import { factsKey } from '../../observe/facts.js';
import type { PackageSpec } from '../../validate/model.js';
import type { PackageChange } from '../types.js';
import type { ClusterDiff } from './context.js';

/** What a node reports installed (name → version, null: not installed); undefined: unknown. */
export type Installed = Readonly<Record<string, string | null>>;

/**
 * The packages a node reports, when it was reached; an unreachable node is noted, and its
 * packages are planned from the applied state alone.
 */
export function observedHeld(d: ClusterDiff, node: string): ReadonlySet<string> | undefined {
  const facts = d.facts?.get(factsKey(d.cluster.name, node));
  return facts?.reachable && facts.held ? new Set(facts.held) : undefined;
}

export function observedPackages(d: ClusterDiff, node: string): Installed | undefined {
  const facts = d.facts?.get(factsKey(d.cluster.name, node));
  if (facts && !facts.reachable) {
    d.notes.push(
      `node ${node} is unreachable, its packages were not checked: ${facts.error?.message ?? 'no answer'}`,
    );
  }
  return facts?.reachable ? facts.installed : undefined;
}

/**
 * A package the site and the applied state agree on, which the node itself reports otherwise
 * (removed, another version than pinned, or a pinned package's hold removed, by hand): a
 * fix-drift change; undefined: no drift. `held` undefined: holds not known, not judged.
 */
export function driftOf(
  node: string,
  want: PackageSpec,
  seen: Installed | undefined,
  held?: ReadonlySet<string>,
): PackageChange | undefined {
  if (!seen || !(want.name in seen)) return undefined;
  const now = seen[want.name];
  if (now === null || (want.version !== undefined && now !== want.version))
    return { node, name: want.name, from: now ?? undefined, to: want.version };
  if (want.version !== undefined && held && !held.has(want.name))
    return { node, name: want.name, from: now, to: want.version, unheld: true };
  return undefined;
}

/** The reason of a fix-drift action: each node's package as found and as wanted. */
export function driftReason(changes: readonly PackageChange[]): string {
  return `nodes differ from what was applied: ${changes.map((d) => (d.unheld ? `${d.node} has ${d.name} ${d.from ?? ''} no longer on hold` : `${d.node} has ${d.name} ${d.from ?? 'not installed'}${d.to ? `, wanted ${d.to}` : ''}`)).join('; ')}`;
}
