import { resolveNodeIp, type IpSource, type SkippedAddress } from '../observe/inventory/ip.js';
import { hostMacs, type Host, type Lease } from '../observe/types.js';
import { factsKey, type NodeFacts } from '../observe/facts.js';
import { planRegistry } from './registry.js';
import type { AppliedCluster, AppliedNode, AppliedState } from '../state/applied.js';
import { error, type Problem } from '../util/problem.js';
import type { ClusterModel, NodeSpec, PackageSpec, Role, SiteModel } from '../validate/model.js';
import { assignHosts, hostKey, type Placement, type PriorAssignment } from './assign.js';
import type { ExecutionSettings } from '../config/execution.js';
import { planHash } from './hash.js';
import { chooseEtcd, renderHostsIni, type Flavour } from './hosts-ini.js';
import {
  ACTION_ORDER,
  type Action,
  type ClusterPlan,
  type PackageChange,
  type Plan,
  type PlannedNode,
} from './types.js';
import { pluralize, word } from '../util/pluralize.js';

export * from './types.js';

export interface PlanInput {
  model: SiteModel;
  hosts: readonly Host[];
  leases: ReadonlyMap<string, Lease>;
  applied: AppliedState;
  /** Allow remove-nodes and remove-packages. */
  prune: boolean;
  flavour: Flavour;
  ipOrder?: readonly IpSource[];
  /** What nodes report (installed packages), keyed `cluster/node`; absent: not observed. */
  facts?: ReadonlyMap<string, NodeFacts>;
  /** How bpa will act (installer commands, mirror, SSH): shown in the plan and hashed. */
  settings?: ExecutionSettings;
}

/**
 * The plan: desired state (site + placements) against the applied state, per cluster, as
 * ordered actions with reasons. Pure and deterministic.
 */
export function planSite(input: PlanInput): Plan {
  const { model, applied } = input;
  const prior: PriorAssignment[] = [];
  for (const a of applied.clusters.values()) {
    for (const n of a.nodes) prior.push({ cluster: a.cluster, node: n.name, host: n.host });
  }
  const assignment = assignHosts(model.clusters, input.hosts, prior);
  const problems: Problem[] = [];
  const placed = new Map<string, Placement>();
  for (const p of assignment.placements) placed.set(`${p.cluster}/${p.node}`, p);
  const blocked = new Set<string>();
  for (const u of assignment.unplaced) {
    const cluster = model.clusters.find((c) => c.name === u.cluster);
    const node = cluster?.nodes.find((n) => n.name === u.node);
    blocked.add(u.cluster);
    problems.push(
      error('NODE_UNPLACED', `cluster ${u.cluster}: ${u.message}`, nodeWhere(cluster, node)),
    );
  }

  const clusters: ClusterPlan[] = [];
  for (const cluster of model.clusters) {
    const nodes: PlannedNode[] = [];
    const passedOver: string[] = [];
    for (const spec of cluster.nodes) {
      const p = placed.get(`${cluster.name}/${spec.name}`);
      if (!p) continue;
      const { resolved: ip, skipped } = resolveNodeIp(p.host, input.leases, input.ipOrder);
      if (!ip) {
        blocked.add(cluster.name);
        const macs = hostMacs(p.host);
        problems.push(
          error(
            'NO_IP',
            `cluster ${cluster.name}: node ${spec.name} is placed on host ${hostKey(p.host)}, but no active lease or inventory address is known for its MACs (${macs.length ? macs.join(', ') : 'none known'})${skipped.length ? `; not usable: ${describeSkipped(skipped)}` : ''}`,
            nodeWhere(cluster, spec),
          ),
        );
        continue;
      }
      if (skipped.length)
        passedOver.push(`node ${spec.name} uses ${ip.ip}; passed over ${describeSkipped(skipped)}`);
      nodes.push({
        name: spec.name,
        roles: [...spec.roles],
        host: hostKey(p.host),
        mac: ip.mac,
        ip: ip.ip,
        ipSource: ip.source === 'lease' ? `lease ${ip.origin}` : 'inventory',
        change: 'keep',
        placement: p.reason,
      });
    }
    const plan = diffCluster(
      cluster,
      nodes,
      applied.clusters.get(cluster.name),
      input,
      blocked.has(cluster.name),
      problems,
    );
    plan.notes.push(...passedOver);
    clusters.push(plan);
  }
  for (const [name, a] of applied.clusters) {
    if (model.clusters.some((c) => c.name === name)) continue;
    clusters.push(removedCluster(a, input));
  }
  clusters.sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  return {
    clusters,
    problems,
    ...(input.settings ? { settings: input.settings } : {}),
    hash: planHash(clusters, input.settings),
  };
}

