import type { ClusterPlan, PackageChange, Plan, PlannedNode } from '../../plan/index.js';
import { printable } from '../../util/printable.js';
import { pluralize, word } from '../../util/pluralize.js';

const SYMBOL: Record<PlannedNode['change'], string> = {
  add: '+',
  remove: '-',
  update: '~',
  keep: ' ',
};

/**
 * A plan for people, in the manner of `terraform plan`: + add, ~ change, - remove. Names,
 * hosts and notes come from the site and the inventory: each line is made printable.
 */
export function formatPlan(plan: Plan): string {
  const out: string[] = [];
  // Names only: a Secret's values never reach a plan.
  if (plan.changedSecrets?.length) {
    for (const name of plan.changedSecrets) out.push(`~ secret ${name} (changed)`);
    out.push('');
  }
  for (const c of plan.clusters) out.push(...formatCluster(c), '');
  out.push(summary(plan));
  return out.map(printable).join('\n') + '\n';
}

function formatCluster(c: ClusterPlan): string[] {
  const provisioning = c.actions.some((a) => a.kind === 'provision-cluster');
  const state = c.notes.some((n) => n.startsWith('blocked'))
    ? 'blocked'
    : provisioning
      ? 'new cluster, to provision'
      : c.actions.length
        ? pluralize(c.actions.length, 'action')
        : c.podSubnetChange
          ? 'differs from the site: the pod subnet cannot change in place'
          : 'no changes';
  const lines = [`cluster ${c.cluster} (${state})`];
  if (c.podSubnet) lines.push(`  pod subnet ${c.podSubnet}`);
  if (c.etcd) lines.push(`  etcd ${c.etcd.join(', ')}`);
  const w = Math.max(4, ...c.nodes.map((n) => n.name.length));
  const hw = Math.max(4, ...c.nodes.map((n) => n.host.length));
  for (const n of c.nodes) {
    const roles = n.roles.join('+').padEnd(13);
    const extra =
      n.change === 'update' ? (n.details ?? []).join('; ') : n.change === 'add' ? n.placement : '';
    lines.push(
      `  ${SYMBOL[n.change]} ${n.name.padEnd(w)}  ${n.host.padEnd(hw)}  ${n.ip.padEnd(15)}  ${roles}${extra ? `  ${extra}` : ''}`.trimEnd(),
    );
  }
  const packages = c.actions.flatMap((a) => a.packages ?? []);
  if (packages.length) {
    lines.push('  packages:');
    const byNode = new Map<string, PackageChange[]>();
    for (const p of packages) byNode.set(p.node, [...(byNode.get(p.node) ?? []), p]);
    for (const [node, list] of byNode)
      lines.push(`    ${node.padEnd(w)}  ${list.map(formatPackage).join(', ')}`);
  }
  if (c.actions.length) {
    const held =
      c.gate?.state === 'suspended'
        ? ' [held: suspended]'
        : c.gate?.state === 'deferred'
          ? ` [deferred${c.gate.opensAt ? ` until ${c.gate.opensAt}` : ''}]`
          : '';
    lines.push('  actions:');
    c.actions.forEach((a, i) =>
      lines.push(`    ${i + 1}. ${a.kind.padEnd(17)} ${a.reason}${held}`),
    );
  }
  if (c.gate) lines.push(`  ${c.gate.state}: ${c.gate.message}`);
  if (c.rollout && c.actions.some((a) => a.packages?.length || a.kind === 'upgrade-cluster')) {
    const r = c.rollout;
    lines.push(
      `  rollout: masters one at a time, then workers ${r.maxUnavailable} at a time; each ${r.drain.enabled ? 'cordoned and drained' : 'cordoned'}, changed, checked Ready${r.healthCheck.command ? ' and healthy' : ''}, uncordoned`,
    );
  }
  for (const n of c.notes) lines.push(`  note: ${n}`);
  return lines;
}

function formatPackage(p: PackageChange): string {
  if (p.unheld) return `!${p.name}=${p.to} hold`;
  if (p.from === undefined && p.to === undefined) return `+${p.name}`;
  if (p.from === undefined) return `+${p.name}=${p.to}`;
  if (p.to === undefined) return `-${p.name}`;
  return `~${p.name} ${p.from} → ${p.to}`;
}

function summary(plan: Plan): string {
  const count = (kind: string): number =>
    plan.clusters.reduce(
      (n, c) =>
        n +
        c.actions
          .filter((a) => a.kind === kind)
          .reduce((m, a) => m + Math.max(1, a.nodes.length), 0),
      0,
    );
  const provision = plan.clusters.filter((c) =>
    c.actions.some((a) => a.kind === 'provision-cluster'),
  ).length;
  const upgrades = plan.clusters.filter((c) =>
    c.actions.some((a) => a.kind === 'upgrade-cluster'),
  ).length;
  const reconfigures = plan.clusters.filter((c) =>
    c.actions.some((a) => a.kind === 'reconfigure-cluster'),
  ).length;
  const adds = count('add-nodes');
  const removes = count('remove-nodes') + count('remove-cluster');
  const teardowns = plan.clusters.filter((c) =>
    c.actions.some((a) => a.kind === 'remove-cluster'),
  ).length;
  const pkgs = plan.clusters.reduce(
    (n, c) => n + c.actions.reduce((m, a) => m + (a.packages?.length ?? 0), 0),
    0,
  );
  const changes = plan.clusters.some((c) => c.actions.length);
  const stuck = plan.clusters.filter((c) => c.podSubnetChange).length;
  const head = changes
    ? `Plan ${plan.hash.slice(0, 12)}`
    : stuck
      ? `Nothing bpa can apply, but ${pluralize(stuck, 'cluster')} ${word(stuck, 'differs', 'differ')} from the site (see the notes)`
      : 'No changes';
  const held = plan.clusters.filter(
    (c) => c.actions.length && (c.gate?.state === 'deferred' || c.gate?.state === 'suspended'),
  );
  const gated = held.length
    ? ` Held: ${held.map((c) => `${c.cluster} (${c.gate?.state === 'suspended' ? 'suspended' : `deferred${c.gate?.opensAt ? ` until ${c.gate.opensAt}` : ''}`})`).join(', ')}.`
    : '';
  return `${head}: ${pluralize(plan.clusters.length, 'cluster')}; ${provision} to provision, ${upgrades ? `${upgrades} to upgrade, ` : ''}${reconfigures ? `${reconfigures} to reconfigure, ` : ''}${pluralize(adds, 'node')} to add, ${removes} to remove${teardowns ? ` (${pluralize(teardowns, 'whole cluster')} reset)` : ''}, ${pluralize(pkgs, 'package change')}.${gated}`;
}
