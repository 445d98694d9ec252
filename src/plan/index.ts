import {
  resolveNodeIp,
  type IpResolution,
  type IpSource,
  type SkippedAddress,
} from '../observe/inventory/ip.js';
import type { Host, Lease } from '../observe/types.js';
import type { NodeFacts } from '../observe/facts.js';
import type { AppliedCluster, AppliedState } from '../state/applied.js';
import { error, warning, type Problem } from '../util/problem.js';
import type { ClusterModel, NodeSpec, SiteModel } from '../validate/model.js';
import { assignHosts, type Placement, type PriorAssignment } from './assign.js';
import { describeFailure } from './assign/requirements.js';
import type { ExecutionSettings } from '../config/execution.js';
import { canonicalJson, clusterHashText, hashOfEntries } from './hash.js';
import { PlanCache, sameInputs, type ClusterEntry } from './plan-cache.js';
import { chooseEtcd, renderHostsIni, type Flavour } from './hosts-ini.js';
import {
  ACTION_ORDER,
  type Action,
  type ClusterPlan,
  type Plan,
  type PlannedNode,
} from './types.js';
import { pluralize, word } from '../util/pluralize.js';
import { inputsOf, type ClusterDiff } from './diff/context.js';
import { planReconfigure } from './installer-vars.js';
import { planRegistry } from './registry.js';
import { changedSecrets } from './secrets.js';
import { diffNodes } from './diff/nodes.js';
import { diffPlugins } from './diff/plugins.js';
import { diffPackages, newClusterPackages } from './diff/packages.js';
import { planUpgrade } from './diff/kubernetes.js';
import { gateCluster } from './gate.js';
import { gateWaves } from './waves.js';
import type { Suspensions } from '../state/suspensions.js';

export * from './types.js';
export { PlanCache };

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
  /**
   * The clock (epoch ms), for maintenance windows: a cluster outside its windows has its
   * actions marked deferred. Absent: windows are not looked at (suspension still is).
   */
  now?: number;
  /** `bpa apply --ignore-windows`: outside a window, the actions run anyway (and say so). */
  ignoreWindows?: boolean;
  /** Clusters suspended through serve's API (`*`: all). */
  suspended?: Readonly<Suspensions>;
  /** What the last plan of this process derived (`bpa serve`): reused where inputs are the same. */
  cache?: PlanCache;
  /**
   * HMACs of the site Secrets' values (apply, reconcile, serve: bpa has the keys), by name:
   * a new ciphertext of the same values is no change (plan/secrets.ts).
   */
  secretValues?: ReadonlyMap<string, string>;
}

/**
 * The plan: desired state (site + placements) against the applied state, per cluster, as
 * ordered actions with reasons. Pure and deterministic. With `input.cache` (`bpa serve`), a
 * cluster whose inputs are the same objects as in the last plan gets that plan again (gated
 * anew: the clock, suspensions and waves are looked at every time), and its hash entry.
 */
