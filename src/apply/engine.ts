import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { canonicalJson, sha256Hex } from '../plan/hash.js';
import type { Action, ClusterPlan, Plan, PlannedNode } from '../plan/index.js';
import { mirrorDigest } from '../runtime/registry-mirror.js';
import { isoMinute, windowStatus } from '../plan/windows.js';
import type { AppliedCluster, SecretRecord } from '../state/applied.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { Journal, type StepRecord } from '../state/journal.js';
import type { StateStore } from '../state/store.js';
import { BpaError, InstallerError, TransientError, messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { redact } from '../util/redact.js';
import type { PackageSpec, Role } from '../validate/model.js';
import { rollNodes, rollPackages, type RollBase } from './rollout/roll.js';
import type {
  AccessPort,
  ApplyPorts,
  NodeOpsPort,
  InstallerPort,
  InstallerRequest,
  PackagePort,
  PackageResult,
  PublishPort,
  RegistryPort,
  StepHandle,
} from './ports.js';

export interface ApplyDeps {
  /** The site Secrets this plan acts with (digests and HMACs, never values): recorded as applied. */
  secrets?: Record<string, SecretRecord>;
  store: StateStore;
  /** Called before every journal write: throws when this process lost the state lock. */
  verifyLock: () => Promise<void>;
  access: AccessPort;
  installer: InstallerPort;
  publish: PublishPort;
  packages: PackagePort;
  registry?: RegistryPort;
  log: Logger;
  /** Source revision being applied (git sha, or a digest of a local site). */
  revision?: string;
  maxParallelClusters?: number;
  now?: () => Date;
  /** The clock maintenance windows are read with (epoch ms); default `now`. */
  clock?: () => number;
  /** Cordon, drain and readiness, for clusters with rolling changes (`rollout`). */
  nodes?: NodeOpsPort;
  /** Runs a rollout's health command on a node. */
  healthCommand?: ApplyPorts['healthCommand'];
  /** Each node of a rolling change as it moves (metrics). */
  onNodePhase?: (cluster: string, node: string, phase: string) => void;
  /**
   * Whether the cluster has been suspended since the plan was made (serve's suspend API during
   * an apply): asked before each action; the action running finishes, no new one starts.
   */
  suspendedNow?: (cluster: string) => Promise<boolean>;
  /**
   * Fired when bpa is stopping (SIGTERM, leadership lost): no new step starts, and a step
   * that ends because of it stays journaled as running, to be resumed by the next run.
   */
  signal?: AbortSignal;
}

export type StepResult = 'done' | 'skipped' | 'failed' | 'interrupted';

export interface ActionOutcome {
  kind: Action['kind'];
  nodes: string[];
  /** interrupted: bpa was stopping; the action resumes where it stopped on the next run. */
  result: 'done' | 'failed' | 'not-run' | 'interrupted';
  startedAt?: string;
  endedAt?: string;
  steps: Array<{ name: string; result: StepResult }>;
  error?: ActionError;
  packages?: PackageResult[];
  /** A rolling change: where each node got (pending, cordoned, drained, changed, healthy, done, failed). */
  rollout?: Array<{ node: string; state: string }>;
}

/**
 * Why an action failed. `message` (redacted) may quote an installer's output: the page and
 * bpa's log show it; reports in git carry only the other fields.
 */
export interface ActionError {
  code: string;
  message: string;
  /** The step that failed (installer, packages, …). */
  step?: string;
  /** An installer that ran: how it ended, and its log's id (state/logs.ts). */
  exitCode?: number;
  signal?: string;
  log?: string;
}

export interface ClusterOutcome {
  cluster: string;
  /**
   * waiting: outside its maintenance windows (before the first action, or a window closed
   * between two); suspended: nothing applied by the cluster's suspension.
   */
  result: 'applied' | 'failed' | 'unchanged' | 'interrupted' | 'waiting' | 'suspended';
  actions: ActionOutcome[];
  /** waiting: when the next window opens (ISO 8601), when one does. */
  waitingUntil?: string;
}

export interface ApplyResult {
  planHash: string;
  clusters: ClusterOutcome[];
  /** Nothing failed and nothing was interrupted. */
  ok: boolean;
  /** bpa stopped before the plan was through: not a failure, the next run resumes it. */
  interrupted: boolean;
}

/** What a step that ended because bpa is stopping throws: the journal keeps it running. */
export const INTERRUPTED = 'APPLY_INTERRUPTED' as const;

/**
 * Runs a plan. Every action is split into steps, each recorded in the cluster's journal
 * before and after it runs; a step done before (same work, any plan) is skipped, a step
 * found running is handed its earlier record so it can re-check instead of starting over.
 * A failed action stops its cluster; other clusters go on.
 */
export async function applyPlan(plan: Plan, deps: ApplyDeps): Promise<ApplyResult> {
  const limit = pLimit(deps.maxParallelClusters ?? 1);
  const clusters = await Promise.all(
    plan.clusters.map((c) =>
      limit(() => applyCluster(c, plan.hash, deps, plan.settings?.installerVariables)),
    ),
  );
  const interrupted = clusters.some((c) => c.result === 'interrupted');
  return {
    planHash: plan.hash,
    clusters,
    ok: !interrupted && clusters.every((c) => c.result !== 'failed'),
    interrupted,
  };
}

async function applyCluster(
  c: ClusterPlan,
  planHash: string,
  deps: ApplyDeps,
  installerVariables: string | undefined,
): Promise<ClusterOutcome> {
  const log = deps.log.child({ cluster: c.cluster });
  const outcomes: ActionOutcome[] = c.actions.map((a) => ({
    kind: a.kind,
    nodes: [...a.nodes],
    result: 'not-run',
    steps: [],
  }));
  if (c.gate?.state === 'suspended' || (c.gate && !c.actions.length)) {
    log.info({ reason: c.gate.reason }, c.gate.message);
    return {
      cluster: c.cluster,
      result: c.gate.state === 'suspended' ? 'suspended' : 'unchanged',
      actions: outcomes,
    };
  }
  if (!c.actions.length) {
    await recordRotatedSecrets(c.cluster, deps);
    return { cluster: c.cluster, result: 'unchanged', actions: [] };
  }
  if (c.gate?.state === 'ignored') log.warn({ reason: c.gate.reason }, c.gate.message);
  const clusterDir = deps.store.clusterDir(c.cluster);
  const journal = await Journal.open(clusterDir, c.cluster, deps.verifyLock);
  let failed = false;
  let interrupted = false;
  let waitingUntil: string | undefined;
  let waiting = false;
  let suspended = false;
  for (const [i, action] of c.actions.entries()) {
    const outcome = outcomes[i] as ActionOutcome;
    if (failed || interrupted) break;
    if (deps.signal?.aborted) {
      interrupted = true;
      break;
    }
    // The applied state this action starts from: recorded when an action completes, so the
    // same work asked for again later (a node removed, then added back) is new work.
    const generation = (await deps.store.readCluster(c.cluster))?.appliedAt ?? '';
    const options = {
      action,
      cluster: c,
      clusterDir,
      journal,
      deps,
      log,
      outcome,
      planHash,
      generation,
      installerVariables,
    };
    const run = new ActionRun(options);
    // Nothing new starts once the window has closed; an action already begun (by this run,
    // or one that bpa stopped in the middle of) finishes.
    if (!run.begun() && (await deps.suspendedNow?.(c.cluster))) {
      suspended = true;
      log.warn({ action: action.kind }, 'suspended during the apply: no further action starts');
      break;
    }
    const window = windowNow(c, deps);
    if (!window.open && !run.begun()) {
      waiting = true;
      waitingUntil = window.opensAt;
      log.info(
        { action: action.kind, opensAt: waitingUntil },
        i === 0 && c.gate
          ? c.gate.message
          : 'the maintenance window has closed: the remaining actions wait for the next one',
      );
      break;
    }
    outcome.startedAt = (deps.now?.() ?? new Date()).toISOString();
    try {
      await run.execute();
      outcome.result = 'done';
    } catch (err: unknown) {
      if (err instanceof BpaError && err.code === INTERRUPTED) {
        outcome.result = 'interrupted';
        log.warn({ action: action.kind }, 'action interrupted: the next run resumes it');
        interrupted = true;
      } else {
        outcome.result = 'failed';
        const step = [...outcome.steps].reverse().find((st) => st.result === 'failed')?.name;
        outcome.error = { ...errorOf(err, 'APPLY_FAILED'), ...(step ? { step } : {}) };
        log.error({ action: action.kind, err: outcome.error }, 'action failed');
        failed = true;
      }
    }
    outcome.endedAt = (deps.now?.() ?? new Date()).toISOString();
  }
  return {
    cluster: c.cluster,
    result: interrupted
      ? 'interrupted'
      : failed
        ? 'failed'
        : suspended
          ? 'suspended'
          : waiting
            ? 'waiting'
            : 'applied',
    actions: outcomes,
    ...(waitingUntil ? { waitingUntil } : {}),
  };
}

/**
 * Whether an action may start now: outside the windows (as planned, or since a window
 * closed) only an action already begun may, which is finished rather than left half done.
 */
function windowNow(c: ClusterPlan, deps: ApplyDeps): { open: boolean; opensAt?: string } {
  if (c.gate?.state === 'deferred') return { open: false, opensAt: c.gate.opensAt };
  if (!c.windows) return { open: true };
  const status = windowStatus(c.windows, deps.clock?.() ?? (deps.now?.() ?? new Date()).getTime());
  return status.open
    ? { open: true }
    : {
        open: false,
        ...(status.opensAt !== undefined ? { opensAt: isoMinute(status.opensAt) } : {}),
      };
}

/**
 * An error as logs and the journal carry it: its code, a redacted message and, for an
 * installer that ran, how it ended and where its log is.
 */
function errorOf(err: unknown, fallback: string): ActionError {
  if (!(err instanceof BpaError)) return { code: fallback, message: redact(messageOf(err)) };
  const exit = err instanceof InstallerError ? err.exit : {};
  return {
    code: err.code,
    message: redact(err.message),
    ...(exit.exitCode !== undefined ? { exitCode: exit.exitCode } : {}),
    ...(exit.signal !== undefined ? { signal: exit.signal } : {}),
    ...(exit.log !== undefined ? { log: exit.log } : {}),
  };
}

/** What one action runs with. */
interface ActionRunOptions {
  action: Action;
  /** The plan of the action's cluster (nodes, inventory, desired state). */
  cluster: ClusterPlan;
  /** The cluster's state directory (inventory, artifacts, journal). */
  clusterDir: string;
  journal: Journal;
  deps: ApplyDeps;
  log: Logger;
  /** Filled in as the steps run. */
  outcome: ActionOutcome;
  planHash: string;
  /** When the applied state this action starts from was recorded ('' for none). */
  generation: string;
  /** The site Secret that holds the installer's variables (Site installer.variables). */
  installerVariables: string | undefined;
}

/** The steps of one action, journaled. */
class ActionRun {
  private readonly digest: string;
  private readonly action: Action;
  private readonly cluster: ClusterPlan;
  private readonly clusterDir: string;
  private readonly journal: Journal;
  private readonly deps: ApplyDeps;
  private readonly log: Logger;
  private readonly outcome: ActionOutcome;
  private readonly planHash: string;
  private readonly installerVariables: string | undefined;

  constructor(options: ActionRunOptions) {
    const { action, cluster, generation } = options;
    this.action = action;
    this.cluster = cluster;
    this.clusterDir = options.clusterDir;
    this.journal = options.journal;
    this.deps = options.deps;
    this.log = options.log;
    this.outcome = options.outcome;
    this.planHash = options.planHash;
    this.installerVariables = options.installerVariables;
    // Keyed by the work itself and the applied state it starts from, so an interrupted action
    // is recognised across plans (a lease moved, the plan hash changed), and nothing else is.
    const installerInputs =
      action.kind === 'provision-cluster' ||
      action.kind === 'upgrade-cluster' ||
      action.kind === 'add-nodes' ||
      action.kind === 'remove-nodes' ||
      action.kind === 'remove-cluster' ||
      action.kind === 'reconfigure-cluster'
        ? cluster.hostsIni
        : undefined;
    // Converging with other values (a second change before the first ran) is other work.
    const variables =
      action.kind === 'reconfigure-cluster' && this.installerVariables !== undefined
        ? options.deps.secrets?.[this.installerVariables]
        : undefined;
    this.digest = sha256Hex(
      canonicalJson({
        kind: action.kind,
        cluster: action.cluster,
        nodes: action.nodes,
        plugins: action.plugins,
        // What each node had before is what bpa saw, not the work: a rolling change resumed
        // after some nodes changed sees other versions there, and is still the same work.
        packages: action.packages?.map(({ from: _from, ...rest }) => rest),
        registry: action.registry,
        hostsIni: installerInputs,
        variables,
        generation,
      }),
    ).slice(0, 16);
  }

  /** Whether a run before (or this one) started this action's steps. */
  begun(): boolean {
    return this.journal.hasStarted(`${this.digest}:`);
  }

  async execute(): Promise<void> {
    const a = this.action;
    const nodes = this.nodes(a.nodes);
    const inventory = join(this.clusterDir, 'hosts.ini');
    const req = {
      workId: this.digest,
      cluster: a.cluster,
      clusterDir: this.clusterDir,
      inventory,
      plugins: a.plugins ?? [],
      nodes: a.nodes,
      podSubnet: this.cluster.podSubnet,
    };
    switch (a.kind) {
      case 'provision-cluster':
        await this.step('inventory', () => this.writeInventory());
        await this.step('ssh-access', () => this.deps.access.ensure(a.cluster, nodes));
        await this.step('installer', (h) => this.deps.installer.run('provision', req, h));
        await this.step('kubeconfig', () => this.storeKubeconfig());
        await this.step('configmap', () => this.publishNodes());
        await this.step('record', () =>
          this.record((applied) => ({
            ...applied,
            nodes: this.appliedNodes(),
            plugins: [...this.cluster.desired.plugins],
            podSubnet: this.cluster.podSubnet ?? null,
            kubernetesVersion: this.cluster.desired.kubernetesVersion,
          })),
        );
        return;
      case 'upgrade-cluster':
        await this.step('inventory', () => this.writeInventory());
        await this.step('ssh-access', () => this.deps.access.ensure(a.cluster, nodes));
        if (this.cluster.rollout) await this.rollUpgrade(req, nodes);
        else await this.step('installer', (h) => this.deps.installer.run('upgrade', req, h));
        await this.step('record', () =>
          this.record((applied) => ({
            ...applied,
            kubernetesVersion: this.cluster.desired.kubernetesVersion,
          })),
        );
        return;
      case 'reconfigure-cluster':
        // The cluster path again over the running nodes: Kubespray's cluster.yml and KUD's
        // installer are written to be re-run, and apply the variables to every node at once.
        await this.step('inventory', () => this.writeInventory());
        await this.step('ssh-access', () => this.deps.access.ensure(a.cluster, nodes));
        await this.step('installer', (h) => this.deps.installer.run('provision', req, h));
        await this.step('record', () => this.record((applied) => applied));
        return;
      case 'add-nodes':
        await this.step('inventory', () => this.writeInventory());
        await this.step('ssh-access', () => this.deps.access.ensure(a.cluster, nodes));
        await this.step('installer', (h) => this.deps.installer.run('scale', req, h));
        await this.step('configmap', () => this.publishNodes());
        await this.step('record', () =>
          this.record((applied) => ({
            ...applied,
            nodes: mergeNodes(applied.nodes, this.appliedNodes(a.nodes)),
          })),
        );
        return;
      case 'remove-nodes':
        // The remove path runs against the inventory that still lists the nodes.
        await this.step('installer', (h) =>
          this.deps.installer.run(
            'remove',
            { ...req, inventory: join(this.clusterDir, 'hosts.ini') },
            h,
          ),
        );
        await this.step('inventory', () => this.writeInventory());
        await this.step('configmap', () => this.publishNodes());
        await this.step('record', () =>
          this.record((applied) => ({
            ...applied,
            nodes: applied.nodes.filter((n) => !a.nodes.includes(n.name)),
          })),
        );
        return;
      case 'remove-cluster':
        // The reset runs against the inventory the cluster was last applied with: it lists
        // every node. Then bpa forgets the cluster: its applied state and its journal go
        // (not a journaled step: the journal is what goes), so the same cluster added back
        // is provisioned anew. Interrupted before that, the next plan asks for the same
        // work, and the reset, done, is skipped.
        await this.step('installer', (h) => this.deps.installer.run('reset', req, h));
        await this.deps.verifyLock();
        await this.deps.store.forgetCluster(a.cluster);
        this.outcome.steps.push({ name: 'forget', result: 'done' });
        this.log.info({ action: a.kind }, 'nodes reset: bpa forgot the cluster');
        return;
      case 'configure-registry':
        await this.configureRegistry(a, nodes);
        return;
      case 'install-plugins':
        await this.step('installer', (h) => this.deps.installer.run('addon', req, h));
        await this.step('record', () =>
          this.record((applied) => ({
            ...applied,
            plugins: [...new Set([...applied.plugins, ...(a.plugins ?? [])])],
          })),
        );
        return;
      case 'install-packages':
      case 'upgrade-packages':
      case 'remove-packages':
      case 'fix-drift': {
        const mode =
          a.kind === 'remove-packages'
            ? 'remove'
            : a.kind === 'upgrade-packages'
              ? 'upgrade'
              : 'install';
        if (this.cluster.rollout) {
          const results: PackageResult[] = [];
          this.outcome.packages = results;
          await rollPackages({
            ...this.rollBase(nodes),
            changes: a.packages ?? [],
            mode,
            packages: this.deps.packages,
            onResult: (r) =>
              results.push(
                r.error ? { ...r, error: { ...r.error, message: redact(r.error.message) } } : r,
              ),
          });
          await this.step('record', () =>
            this.record((applied) => ({
              ...applied,
              packages: recordPackages(applied, this.cluster, a),
            })),
          );
          return;
        }
        let results: PackageResult[] = [];
        await this.step('packages', async () => {
          results = (await this.deps.packages.apply(a.cluster, nodes, a.packages ?? [], mode)).map(
            (r) =>
              r.error ? { ...r, error: { ...r.error, message: redact(r.error.message) } } : r,
          );
          this.outcome.packages = results;
          const bad = results.filter((r) => !r.ok);
          if (bad.length) {
            throw new BpaError(
              'PACKAGES_FAILED',
              `packages failed on ${bad.map((r) => `${r.node} (${r.error?.message ?? 'failed'})`).join('; ')}`,
              'transient',
            );
          }
        });
        await this.step('record', () =>
          this.record((applied) => ({
            ...applied,
            packages: recordPackages(applied, this.cluster, a),
          })),
        );
        return;
      }
    }
  }

  /**
   * What a rolling change of these nodes runs with (the cluster has `rollout`): the node
   * operations, the journal, and the outcome's progress node by node.
   */
  private rollBase(nodes: readonly PlannedNode[]): RollBase {
    const a = this.action;
    const rollout = this.cluster.rollout;
    if (!rollout || !this.deps.nodes)
      throw new BpaError(
        'CLUSTER_KUBECONFIG_UNUSABLE',
        `cluster ${a.cluster}: rollout is set, but bpa has no access to the cluster's API to drain its nodes`,
        'stalled',
      );
    const progress = nodes.map((n) => ({ node: n.name, state: 'pending' }));
    this.outcome.rollout = progress;
    return {
      cluster: a.cluster,
      clusterSize: this.cluster.nodes.filter((n) => n.change !== 'remove').length,
      nodes,
      rollout,
      ops: this.deps.nodes,
      healthCommand: this.deps.healthCommand,
      step: (name, fn) => this.step(name, fn),
      onPhase: (node, phase) => {
        const entry = progress.find((p) => p.node === node);
        if (entry) entry.state = phase;
        this.deps.onNodePhase?.(a.cluster, node, phase);
      },
      log: this.log.child({ action: a.kind }),
      signal: this.deps.signal,
    };
  }

  /**
   * The installer's upgrade rolled over the nodes: each node's own run of the upgrade path
   * (`{nodes}` is that node, e.g. `--limit master-1`) while it is cordoned and drained. The
   * runs go one at a time, whatever maxUnavailable lets be cordoned at once: they share the
   * cluster's directory, inventory and installer PID file.
   */
  private async rollUpgrade(req: InstallerRequest, nodes: readonly PlannedNode[]): Promise<void> {
    const oneAtATime = pLimit(1);
    await rollNodes({
      ...this.rollBase(nodes),
      change: (node, h) =>
        oneAtATime(() =>
          this.deps.installer.run(
            'upgrade',
            {
              ...req,
              nodes: [node.name],
              // Its own id (a Job's name): one run per node of the same action.
              workId: sha256Hex(`${this.digest}:${node.name}`).slice(0, 16),
            },
            h,
          ),
        ),
    });
  }

  private async step(name: string, fn: (handle: StepHandle) => Promise<void>): Promise<void> {
    const key = `${this.digest}:${name}`;
    const prev = this.journal.get(key);
    if (prev?.status === 'done') {
      this.outcome.steps.push({ name, result: 'skipped' });
      this.log.info({ action: this.action.kind, step: name }, 'step already done, skipped');
      return;
    }
    // Stopping: a step not yet started is left for the next run.
    if (this.deps.signal?.aborted) throw interruptedError(this.action.kind, name);
    const previous: StepRecord | undefined = prev ? { ...prev } : undefined;
    await this.journal.start(key, this.action.kind, name);
    this.log.info(
      { action: this.action.kind, step: name, resumed: previous?.status === 'running' },
      'step started',
    );
    try {
      await fn({ previous, record: (data) => this.journal.update(key, data) });
    } catch (err: unknown) {
      if (this.deps.signal?.aborted) {
        // Ended because bpa is stopping (an installer stopped, a Job no longer watched): its
        // outcome is not a failure of the work. It stays running in the journal, marked, and
        // the next run resumes it (re-checks or re-runs it: steps are idempotent).
        this.outcome.steps.push({ name, result: 'interrupted' });
        await this.journal.update(key, {
          interruptedAt: (this.deps.now?.() ?? new Date()).toISOString(),
        });
        throw interruptedError(this.action.kind, name, err);
      }
      this.outcome.steps.push({ name, result: 'failed' });
      await this.journal.finish(key, 'failed', errorOf(err, 'STEP_FAILED'));
      throw err;
    }
    await this.journal.finish(key, 'done');
    this.outcome.steps.push({ name, result: 'done' });
  }

  private async configureRegistry(a: Action, nodes: PlannedNode[]): Promise<void> {
    const mirror = a.registry;
    const port = this.deps.registry;
    if (!mirror || !port)
      throw new BpaError(
        'REGISTRY_CONFIG_FAILED',
        'configure-registry has no registry mirror to write',
        'stalled',
      );
    await this.step('ssh-access', () => this.deps.access.ensure(a.cluster, nodes));
    await this.step('registry', async () => {
      const results = await port.configure(a.cluster, nodes, mirror);
      const bad = results.filter((r) => !r.ok);
      if (bad.length)
        throw new BpaError(
          'REGISTRY_CONFIG_FAILED',
          `registry mirror configuration failed on ${bad.map((r) => redact(r.error?.message ?? r.node)).join('; ')}`,
          'transient',
        );
    });
    await this.step('record', () =>
      this.record((applied) => ({ ...applied, registryMirror: mirrorDigest(mirror) })),
    );
  }

  private nodes(names: readonly string[]): PlannedNode[] {
    return this.cluster.nodes.filter((n) => names.includes(n.name));
  }

  private async writeInventory(): Promise<void> {
    await writeFileAtomic(join(this.clusterDir, 'hosts.ini'), this.cluster.hostsIni, 0o644);
  }

  private async storeKubeconfig(): Promise<void> {
    const file = join(this.clusterDir, 'artifacts', 'admin.conf');
    let conf: string;
    try {
      conf = await readFile(file, 'utf8');
    } catch {
      throw new BpaError(
        'KUBECONFIG_MISSING',
        `the installer finished but left no kubeconfig at ${file}`,
        'stalled',
      );
    }
    const where = await this.deps.publish.storeKubeconfig(this.action.cluster, conf);
    this.log.info({ where }, 'kubeconfig stored');
  }

  private async publishNodes(): Promise<void> {
    const live = this.cluster.nodes.filter((n) => n.change !== 'remove');
    const where = await this.deps.publish.publishNodes(this.action.cluster, live);
    this.log.info({ where }, 'node addresses published');
  }

  private appliedNodes(only?: readonly string[]): AppliedCluster['nodes'] {
    return this.cluster.nodes
      .filter((n) => n.change !== 'remove' && (!only || only.includes(n.name)))
      .map((n) => ({ name: n.name, roles: [...n.roles], host: n.host, mac: n.mac, ip: n.ip }));
  }

  private async record(change: (applied: AppliedCluster) => AppliedCluster): Promise<void> {
    const current = (await this.deps.store.readCluster(this.action.cluster)) ?? {
      cluster: this.action.cluster,
      appliedAt: '',
      nodes: [],
      plugins: [],
      packages: { master: [], worker: [] },
    };
    const next = change(current);
    // The installer's variables count as applied only when a run converged the whole
    // cluster with them: after any other action they are still due (reconfigure-cluster).
    const converged =
      this.action.kind === 'provision-cluster' || this.action.kind === 'reconfigure-cluster';
    const vars = this.installerVariables;
    if (this.deps.secrets)
      next.secrets = {
        ...next.secrets,
        ...Object.fromEntries(
          Object.entries(this.deps.secrets).filter(([name]) => converged || name !== vars),
        ),
      };
    if (converged) {
      if (vars === undefined) delete next.installerVariables;
      else next.installerVariables = vars;
    }
    await this.deps.verifyLock();
    await this.deps.store.writeCluster({
      ...next,
      revision: this.deps.revision ?? next.revision,
      planHash: this.planHash,
      flavour: this.cluster.flavour,
      appliedAt: (this.deps.now?.() ?? new Date()).toISOString(),
    });
  }
}

/**
 * A Secret re-encrypted with the same values (the same HMAC, a new ciphertext) needs no work:
 * its new ciphertext digest is recorded, so that `bpa plan`, which has no keys and compares
 * ciphertexts, agrees from now on. A record whose values differ is left for its action.
 */
async function recordRotatedSecrets(cluster: string, deps: ApplyDeps): Promise<void> {
  if (!deps.secrets) return;
  const applied = await deps.store.readCluster(cluster);
  if (!applied?.secrets) return;
  const secrets = { ...applied.secrets };
  let changed = false;
  for (const [name, now] of Object.entries(deps.secrets)) {
    const before = secrets[name];
    if (!before || before.cipher === now.cipher) continue;
    if (before.value === undefined || before.value !== now.value) continue;
    secrets[name] = { ...before, cipher: now.cipher };
    changed = true;
  }
  if (!changed) return;
  await deps.verifyLock();
  await deps.store.writeCluster({ ...applied, secrets });
}

function interruptedError(action: string, step: string, cause?: unknown): TransientError {
  return new TransientError(
    INTERRUPTED,
    `${action}: bpa stopped during step ${step}; the next run resumes it`,
    cause === undefined ? undefined : { cause },
  );
}

function mergeNodes(
  existing: AppliedCluster['nodes'],
  added: AppliedCluster['nodes'],
): AppliedCluster['nodes'] {
  const names = new Set(added.map((n) => n.name));
  return [...existing.filter((n) => !names.has(n.name)), ...added];
}

/**
 * After a package action succeeds, the packages it touched are recorded per role as the site
 * asks for them now (or dropped from a role that no longer lists them); packages it did not
 * touch keep their recorded state, so a later failed action is retried by the next plan.
 */
function recordPackages(
  applied: AppliedCluster,
  cluster: ClusterPlan,
  action: Action,
): Record<Role, PackageSpec[]> {
  const touched = new Set((action.packages ?? []).map((p) => p.name));
  const out = {} as Record<Role, PackageSpec[]>;
  for (const role of ['master', 'worker'] as Role[]) {
    const desired = new Map(cluster.desired.software[role].map((p) => [p.name, p]));
    const kept = (applied.packages[role] ?? []).filter((p) => !touched.has(p.name));
    const updated = [...touched].flatMap((name) => {
      const d = desired.get(name);
      return d ? [{ ...d }] : [];
    });
    const order = cluster.desired.software[role].map((p) => p.name);
    out[role] = [...kept, ...updated].sort((x, y) => rank(order, x.name) - rank(order, y.name));
  }
  return out;
}

function rank(order: readonly string[], name: string): number {
  const i = order.indexOf(name);
  return i === -1 ? order.length : i;
}