/** "fe80::1%enp1s0 (inventory: link-local with a zone: …), 127.0.0.1 (lease: loopback)" */
function describeSkipped(skipped: readonly SkippedAddress[]): string {
  return skipped.map((s) => `${s.ip} (${s.source}: ${s.why})`).join(', ');
}

function nodeWhere(
  cluster: ClusterModel | undefined,
  node: NodeSpec | undefined,
): Partial<Problem> {
  if (!cluster) return {};
  return {
    file: cluster.provisioning.ref.file,
    doc: cluster.provisioning.ref.doc,
    pointer: node?.pointer ?? '/spec',
  };
}

function inputsOf(cluster: ClusterModel, what: 'provisioning' | 'software' | 'both'): string[] {
  const out: string[] = [];
  if (what !== 'software')
    out.push(`Provisioning ${cluster.provisioning.name} (${cluster.provisioning.ref.file})`);
  if (what !== 'provisioning' && cluster.software)
    out.push(`Software ${cluster.software.name} (${cluster.software.ref.file})`);
  return out;
}

function diffCluster(
  cluster: ClusterModel,
  nodes: PlannedNode[],
  applied: AppliedCluster | undefined,
  input: PlanInput,
  blocked: boolean,
  problems: Problem[],
): ClusterPlan {
  const actions: Action[] = [];
  const notes: string[] = [];
  const name = cluster.name;
  const desiredPackages = (roles: readonly Role[]): PackageSpec[] =>
    packagesFor(cluster.masterSoftware, cluster.workerSoftware, roles);

  if (blocked) {
    notes.push(
      'blocked: some nodes cannot be placed or reached; nothing is planned for this cluster until that is fixed',
    );
  } else if (!applied) {
    for (const n of nodes) n.change = 'add';
    actions.push({
      kind: 'provision-cluster',
      cluster: name,
      nodes: nodes.map((n) => n.name),
      reason: `new cluster: ${pluralize(nodes.length, 'node')}${cluster.plugins.length ? `, plugins ${cluster.plugins.join(', ')}` : ''}`,
      inputs: inputsOf(cluster, 'provisioning'),
      plugins: [...cluster.plugins],
    });
    const packages = nodes.flatMap((n) =>
      desiredPackages(n.roles).map((p) => ({ node: n.name, name: p.name, to: p.version })),
    );
    if (packages.length) {
      actions.push({
        kind: 'install-packages',
        cluster: name,
        nodes: nodesOf(packages),
        reason: 'new cluster: every node gets the packages of its roles',
        inputs: inputsOf(cluster, 'software'),
        packages,
      });
    }
  } else {
    diffNodes(cluster, nodes, applied, input, actions, notes, desiredPackages);
  }
  if (cluster.plugins.length && input.settings && !input.settings.installer.commands.addon) {
    problems.push(
      error(
        'PLUGINS_UNSUPPORTED',
        `cluster ${name}: KUDPlugins ${cluster.plugins.join(', ')} cannot be installed: the ${input.flavour} flavour has no add-on command (Kubespray's add-ons are its own variables; see docs/apply.md)`,
        {
          file: cluster.provisioning.ref.file,
          doc: cluster.provisioning.ref.doc,
          pointer: '/spec/KUDPlugins',
        },
      ),
    );
  }
  if (!blocked) planRegistry(name, nodes, applied, input.settings, input.facts, actions, notes);
  const kubernetesVersion =
    applied && !blocked
      ? planUpgrade(cluster, nodes, applied, actions, notes, problems)
      : (cluster.kubernetesVersion ?? applied?.kubernetesVersion);
  const removed = nodes.filter((n) => n.change === 'remove');
  const kept = nodes.filter((n) => n.change !== 'remove');
  const etcd =
    input.flavour === 'kubespray' && !blocked ? etcdMembers(kept, applied, notes) : undefined;
  const pod = podSubnetOf(cluster, applied, notes);
  const hostsIni = blocked
    ? ''
    : renderHostsIni(
        { name, clusterType: cluster.clusterType, kubernetesVersion },
        kept.map((n) => ({ name: n.name, ip: n.ip, roles: n.roles })),
        input.flavour,
        { etcd, podSubnet: pod.podSubnet, access: input.settings?.ssh },
      );
  actions.sort((a, b) => ACTION_ORDER.indexOf(a.kind) - ACTION_ORDER.indexOf(b.kind));
  const desired = {
    plugins: [...cluster.plugins],
    software: { master: [...cluster.masterSoftware], worker: [...cluster.workerSoftware] },
    ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
  };
  return {
    cluster: name,
    flavour: input.flavour,
    nodes: [...kept, ...removed],
    ...(etcd ? { etcd } : {}),
    ...pod,
    actions,
    hostsIni,
    notes,
    desired,
  };
}