export function planSite(input: PlanInput): Plan {
  const { model, applied, cache } = input;
  const prior: PriorAssignment[] = [];
  for (const a of applied.clusters.values()) {
    for (const n of a.nodes) prior.push({ cluster: a.cluster, node: n.name, host: n.host });
  }
  const assignment = assignHosts(model.clusters, input.hosts, prior, cache?.assignment, {
    keepFailing: !input.prune,
  });
  const problems: Problem[] = [];
  // By cluster, then node: names as they are, no key to build for each of 10,000 nodes.
  const placed = new Map<string, Map<string, Placement>>();
  for (const p of assignment.placements) {
    let nodes = placed.get(p.cluster);
    if (!nodes) placed.set(p.cluster, (nodes = new Map()));
    nodes.set(p.node, p);
  }
  const byName = new Map<string, ClusterModel>();
  for (const c of model.clusters) if (!byName.has(c.name)) byName.set(c.name, c);
  const blocked = new Set<string>();
  for (const u of assignment.unplaced) {
    const cluster = byName.get(u.cluster);
    const node = cluster?.nodes.find((n) => n.name === u.node);
    blocked.add(u.cluster);
    problems.push(
      error('NODE_UNPLACED', `cluster ${u.cluster}: ${u.message}`, {
        ...nodeWhere(cluster, node),
        ...(u.closest ? { closest: u.closest } : {}),
      }),
    );
  }
  // What pruning would do with the nodes kept on hosts that no longer pass: the assignment
  // made again without keeping them (only when there are such nodes, which is rare).
  const pruned = assignment.placements.some((p) => p.failing)
    ? assignHosts(model.clusters, input.hosts, prior, undefined, { keepFailing: false })
    : undefined;
  for (const p of assignment.placements) {
    if (!p.failing) continue;
    const cluster = byName.get(p.cluster);
    const node = cluster?.nodes.find((n) => n.name === p.node);
    const moved = pruned?.placements.find((q) => q.cluster === p.cluster && q.node === p.node);
    const lost = pruned?.unplaced.find((q) => q.cluster === p.cluster && q.node === p.node);
    const would = moved
      ? `with --prune it would be replaced on ${moved.host.key}`
      : `with --prune it could not be placed (${lost?.message ?? 'no host passes'})`;
    problems.push(
      warning(
        'HOST_NO_LONGER_QUALIFIES',
        `cluster ${p.cluster}: node ${p.node} stays on ${p.host.key}, which no longer passes its required terms (${p.failing.map(describeFailure).join('; ')}); bpa does not move a running node by itself: ${would}`,
        nodeWhere(cluster, node),
      ),
    );
  }

  // What every cluster's plan depends on beyond its own inputs, as text to compare.
  const shared = cache ? sharedInputs(input) : undefined;
  const entries = new Map<string, ClusterEntry>();
  const entryOf = new Map<ClusterPlan, ClusterEntry>();
  let reused = 0;
  const clusters: ClusterPlan[] = [];
  for (const cluster of model.clusters) {
    const ofCluster = placed.get(cluster.name);
    const placements = cluster.nodes.map((spec) => ofCluster?.get(spec.name));
    const resolutions = placements.map((p) =>
      p ? resolveNodeIp(p.host, input.leases, input.ipOrder) : undefined,
    );
    let inputs: unknown[] | undefined;
    if (cache && shared) {
      const a = applied.clusters.get(cluster.name);
      inputs = [
        cluster,
        blocked.has(cluster.name),
        a === undefined ? undefined : JSON.stringify(a),
        shared.facts.get(cluster.name),
        ...shared.values,
      ];
      for (let i = 0; i < placements.length; i++)
        inputs.push(placements[i]?.host, placements[i]?.reason, resolutions[i]);
      const held = cache.clusters.get(cluster.name);
      if (held && sameInputs(held.inputs, inputs)) {
        for (const p of held.problems) problems.push({ ...p });
        const copy = { ...held.plan };
        entries.set(cluster.name, held);
        entryOf.set(copy, held);
        clusters.push(copy);
        reused++;
        continue;
      }
    }
    const own: Problem[] = [];
    const plan = planCluster(cluster, placements, resolutions, input, blocked, own);
    problems.push(...own);
    if (inputs && cache) {
      const entry: ClusterEntry = { inputs, plan, problems: own.map((p) => ({ ...p })) };
      const copy = { ...plan };
      entries.set(cluster.name, entry);
      entryOf.set(copy, entry);
      clusters.push(copy);
    } else clusters.push(plan);
  }
  if (cache) {
    cache.assignment = assignment;
    cache.clusters = entries;
    cache.reused = reused;
  }
  for (const [name, a] of applied.clusters) {
    if (byName.has(name)) continue;
    clusters.push(removedCluster(a, input));
  }
  clusters.sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  for (const c of clusters) {
    const day2 = byName.get(c.cluster)?.day2 ?? model.day2;
    gateCluster(c, day2, input);
    // A cluster the installer has not finished has no Kubernetes to drain through yet.
    if (day2?.rollout && !c.actions.some((a) => a.kind === 'provision-cluster'))
      c.rollout = day2.rollout;
  }
  gateWaves(clusters, model, applied, input.now);
  const secrets = changedSecrets(input.settings, applied, input.secretValues);
  return {
    clusters,
    problems,
    ...(secrets.length ? { changedSecrets: secrets } : {}),
    ...(input.settings ? { settings: input.settings } : {}),
    hash: hashOfEntries(
      clusters.map((c) => hashText(c, entryOf.get(c))),
      input.settings,
    ),
  };
}

