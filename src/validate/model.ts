/**
 * The typed site model produced by validation. Every later stage (observe, plan, apply,
 * report) reads this, never raw documents.
 */

/** Where a document came from, for messages that point back at the site. */
export interface DocRef {
  file: string;
  doc: number;
}

export type Role = 'master' | 'worker';

/** A node of a cluster: one entry in masters and/or workers under one name. */
export interface NodeSpec {
  name: string;
  /** Roles in the order master, worker. A name in both lists is one dual-role node. */
  roles: Role[];
  /** Normalized MAC (lowercase, colon-separated), when the node is pinned to a host. */
  mac?: string;
  /** Minimum CPU count. */
  cpu?: number;
  /** Minimum memory in bytes, from a Kubernetes Quantity (exact: bigint). */
  memoryBytes?: bigint;
  /** The quantity as written, for messages. */
  memory?: string;
  sriov?: boolean;
  qat?: boolean;
  /** Required: the host's labels match (`hostSelector`). */
  hostSelector?: HostSelector;
  /** Required: the host's inspected hardware (`hardware`). */
  hardware?: HardwareRequirements;
  /** Preferences among the hosts that pass the required terms. */
  preferred?: PreferredTerm[];
  /** Pointer of the (first) entry of this node in its Provisioning document. */
  pointer: string;
}

/** A string fact: equal to a text, or a (safe, checked) regular expression found in it. */
export type StringMatch = { equals: string } | { matches: string };

/** Both bounds included; at least one given. */
export interface NumberRange {
  min?: number;
  max?: number;
}

export type LabelOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface LabelExpression {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** A Kubernetes label selector (plus Gt/Lt, as Cluster API's metal3 provider accepts). */
export interface HostSelector {
  matchLabels: Record<string, string>;
  matchExpressions: LabelExpression[];
}

/** Requirements over metal3's HardwareDetails, by its own field names. */
export interface HardwareRequirements {
  cpu?: {
    arch?: StringMatch;
    model?: StringMatch;
    count?: NumberRange;
    clockMegahertz?: NumberRange;
    flags?: string[];
  };
  ramMebibytes?: NumberRange;
  nics?: NicRequirement[];
  storage?: DiskRequirement[];
  systemVendor?: { manufacturer?: StringMatch; productName?: StringMatch };
  firmware?: { bios?: { vendor?: StringMatch; version?: StringMatch; date?: StringMatch } };
}

/** At least `count` NICs pass every field given. */
export interface NicRequirement {
  name?: StringMatch;
  model?: StringMatch;
  mac?: StringMatch;
  speedGbps?: NumberRange;
  pxe?: boolean;
  vlans?: number[];
  count: number;
}

/** At least `count` disks pass every field given. */
export interface DiskRequirement {
  name?: StringMatch;
  type?: 'HDD' | 'SSD' | 'NVME';
  /** In bytes. */
  sizeBytes?: NumberRange;
  rotational?: boolean;
  vendor?: StringMatch;
  model?: StringMatch;
  count: number;
}

export interface PreferredTerm {
  weight: number;
  hostSelector?: HostSelector;
  hardware?: HardwareRequirements;
}

export interface PackageSpec {
  name: string;
  /** Pinned Debian version, when given. */
  version?: string;
}

export interface ClusterModel {
  name: string;
  owner?: string;
  /** Labels of the Cluster document (or the Provisioning without one): wave selectors. */
  labels?: Record<string, string>;
  /** `metadata.labels.cluster-type`, e.g. `virtlet-vm`. */
  clusterType?: string;
  /** The Cluster document, when the site has one (ICN also allows a bare Provisioning). */
  clusterRef?: DocRef;
  provisioning: { name: string; ref: DocRef };
  software?: { name: string; ref: DocRef };
  /** Nodes in document order: masters first, then workers not already listed as masters. */
  nodes: NodeSpec[];
  plugins: string[];
  podSubnet?: string;
  /** `spec.kubernetesVersion` of the Provisioning, e.g. `v1.27.10`. */
  kubernetesVersion?: string;
  masterSoftware: PackageSpec[];
  workerSoftware: PackageSpec[];
  /** When changes may start, and whether bpa applies anything (Cluster over Site). */
  day2?: Day2Settings;
}

/** How a running cluster's nodes are changed one batch at a time (durations in ms). */
export interface RolloutSettings {
  /** A count, or a percentage of the cluster's nodes ("25%"). */
  maxUnavailable: number | string;
  drain: {
    enabled: boolean;
    timeoutMs: number;
    /** Grace period of evicted pods; absent: each pod's own. */
    gracePeriodSeconds?: number;
    ignoreDaemonSets: boolean;
    deleteEmptyDirData: boolean;
  };
  healthCheck: { timeoutMs: number; command?: string[] };
}

/** A wave: cluster names, or the clusters whose labels match. */
export type Wave = string[] | { matchLabels: Record<string, string> };

export interface Waves {
  waves: Wave[];
  /** How long a wave's clusters must have stayed Ready before the next wave starts. */
  soakMs: number;
}

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** A weekly maintenance window; `days` empty: every day. */
export interface MaintenanceWindow {
  days: Weekday[];
  /** "HH:MM" */
  start: string;
  /** "HH:MM" or "24:00"; not after `start`: the next day. */
  end: string;
  /** An IANA zone (checked at validation). */
  timezone: string;
}

/**
 * What decides when bpa may change a cluster: its maintenance windows (none: any time), what
 * they gate (`running`: every change to a cluster that already runs; `all`: provisioning
 * new clusters too), and `suspend` (nothing applied at all). Each is the Cluster document's
 * when it sets it, else the Site's.
 */
export interface Day2Settings {
  windows: MaintenanceWindow[];
  gate: 'running' | 'all';
  suspend: boolean;
  /** Rolling node changes (Cluster `spec.rollout`); absent: every node at once, no drain. */
  rollout?: RolloutSettings;
  /** Where the windows and the suspension come from, for messages. */
  windowsFrom?: 'Site' | 'Cluster';
  suspendFrom?: 'Site' | 'Cluster';
}

/** A v1 Secret document of the site (validate/secrets.ts): never its values. */
export interface SiteSecret {
  name: string;
  file: string;
  doc: number;
  encrypted: boolean;
  /** The keys of stringData and data (never their values). */
  keys: string[];
  /** sha256 of the encrypted values (or, for a plaintext Secret of a watched directory, of the values). */
  digest: string;
}

/** Site-wide settings from the optional Site document (spec fields, all optional). */
export interface SiteSettings {
  name: string;
  ref?: DocRef;
  spec: Record<string, unknown>;
}

/** A metal3 BareMetalHost or HardwareData document, kept as data for the observe stage. */
export interface InventoryDocument {
  kind: 'BareMetalHost' | 'HardwareData';
  name: string;
  namespace?: string;
  ref: DocRef;
  value: Record<string, unknown>;
}

export interface SiteModel {
  clusters: ClusterModel[];
  /** The Site's day-2 settings: for clusters no longer in the site, and the default of all. */
  day2?: Day2Settings;
  /** The Site's `rollout.waves`: the order changes reach the clusters. */
  waves?: Waves;
  site?: SiteSettings;
  inventory: InventoryDocument[];
  /** The site's v1 Secret documents (names, keys, digests; never values). */
  secrets?: SiteSecret[];
}