/**
 * The pod network the installer gets. A new cluster gets the site's; a running one keeps the
 * one it was provisioned with, since a pod network cannot change in place, and a different
 * PodSubnet in the site is a change the plan cannot make: noted, never "no changes".
 */
function podSubnetOf(
  cluster: ClusterModel,
  applied: AppliedCluster | undefined,
  notes: string[],
): Pick<ClusterPlan, 'podSubnet' | 'podSubnetChange'> {
  const wanted = cluster.podSubnet;
  // Unknown (applied before bpa recorded it): the site's value is all there is to go on.
  if (!applied || applied.podSubnet === undefined) return wanted ? { podSubnet: wanted } : {};
  const running = applied.podSubnet ?? undefined;
  const out = running ? { podSubnet: running } : {};
  if (running === wanted) return out;
  const was = running ?? "the installer's default (no PodSubnet)";
  notes.push(
    `PodSubnet ${wanted ?? '(removed)'} differs from ${was}, which the cluster was provisioned with: a pod network cannot change on a running cluster, so bpa keeps ${running ?? "the installer's default"}; ${running ? `set PodSubnet back to ${running}` : 'remove PodSubnet'}, or rebuild the cluster to change it`,
  );
  return { ...out, podSubnetChange: { from: running, to: wanted } };
}

/**
 * Kubespray's etcd group: an odd number of masters (Kubespray refuses an even one), masters
 * that already ran keep their place. A master left out is noted.
 */
function etcdMembers(
  kept: readonly PlannedNode[],
  applied: AppliedCluster | undefined,
  notes: string[],
): string[] {
  const masters = kept.filter((n) => n.roles.includes('master')).map((n) => n.name);
  const running = new Set(
    (applied?.nodes ?? []).filter((n) => n.roles.includes('master')).map((n) => n.name),
  );
  const etcd = chooseEtcd(masters, running);
  const out = masters.filter((m) => !etcd.includes(m));
  if (out.length) {
    notes.push(
      `etcd runs on ${etcd.length} of the ${masters.length} masters (${etcd.join(', ')}); ${out.join(', ')} ${word(out.length, 'is', 'are')} not an etcd member: Kubespray needs an odd number of etcd members`,
    );
  }
  return etcd;
}