/** A cluster's hash entry, kept with its cache entry for the rollout it was made with. */
function hashText(c: ClusterPlan, entry: ClusterEntry | undefined): string {
  if (!entry) return clusterHashText(c);
  const rollout = c.rollout === undefined ? '' : canonicalJson(c.rollout);
  if (entry.hashed?.rollout !== rollout) entry.hashed = { rollout, text: clusterHashText(c) };
  return entry.hashed.text;
}

/**
 * The inputs of every cluster's plan that are not its own: the settings, flavour and pruning,
 * and each cluster's node facts (`cluster/node` keys) as JSON.
 */
function sharedInputs(input: PlanInput): { values: unknown[]; facts: Map<string, string> } {
  const facts = new Map<string, string>();
  for (const [key, f] of input.facts ?? []) {
    const cluster = key.slice(0, key.indexOf('/'));
    facts.set(cluster, `${facts.get(cluster) ?? ''}${JSON.stringify([key, f])}`);
  }
  return {
    values: [
      input.settings === undefined ? undefined : JSON.stringify(input.settings),
      input.flavour,
      input.prune,
      input.secretValues === undefined ? undefined : JSON.stringify([...input.secretValues]),
    ],
    facts,
  };
}

/** One cluster's plan before gating: its nodes with their addresses, and the diff. */
function planCluster(
  cluster: ClusterModel,
  placements: ReadonlyArray<Placement | undefined>,
  resolutions: ReadonlyArray<IpResolution | undefined>,
  input: PlanInput,
  blocked: Set<string>,
  problems: Problem[],
): ClusterPlan {
  const nodes: PlannedNode[] = [];
  const passedOver: string[] = [];
  cluster.nodes.forEach((spec, i) => {
    const p = placements[i];
    const resolution = resolutions[i];
    if (!p || !resolution) return;
    const { resolved: ip, skipped } = resolution;
    if (!ip) {
      blocked.add(cluster.name);
      const { macs } = p.host;
      problems.push(
        error(
          'NO_IP',
          `cluster ${cluster.name}: node ${spec.name} is placed on host ${p.host.key}, but no active lease or inventory address is known for its MACs (${macs.length ? macs.join(', ') : 'none known'})${skipped.length ? `; not usable: ${describeSkipped(skipped)}` : ''}`,
          nodeWhere(cluster, spec),
        ),
      );
      return;
    }
    if (skipped.length)
      passedOver.push(`node ${spec.name} uses ${ip.ip}; passed over ${describeSkipped(skipped)}`);
    nodes.push({
      name: spec.name,
      roles: [...spec.roles],
      host: p.host.key,
      mac: ip.mac,
      ip: ip.ip,
      ipSource: ip.source === 'lease' ? `lease ${ip.origin}` : 'inventory',
      change: 'keep',
      placement: p.reason,
    });
  });
  const plan = diffCluster(
    cluster,
    nodes,
    input.applied.clusters.get(cluster.name),
    input,
    blocked.has(cluster.name),
    problems,
  );
  plan.notes.push(...passedOver);
  return plan;
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
    const packages = newClusterPackages(cluster, nodes);
    if (packages) actions.push(packages);
  } else {
    // A running cluster: one diff per concern, in this order (each follows the node diff).
    const d: ClusterDiff = {
      cluster,
      nodes,
      applied,
      prune: input.prune,
      ...(input.facts ? { facts: input.facts } : {}),
      actions,
      notes,
    };
    diffNodes(d);
    diffPlugins(d);
    diffPackages(d);
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
  if (!blocked)
    planRegistry(
      name,
      nodes,
      applied,
      input.settings,
      input.facts,
      actions,
      notes,
      input.secretValues,
    );
  if (!blocked)
    planReconfigure(name, nodes, applied, input.settings, actions, notes, input.secretValues);
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
        kept,
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
    // Not remove-nodes of every node: an installer (KUD, Kubespray's remove-node.yml, the
    // reference installer) refuses to remove the last master. The whole cluster goes at once,
    // by the installer's reset of every node of its inventory.
    plan.actions.push({
      kind: 'remove-cluster',
      cluster: a.cluster,
      nodes: nodes.map((n) => n.name),
      reason: `the cluster is no longer in the site, and pruning is allowed: ${pluralize(nodes.length, 'node')} reset, and bpa forgets the cluster`,
      inputs: [],
    });
  } else {
    plan.notes.push('the cluster is no longer in the site; run with --prune to remove its nodes');
  }
  return plan;
}
