import type { RegistryMirror } from '../config/execution.js';
import type { FactsPort } from '../observe/facts.js';
import type { PackageChange, PlannedNode } from '../plan/index.js';
import type { StepRecord } from '../state/journal.js';
import type { RolloutSettings } from '../validate/model.js';

/**
 * What the apply engine needs from the outside world, each behind a small interface with
 * real implementations (SSH, a local installer process or a Kubernetes Job, Secrets and
 * ConfigMaps or files). Tests swap the external system, not these.
 */

/** A step's view of its journal record, to keep facts for a later re-check. */
export interface StepHandle {
  /** The record from an earlier run, when this step was started before (found running or failed). */
  previous?: StepRecord;
  record(data: Record<string, unknown>): Promise<void>;
}

export interface AccessPort {
  /** Brings nodes under bpa's SSH control (key auth; bootstrap with default credentials if configured). Throws naming every node that failed. */
  ensure(cluster: string, nodes: readonly PlannedNode[]): Promise<void>;
}

export type InstallerPath = 'provision' | 'scale' | 'addon' | 'remove' | 'reset' | 'upgrade';

export interface InstallerRequest {
  /** Identifies the work (same action, same inputs → same id), e.g. to name a Job. */
  workId: string;
  cluster: string;
  /** Absolute path of the cluster directory (KUD's layout). */
  clusterDir: string;
  /** Absolute path of `<clusterDir>/hosts.ini`. */
  inventory: string;
  plugins: string[];
  /** For the scale, remove and upgrade paths: only these nodes (reset: every node, for the log). */
  nodes: string[];
  /** The cluster's pod network (Provisioning `PodSubnet`), when it has one. */
  podSubnet?: string;
}

export interface InstallerPort {
  /** Runs one installer path to completion; throws on failure. Re-checks a run found in progress. */
  run(path: InstallerPath, req: InstallerRequest, step: StepHandle): Promise<void>;
}

export interface PublishPort {
  /** Stores the cluster's kubeconfig; returns where (for the report). */
  storeKubeconfig(cluster: string, adminConf: string): Promise<string>;
  /** Publishes the node → IP map; returns where. */
  publishNodes(
    cluster: string,
    nodes: ReadonlyArray<Pick<PlannedNode, 'name' | 'ip' | 'roles'>>,
  ): Promise<string>;
}

export interface PackageResult {
  node: string;
  ok: boolean;
  /** Installed versions after the change (dpkg-query), for the report and the applied state. */
  installed: Record<string, string | null>;
  error?: { code: string; message: string };
  /** Wall time spent on this node. */
  durationMs?: number;
}

export interface PackagePort {
  /** Applies package changes per node, in parallel; a failing node does not stop the others. */
  apply(
    cluster: string,
    nodes: readonly PlannedNode[],
    changes: readonly PackageChange[],
    mode: 'install' | 'upgrade' | 'remove',
  ): Promise<PackageResult[]>;
}

export interface RegistryResult {
  node: string;
  ok: boolean;
  error?: { code: string; message: string };
}

export interface RegistryPort {
  /** Writes the registry mirror configuration on each node, in parallel; one failing node does not stop the others. */
  configure(
    cluster: string,
    nodes: readonly PlannedNode[],
    mirror: RegistryMirror,
  ): Promise<RegistryResult[]>;
}

/** A node of a running cluster, through that cluster's own API (the kubeconfig bpa stored). */
export interface NodeOpsPort {
  /** spec.unschedulable: true (idempotent). */
  cordon(cluster: string, node: string): Promise<void>;
  uncordon(cluster: string, node: string): Promise<void>;
  /** Evicts the node's pods (Eviction API; PodDisruptionBudgets honoured until the timeout). */
  drain(
    cluster: string,
    node: string,
    opts: RolloutSettings['drain'],
    signal?: AbortSignal,
  ): Promise<void>;
  /** Waits until the node reports Ready. */
  waitReady(cluster: string, node: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

/** Everything an apply reads from and changes outside bpa. */
export interface ApplyPorts {
  access: AccessPort;
  installer: InstallerPort;
  publish: PublishPort;
  packages: PackagePort;
  /** The container runtimes' registry mirror (configure-registry); absent: such plans fail. */
  registry?: RegistryPort;
  /** What the nodes report, read for the plan and again after the apply. */
  facts: FactsPort;
  /** Cordon, drain and readiness for rolling changes (clusters with `rollout`). */
  nodes?: NodeOpsPort;
  /** Runs a health command on a node (SSH); throws when it fails. */
  healthCommand?: HealthCommand;
}

/** Runs a rolling change's health command on a node; throws when it fails. */
export type HealthCommand = (
  cluster: string,
  node: PlannedNode,
  argv: readonly string[],
  timeoutMs: number,
) => Promise<void>;
