import type { ExecutionSettings, RegistryMirror } from '../config/execution.js';
import type { Problem } from '../util/problem.js';
import type { MaintenanceWindow, PackageSpec, Role, RolloutSettings } from '../validate/model.js';
import type { Flavour } from './hosts-ini.js';

/** Action kinds, in the order a plan runs them (DESIGN §4). */
export const ACTION_ORDER = [
  'provision-cluster',
  'upgrade-cluster',
  'add-nodes',
  'remove-nodes',
  'remove-cluster',
  'reconfigure-cluster',
  'configure-registry',
  'install-plugins',
  'install-packages',
  'upgrade-packages',
  'remove-packages',
  'fix-drift',
] as const;
export type ActionKind = (typeof ACTION_ORDER)[number];

/** One package change on one node: `from` → `to` (undefined: absent, or any version). */
export interface PackageChange {
  node: string;
  name: string;
  from?: string;
  to?: string;
  /** The version is right but its hold (apt-mark hold) was removed by hand: held again. */
  unheld?: true;
}

export interface Action {
  kind: ActionKind;
  cluster: string;
  /** The nodes the action touches, in node order. */
  nodes: string[];
  reason: string;
  /** The site inputs that caused it, e.g. "Provisioning provisioning-a (clusters/a/provisioning.yaml)". */
  inputs: string[];
  plugins?: string[];
  packages?: PackageChange[];
  /** configure-registry: the mirror the nodes' container runtimes are told to use. */
  registry?: RegistryMirror;
}

export type NodeChange = 'add' | 'remove' | 'keep' | 'update';

export interface PlannedNode {
  name: string;
  roles: Role[];
  /** Host key (namespace/name). */
  host: string;
  mac: string;
  ip: string;
  /** Where the IP came from: "lease dnsmasq.leases:3" or "inventory". */
  ipSource: string;
  change: NodeChange;
  /** Why this host (from role assignment). */
  placement: string;
  /** What changed for an `update`: "ip 198.18.0.3 → 198.18.0.9". */
  details?: string[];
}

/**
 * Why a cluster's actions do not start now. Not part of the plan hash: a window depends on
 * the clock, and a suspension decides whether the actions run, not what they are, so a plan
 * reviewed outside a window (or while suspended) applies with its hash once allowed.
 */
export interface ClusterGate {
  /** suspended: in the site or through the API; deferred: outside every window, or waiting for an earlier wave; ignored: outside, but `--ignore-windows`. */
  state: 'suspended' | 'deferred' | 'ignored';
  reason: 'Suspended' | 'OutsideMaintenanceWindow' | 'WaitingForWave';
  /** Suspended: by a commit (`site`) or serve's API (`api`). */
  by?: 'site' | 'api';
  /** Suspended through the API: since when (ISO 8601). */
  since?: string;
  /** Outside a window: when the next one opens (ISO 8601, UTC); absent: none ever does. */
  opensAt?: string;
  message: string;
}

export interface ClusterPlan {
  cluster: string;
  /** Set when the actions may not start now (or start only because windows are ignored). */
  gate?: ClusterGate;
  /**
   * A running cluster's package changes roll node by node (cordon, drain, change, health,
   * uncordon); absent: every node at once. Hashed: it changes what the apply does.
   */
  rollout?: RolloutSettings;
  /** A window is open: the apply checks these again before each action (none starts after it closes). */
  windows?: MaintenanceWindow[];
  flavour: Flavour;
  /** Nodes after the plan, plus removed nodes (change `remove`). */
  nodes: PlannedNode[];
  /** Kubespray: the masters in the etcd group, an odd number of them (document order). */
  etcd?: string[];
  /**
   * The pod network the installer gets (`kube_pods_subnet`, `{podSubnet}`): the site's
   * `PodSubnet`, or, once the cluster runs, the one it was provisioned with.
   */
  podSubnet?: string;
  /**
   * The site's PodSubnet differs from the one the running cluster was provisioned with
   * (undefined: none, the installer's default). No action can change it in place: the plan
   * says so in a note and is never shown as "No changes".
   */
  podSubnetChange?: { from?: string; to?: string };
  actions: Action[];
  /** The inventory the installer gets after the plan. */
  hostsIni: string;
  /** Things a person should know that are not actions (e.g. a removal waiting for --prune). */
  notes: string[];
  /** What the site asks for, recorded as applied once the actions succeed. */
  desired: {
    plugins: string[];
    software: { master: PackageSpec[]; worker: PackageSpec[] };
    /** The Kubernetes version the inventory gives the installer (absent: its default). */
    kubernetesVersion?: string;
  };
}

export interface Plan {
  clusters: ClusterPlan[];
  /** Placement and address errors (validation problems are reported before planning). */
  problems: Problem[];
  /** How bpa will act on the nodes (installer, mirror, SSH), when known. */
  settings?: ExecutionSettings;
  /** Site Secrets the Site uses whose values changed since bpa acted with them (names only). */
  changedSecrets?: string[];
  /** sha256 of what would run (see planHash), hex. */
  hash: string;
}

export function planHasChanges(plan: Plan): boolean {
  return plan.clusters.some((c) => c.actions.length > 0);
}
