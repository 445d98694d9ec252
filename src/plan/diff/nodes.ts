import type { AppliedNode } from '../../state/applied.js';
import { word } from '../../util/pluralize.js';
import type { Role } from '../../validate/model.js';
import type { PlannedNode } from '../types.js';
import { inputsOf, type ClusterDiff } from './context.js';

/**
 * Which nodes of a running cluster are new, replaced (another host or other roles), moved to
 * another address or gone: add-nodes and remove-nodes actions, and notes for what pruning
 * would do. Marks each planned node's change and appends the removed nodes to `d.nodes`.
 */
export function diffNodes(d: ClusterDiff): void {
  const { cluster, nodes, applied, notes } = d;
  const before = new Map(applied.nodes.map((n) => [n.name, n]));
  const added: PlannedNode[] = [];
  const removed: AppliedNode[] = [];
  for (const n of nodes) {
    const was = before.get(n.name);
    if (!was) {
      n.change = 'add';
      added.push(n);
      continue;
    }
    const replaced = was.host !== n.host || !sameRoles(was.roles, n.roles);
    if (replaced) {
      const why =
        was.host !== n.host
          ? `host ${was.host} → ${n.host} (${n.placement})`
          : `roles ${was.roles.join('+')} → ${n.roles.join('+')}`;
      if (d.prune) {
        n.change = 'add';
        added.push(n);
        removed.push(was);
        notes.push(`node ${n.name} is replaced: ${why}`);
      } else {
        // Without pruning the node stays as it was applied; the plan says what would happen.
        Object.assign(n, {
          host: was.host,
          mac: was.mac,
          ip: was.ip,
          roles: [...was.roles],
          change: 'keep',
        });
        notes.push(
          `node ${n.name} needs replacing (${why}); run with --prune to remove and re-add it`,
        );
      }
      continue;
    }
    if (was.ip !== n.ip) {
      n.change = 'update';
      n.details = [`ip ${was.ip} → ${n.ip}`];
    }
  }
  const desiredNames = new Set(nodes.map((n) => n.name));
  for (const was of applied.nodes) {
    if (desiredNames.has(was.name)) continue;
    if (d.prune) removed.push(was);
    else
      notes.push(
        `node ${was.name} is no longer in the site; run with --prune to remove it from the cluster`,
      );
  }
  if (added.length) {
    d.actions.push({
      kind: 'add-nodes',
      cluster: cluster.name,
      nodes: added.map((n) => n.name),
      reason: `${added.map((n) => `${n.name} (${n.roles.join('+')})`).join(', ')} ${word(added.length, 'is', 'are')} new in the site`,
      inputs: inputsOf(cluster, 'provisioning'),
    });
  }
  if (!removed.length) return;
  for (const r of removed) {
    if (!nodes.some((n) => n.name === r.name && n.change === 'add')) {
      nodes.push({
        name: r.name,
        roles: [...r.roles],
        host: r.host,
        mac: r.mac,
        ip: r.ip,
        ipSource: 'applied state',
        change: 'remove',
        placement: 'removed',
      });
    }
  }
  d.actions.push({
    kind: 'remove-nodes',
    cluster: cluster.name,
    nodes: removed.map((n) => n.name),
    reason: `${removed.map((n) => n.name).join(', ')} ${word(removed.length, 'is', 'are')} no longer in the site (or replaced), and pruning is allowed`,
    inputs: inputsOf(cluster, 'provisioning'),
  });
}

function sameRoles(a: readonly Role[], b: readonly Role[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
}
