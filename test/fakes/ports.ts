/**
 * In-memory stand-ins for the external systems behind the apply ports (src/apply/ports.ts):
 * the nodes (SSH access, apt and dpkg), the installer process and the bootstrap cluster's
 * Secrets and ConfigMaps. They let the real engine, journal, state store, reconciler and
 * report builder run without root, sshd or a cluster; integration tests use the real things.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  AccessPort,
  ApplyPorts,
  InstallerPath,
  InstallerPort,
  InstallerRequest,
  PackagePort,
  PackageResult,
  PublishPort,
  StepHandle,
} from '../../src/apply/ports.js';
import type { FactsMap, FactsPort, FactsTarget } from '../../src/observe/facts.js';
import { factsKey } from '../../src/observe/facts.js';
import type { PackageChange, PlannedNode } from '../../src/plan/index.js';
import type { StepRecord } from '../../src/state/journal.js';
import { BpaError, TransientError } from '../../src/util/errors.js';

/** The machines: installed packages per address, and what their apt source offers. */
export class FakeNodes {
  /** address → package → installed version. */
  readonly installed = new Map<string, Map<string, string>>();
  /** Addresses that do not answer. */
  readonly down = new Set<string>();

  /** `available`: package → versions the apt source has; the last one is the candidate. */
  constructor(readonly available: Record<string, string[]>) {}

  packagesOf(address: string): Map<string, string> {
    let m = this.installed.get(address);
    if (!m) this.installed.set(address, (m = new Map()));
    return m;
  }
}

export class FakeAccess implements AccessPort {
  readonly ensured: string[][] = [];
  constructor(private readonly nodes: FakeNodes) {}

  async ensure(_cluster: string, nodes: readonly PlannedNode[]): Promise<void> {
    const down = nodes.filter((n) => this.nodes.down.has(n.ip));
    if (down.length)
      throw new TransientError(
        'SSH_UNREACHABLE',
        `unreachable: ${down.map((n) => n.name).join(', ')}`,
      );
    this.ensured.push(nodes.map((n) => n.name));
  }
}

export interface InstallerRun {
  path: InstallerPath;
  req: InstallerRequest;
  /** The journal record the engine handed over: set when the step was started before. */
  previous?: StepRecord;
}

/** What the installer does on its next run. */
export type InstallerBehaviour =
  | { kind: 'succeed' }
  /** Exits non-zero after printing `output` (as a local installer's failure reads). */
  | { kind: 'fail'; output: string }
  /** Runs until `signal` fires, then ends as a stopped installer does. */
  | { kind: 'hang'; signal: AbortSignal };

/**
 * The installer: records every run and, like KUD, leaves the application cluster's
 * kubeconfig at `<clusterDir>/artifacts/admin.conf` after provisioning.
 */
export class FakeInstaller implements InstallerPort {
  readonly runs: InstallerRun[] = [];
  private readonly queue: InstallerBehaviour[] = [];
  /** Resolves when a run starts (to interrupt it from a test). */
  started: Promise<void>;
  private markStarted: () => void = () => undefined;

  constructor() {
    this.started = this.nextStart();
  }

  /** The behaviours of the next runs, in order; afterwards runs succeed. */
  next(...behaviours: InstallerBehaviour[]): this {
    this.queue.push(...behaviours);
    return this;
  }

  async run(path: InstallerPath, req: InstallerRequest, step: StepHandle): Promise<void> {
    this.runs.push({ path, req, previous: step.previous });
    await step.record({ installer: 'fake', path });
    const behaviour = this.queue.shift() ?? { kind: 'succeed' };
    const started = this.markStarted;
    this.started = this.nextStart();
    started();
    if (behaviour.kind === 'fail') {
      throw new BpaError(
        'INSTALLER_FAILED',
        `installer ${path} for cluster ${req.cluster} exited 2: ${behaviour.output}`,
        'transient',
      );
    }
    if (behaviour.kind === 'hang') {
      const { signal } = behaviour;
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      throw new TransientError(
        'INSTALLER_ABORTED',
        `installer ${path} for cluster ${req.cluster} was stopped because bpa is shutting down`,
      );
    }
    if (path === 'provision') {
      await mkdir(join(req.clusterDir, 'artifacts'), { recursive: true });
      await writeFile(
        join(req.clusterDir, 'artifacts', 'admin.conf'),
        `apiVersion: v1\nkind: Config\nclusters: [{name: ${req.cluster}}]\n`,
      );
    }
  }

