import type { PackageChange, PlannedNode } from '../../plan/index.js';
import { BpaError, InstallerError, StalledError, messageOf } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import type { RolloutSettings } from '../../validate/model.js';
import type {
  HealthCommand,
  NodeOpsPort,
  PackagePort,
  PackageResult,
  StepHandle,
} from '../ports.js';

/** Where a node is in its rolling change, recorded in its journal step as it goes. */
export type NodePhase = 'cordoned' | 'drained' | 'changed' | 'healthy';

/** What any rolling change needs, whatever the change made to each node is. */
export interface RollBase {
  cluster: string;
  /** Every node of the cluster (for a percentage of maxUnavailable). */
  clusterSize: number;
  nodes: readonly PlannedNode[];
  rollout: RolloutSettings;
  ops: NodeOpsPort;
  healthCommand?: HealthCommand;
  /** The engine's journaled step (skipped when done, handed its earlier record when resumed). */
  step: (name: string, fn: (h: StepHandle) => Promise<void>) => Promise<void>;
  /** Progress of each node, for metrics and reports. */
  onPhase?: (node: string, phase: NodePhase | 'failed' | 'done') => void;
  log: Logger;
  signal?: AbortSignal;
}

/** A package change rolled over the nodes. */
export interface RollInput extends RollBase {
  changes: readonly PackageChange[];
  mode: 'install' | 'upgrade' | 'remove';
  packages: PackagePort;
  onResult: (r: PackageResult) => void;
}

/**
 * Any change rolled over the nodes: `change` makes it on one cordoned, drained node (with
 * the node's step handle, for what it records) and throws when it failed.
 */
export interface RollNodesInput extends RollBase {
  change: (node: PlannedNode, h: StepHandle) => Promise<void>;
}

/** How many nodes may be unavailable at once: a count, or a percentage of the cluster (≥ 1). */
export function maxUnavailable(setting: number | string, clusterSize: number): number {
  if (typeof setting === 'number') return Math.max(1, setting);
  const pct = Number(setting.replace('%', ''));
  return Math.max(1, Math.floor((pct * clusterSize) / 100));
}

/**
 * The batches a rolling change goes through: masters (dual-role nodes too) one at a time,
 * first, then the workers `maxUnavailable` at a time, each in node order.
 */
export function batchesOf(
  nodes: readonly PlannedNode[],
  rollout: RolloutSettings,
  clusterSize: number,
): PlannedNode[][] {
  const size = maxUnavailable(rollout.maxUnavailable, clusterSize);
  const masters = nodes.filter((n) => n.roles.includes('master'));
  const workers = nodes.filter((n) => !n.roles.includes('master'));
  const out: PlannedNode[][] = masters.map((m) => [m]);
  for (let i = 0; i < workers.length; i += size) out.push(workers.slice(i, i + size));
  return out;
}

/** A package change rolled over the nodes (see rollNodes): apt on the one node, verified. */
export async function rollPackages(input: RollInput): Promise<void> {
  await rollNodes({
    ...input,
    change: async (node) => {
      const [result] = await input.packages.apply(
        input.cluster,
        [node],
        input.changes.filter((c) => c.node === node.name),
        input.mode,
      );
      if (result) input.onResult(result);
      if (!result?.ok)
        throw new StalledError(
          'PACKAGES_FAILED',
          `the change failed: ${result?.error?.message ?? 'no result'}`,
        );
    },
  });
}

/**
 * A change rolled over the nodes, batch by batch; each node one journaled step:
 * cordon, drain, change, wait Ready (and the health command), uncordon. A node whose step is
 * done is not touched again; one found part-way resumes where its record says (a node whose
 * change was made is not changed again, and is uncordoned only once it is healthy). The first
 * node that fails stays cordoned and halts the rollout after its batch: no further batch starts.
 */
export async function rollNodes(input: RollNodesInput): Promise<void> {
  for (const batch of batchesOf(input.nodes, input.rollout, input.clusterSize)) {
    const settled = await Promise.allSettled(
      batch.map(async (n) => {
        await input.step(`node:${n.name}`, (h) => rollNode(input, n, h));
        // Also a node finished by an earlier run (its step skipped).
        input.onPhase?.(n.name, 'done');
      }),
    );
    const failed = settled
      .map((s, i) => ({ s, node: batch[i] as PlannedNode }))
      .filter(
        (x): x is { s: PromiseRejectedResult; node: PlannedNode } => x.s.status === 'rejected',
      );
    const first = failed[0];
    if (!first) continue;
    // bpa stopping is not a failure: passed on as it is, the nodes resume on the next run.
    if (first.s.reason instanceof BpaError && first.s.reason.code === 'APPLY_INTERRUPTED')
      throw first.s.reason;
    const why = failed.map((f) => `${f.node.name}: ${messageOf(f.s.reason)}`).join('; ');
    const message = `rollout of cluster ${input.cluster} halted at ${failed.map((f) => f.node.name).join(', ')} (a node cordoned stays cordoned; no further node is started): ${why}`;
    // The first node's installer run, when that is what failed: its exit and log for the report.
    if (first.s.reason instanceof InstallerError)
      throw new InstallerError('ROLLOUT_HALTED', message, first.s.reason.exit, 'stalled');
    throw new StalledError('ROLLOUT_HALTED', message);
  }
}

async function rollNode(input: RollNodesInput, node: PlannedNode, h: StepHandle): Promise<void> {
  const { cluster, ops, rollout } = input;
  const log = input.log.child({ node: node.name });
  const was = h.previous?.data?.['phase'] as NodePhase | undefined;
  const phase = async (p: NodePhase): Promise<void> => {
    await h.record({ phase: p });
    input.onPhase?.(node.name, p);
  };
  try {
    if (was !== 'changed' && was !== 'healthy') {
      await ops.cordon(cluster, node.name);
      await phase('cordoned');
      if (rollout.drain.enabled) {
        await ops.drain(cluster, node.name, rollout.drain, input.signal);
        await phase('drained');
      }
      await input.change(node, h);
      await phase('changed');
    } else {
      log.info({ phase: was }, 'resuming a node whose change was made: checking its health');
    }
    await ops.waitReady(cluster, node.name, rollout.healthCheck.timeoutMs, input.signal);
    if (rollout.healthCheck.command)
      await input.healthCommand?.(
        cluster,
        node,
        rollout.healthCheck.command,
        rollout.healthCheck.timeoutMs,
      );
    await phase('healthy');
    await ops.uncordon(cluster, node.name);
    input.onPhase?.(node.name, 'done');
  } catch (err: unknown) {
    input.onPhase?.(node.name, 'failed');
    throw err;
  }
}