function diffNodes(
  cluster: ClusterModel,
  nodes: PlannedNode[],
  applied: AppliedCluster,
  input: PlanInput,
  actions: Action[],
  notes: string[],
  desiredPackages: (roles: readonly Role[]) => PackageSpec[],
): void {
  const name = cluster.name;
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
      if (input.prune) {
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
    if (input.prune) removed.push(was);
    else
      notes.push(
        `node ${was.name} is no longer in the site; run with --prune to remove it from the cluster`,
      );
  }
  if (added.length) {
    actions.push({
      kind: 'add-nodes',
      cluster: name,
      nodes: added.map((n) => n.name),
      reason: `${added.map((n) => `${n.name} (${n.roles.join('+')})`).join(', ')} ${word(added.length, 'is', 'are')} new in the site`,
      inputs: inputsOf(cluster, 'provisioning'),
    });
  }
  if (removed.length) {
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
    actions.push({
      kind: 'remove-nodes',
      cluster: name,
      nodes: removed.map((n) => n.name),
      reason: `${removed.map((n) => n.name).join(', ')} ${word(removed.length, 'is', 'are')} no longer in the site (or replaced), and pruning is allowed`,
      inputs: inputsOf(cluster, 'provisioning'),
    });
  }
  const newPlugins = cluster.plugins.filter((p) => !applied.plugins.includes(p));
  if (newPlugins.length) {
    actions.push({
      kind: 'install-plugins',
      cluster: name,
      nodes: [],
      reason: `${word(newPlugins.length, 'plugin')} ${newPlugins.join(', ')} added to KUDPlugins`,
      inputs: inputsOf(cluster, 'provisioning'),
      plugins: newPlugins,
    });
  }
  const goneplugins = applied.plugins.filter((p) => !cluster.plugins.includes(p));
  if (goneplugins.length)
    notes.push(
      `${word(goneplugins.length, 'plugin')} ${goneplugins.join(', ')} removed from KUDPlugins: bpa does not uninstall plugins; remove ${word(goneplugins.length, 'it', 'them')} by hand`,
    );

  // Packages: new nodes get everything of their roles; others get the difference between
  // what their roles ask for now and what bpa applied before; and where the node itself
  // reports something else than what was applied (removed or changed by hand), fix-drift.
  const changes: Record<'install' | 'upgrade' | 'remove' | 'drift', PackageChange[]> = {
    install: [],
    upgrade: [],
    remove: [],
    drift: [],
  };
  for (const n of nodes) {
    if (n.change === 'remove') continue;
    const want = desiredPackages(n.roles);
    if (n.change === 'add') {
      for (const p of want) changes.install.push({ node: n.name, name: p.name, to: p.version });
      continue;
    }
    const facts = input.facts?.get(factsKey(name, n.name));
    if (facts && !facts.reachable) {
      notes.push(
        `node ${n.name} is unreachable, its packages were not checked: ${facts.error?.message ?? 'no answer'}`,
      );
    }
    const seen = facts?.reachable ? facts.installed : undefined;
    const had = new Map(appliedPackages(applied, n.roles).map((p) => [p.name, p]));
    for (const p of want) {
      const h = had.get(p.name);
      const now = seen?.[p.name];
      had.delete(p.name);
      if (!h) {
        changes.install.push({ node: n.name, name: p.name, from: now ?? undefined, to: p.version });
      } else if (p.version !== undefined && h.version !== p.version) {
        // Unpinning needs no change on the node; a new or changed pin does.
        changes.upgrade.push({ node: n.name, name: p.name, from: now ?? h.version, to: p.version });
      } else if (
        seen &&
        p.name in seen &&
        (now === null || (p.version !== undefined && now !== p.version))
      ) {
        changes.drift.push({ node: n.name, name: p.name, from: now ?? undefined, to: p.version });
      }
    }
    for (const h of had.values()) {
      if (input.prune)
        changes.remove.push({ node: n.name, name: h.name, from: seen?.[h.name] ?? h.version });
    }
    if (!input.prune && had.size) {
      notes.push(
        `node ${n.name}: ${word(had.size, 'package')} ${[...had.keys()].join(', ')} no longer listed; run with --prune to remove ${word(had.size, 'it', 'them')}`,
      );
    }
  }
  const packageAction = (kind: Action['kind'], list: PackageChange[], reason: string): void => {
    if (list.length)
      actions.push({
        kind,
        cluster: name,
        nodes: nodesOf(list),
        reason,
        inputs: inputsOf(cluster, 'software'),
        packages: list,
      });
  };
  packageAction('install-packages', changes.install, summarize('install', changes.install));
  packageAction('upgrade-packages', changes.upgrade, summarize('upgrade', changes.upgrade));
  packageAction('remove-packages', changes.remove, summarize('remove', changes.remove));
  packageAction(
    'fix-drift',
    changes.drift,
    `nodes differ from what was applied: ${changes.drift.map((d) => `${d.node} has ${d.name} ${d.from ?? 'not installed'}${d.to ? `, wanted ${d.to}` : ''}`).join('; ')}`,
  );
}

/** `v1.27.10` → [1, 27, 10]. */
function versionParts(v: string): number[] {
  return v.replace(/^v/, '').split('.').map(Number);
}

/**
 * A change of the site's kubernetesVersion on a running cluster: an upgrade-cluster action of
 * the nodes already in it, one minor version at a time, never a downgrade. Node changes go
 * first, at the version the cluster runs (a node joined at a newer version than the control
 * plane is refused by kubeadm); the upgrade follows in the next plan. Returns the version the
 * inventory gives the installer.
 */