  private nextStart(): Promise<void> {
    return new Promise((resolve) => (this.markStarted = resolve));
  }
}

/** The bootstrap cluster's Secret and ConfigMap, as maps. */
export class FakePublisher implements PublishPort {
  readonly kubeconfigs = new Map<string, string>();
  readonly nodeMaps = new Map<string, Record<string, string>>();

  async storeKubeconfig(cluster: string, adminConf: string): Promise<string> {
    this.kubeconfigs.set(cluster, adminConf);
    return `secret ${cluster}-kubeconfig`;
  }

  async publishNodes(
    cluster: string,
    nodes: ReadonlyArray<Pick<PlannedNode, 'name' | 'ip' | 'roles'>>,
  ): Promise<string> {
    const data: Record<string, string> = {};
    for (const n of nodes)
      for (const role of n.roles) data[`${role.toUpperCase()}_${n.name}`] = n.ip;
    this.nodeMaps.set(cluster, data);
    return `configmap ${cluster}-configmap`;
  }
}

/** apt-get and dpkg-query on the fake nodes: installs the pinned (or candidate) version. */
export class FakePackages implements PackagePort {
  readonly calls: Array<{ mode: string; nodes: string[]; changes: PackageChange[] }> = [];
  constructor(private readonly nodes: FakeNodes) {}

  async apply(
    _cluster: string,
    nodes: readonly PlannedNode[],
    changes: readonly PackageChange[],
    mode: 'install' | 'upgrade' | 'remove',
  ): Promise<PackageResult[]> {
    this.calls.push({ mode, nodes: nodes.map((n) => n.name), changes: [...changes] });
    return nodes.map((n) => {
      const mine = changes.filter((c) => c.node === n.name);
      if (this.nodes.down.has(n.ip))
        return {
          node: n.name,
          ok: false,
          installed: {},
          error: { code: 'SSH_UNREACHABLE', message: `${n.name}: no answer` },
        };
      const pkgs = this.nodes.packagesOf(n.ip);
      for (const c of mine) {
        if (mode === 'remove') {
          pkgs.delete(c.name);
          continue;
        }
        const versions = this.nodes.available[c.name] ?? [];
        const version = c.to ?? versions[versions.length - 1];
        if (version === undefined || !versions.includes(version))
          return {
            node: n.name,
            ok: false,
            installed: {},
            error: {
              code: 'PACKAGE_NOT_FOUND',
              message: `${n.name}: package ${c.name} is not available from the node's apt sources`,
            },
          };
        pkgs.set(c.name, version);
      }
      const installed = Object.fromEntries(mine.map((c) => [c.name, pkgs.get(c.name) ?? null]));
      return { node: n.name, ok: true, installed };
    });
  }
}

/** dpkg-query over SSH on the fake nodes. */
export class FakeFacts implements FactsPort {
  readonly reads: string[][] = [];
  constructor(private readonly nodes: FakeNodes) {}

  async read(targets: readonly FactsTarget[]): Promise<FactsMap> {
    this.reads.push(targets.map((t) => t.node));
    const out: FactsMap = new Map();
    for (const t of targets) {
      if (this.nodes.down.has(t.ip)) {
        out.set(factsKey(t.cluster, t.node), {
          reachable: false,
          installed: {},
          error: { code: 'SSH_UNREACHABLE', message: `${t.node}: no answer` },
        });
        continue;
      }
      const pkgs = this.nodes.packagesOf(t.ip);
      out.set(factsKey(t.cluster, t.node), {
        reachable: true,
        installed: Object.fromEntries(t.packages.map((p) => [p, pkgs.get(p) ?? null])),
      });
    }
    return out;
  }
}

/** A full set of in-memory ports over the same fake nodes. */
export function fakePorts(nodes: FakeNodes): ApplyPorts & {
  access: FakeAccess;
  installer: FakeInstaller;
  publish: FakePublisher;
  packages: FakePackages;
  facts: FakeFacts;
} {
  return {
    access: new FakeAccess(nodes),
    installer: new FakeInstaller(),
    publish: new FakePublisher(),
    packages: new FakePackages(nodes),
    facts: new FakeFacts(nodes),
  };
}