function planUpgrade(
  cluster: ClusterModel,
  nodes: readonly PlannedNode[],
  applied: AppliedCluster,
  actions: Action[],
  notes: string[],
  problems: Problem[],
): string | undefined {
  const want = cluster.kubernetesVersion;
  const had = applied.kubernetesVersion;
  if (want === undefined) {
    if (had !== undefined)
      notes.push(
        `kubernetesVersion is no longer set: the cluster stays on ${had}, which its inventory keeps`,
      );
    return had;
  }
  if (want === had) return want;
  const where = {
    file: cluster.provisioning.ref.file,
    doc: cluster.provisioning.ref.doc,
    pointer: '/spec/kubernetesVersion',
  };
  if (had !== undefined) {
    const [a = 0, b = 0, c = 0] = versionParts(had);
    const [x = 0, y = 0, z = 0] = versionParts(want);
    if (x < a || (x === a && (y < b || (y === b && z < c)))) {
      problems.push(
        error(
          'KUBERNETES_DOWNGRADE',
          `cluster ${cluster.name}: kubernetesVersion ${want} is lower than ${had}, which the cluster runs; Kubernetes is not downgraded`,
          where,
        ),
      );
      return had;
    }
    if (x !== a || y > b + 1) {
      problems.push(
        error(
          'KUBERNETES_UPGRADE_SKIPS_MINOR',
          `cluster ${cluster.name}: kubernetesVersion ${want} skips a minor version of ${had}, which the cluster runs; upgrade one minor version at a time`,
          where,
        ),
      );
      return had;
    }
  }
  const from = had ?? "the installer's default";
  if (actions.some((a) => a.kind === 'add-nodes' || a.kind === 'remove-nodes')) {
    notes.push(
      `the upgrade of Kubernetes ${from} → ${want} waits until the node changes are applied (nodes join at the version the cluster runs); the next reconcile plans it`,
    );
    return had;
  }
  actions.push({
    kind: 'upgrade-cluster',
    cluster: cluster.name,
    nodes: nodes.filter((n) => n.change !== 'remove' && n.change !== 'add').map((n) => n.name),
    reason: `Kubernetes ${from} → ${want}`,
    inputs: inputsOf(cluster, 'provisioning'),
  });
  return want;
}

function removedCluster(a: AppliedCluster, input: PlanInput): ClusterPlan {
  const nodes: PlannedNode[] = a.nodes.map((n) => ({
    ...n,
    roles: [...n.roles],
    ipSource: 'applied state',
    change: input.prune ? 'remove' : 'keep',
    placement: 'applied',
  }));
  const plan: ClusterPlan = {
    cluster: a.cluster,
    flavour: input.flavour,
    nodes,
    actions: [],
    hostsIni: '',
    notes: [],
    desired: { plugins: [], software: { master: [], worker: [] } },
  };
  if (input.prune && nodes.length) {
    plan.actions.push({
      kind: 'remove-nodes',
      cluster: a.cluster,
      nodes: nodes.map((n) => n.name),
      reason: 'the cluster is no longer in the site, and pruning is allowed',
      inputs: [],
    });
  } else {
    plan.notes.push('the cluster is no longer in the site; run with --prune to remove its nodes');
  }
  return plan;
}

/**
 * The packages of a node's roles; a dual-role node gets both lists, the masters' pin first
 * (two different pins are a PACKAGE_CONFLICT of the site: it does not validate).
 */
function packagesFor(
  master: PackageSpec[],
  worker: PackageSpec[],
  roles: readonly Role[],
): PackageSpec[] {
  const out = new Map<string, PackageSpec>();
  for (const role of roles) {
    for (const p of role === 'master' ? master : worker) if (!out.has(p.name)) out.set(p.name, p);
  }
  return [...out.values()];
}

function appliedPackages(applied: AppliedCluster, roles: readonly Role[]): PackageSpec[] {
  const out = new Map<string, PackageSpec>();
  for (const role of roles)
    for (const p of applied.packages[role] ?? []) if (!out.has(p.name)) out.set(p.name, p);
  return [...out.values()];
}

function sameRoles(a: readonly Role[], b: readonly Role[]): boolean {
  return a.length === b.length && a.every((r) => b.includes(r));
}

function nodesOf(changes: PackageChange[]): string[] {
  return [...new Set(changes.map((c) => c.node))];
}

function summarize(verb: string, changes: PackageChange[]): string {
  const names = [...new Set(changes.map((c) => (c.to ? `${c.name}=${c.to}` : c.name)))];
  const nodes = nodesOf(changes);
  return `${verb} ${names.join(', ')} on ${pluralize(nodes.length, 'node')}`;
}
