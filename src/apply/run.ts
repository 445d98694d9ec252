import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { executionSettings, kubesprayDirOf } from '../config/execution.js';
import type { Config } from '../config/options.js';
import { siteDigest } from '../load/digest.js';
import type { Plan } from '../plan/index.js';
import { factsTargets, runPlan, type PlanRun } from '../plan/run.js';
import { StateLock } from '../state/lock.js';
import { StateStore } from '../state/store.js';
import { StalledError, messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { hasErrors } from '../util/problem.js';
import { SshAccess } from './access.js';
import { applyPlan, type ApplyResult } from './engine.js';
import { KNOWN_HOSTS_FILE } from './installer/ansible-env.js';
import { checkCommands, LocalInstaller } from './installer/port.js';
import { FilePublisher } from './publish-files.js';
import { SshPackages } from './packages/ssh-packages.js';
import type {
  AccessPort,
  FactsPort,
  InstallerPath,
  InstallerPort,
  PackagePort,
  PublishPort,
} from './ports.js';
import { SshSession, type OpenSsh } from '../ssh/session.js';
import {
  readCredentialsFile,
  readSecretCredentials,
  type BootstrapCredentials,
} from '../ssh/index.js';
import {
  factsKey,
  readFacts as readNodeFacts,
  type FactsMap,
  type FactsTarget,
} from '../observe/facts.js';

export interface ApplyRunOptions {
  env: NodeJS.ProcessEnv;
  now: number;
  log: Logger;
  /** Live installer output lines. */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  /** Called with the plan before anything is applied (to show it). */
  onPlan?: (run: PlanRun) => void;
  /** The state lock, when the caller holds it already (a reconcile holds it up to its report). */
  lock?: StateLock;
  /** The outside world to use instead of what the configuration names (SSH, installer, publishing). */
  ports?: ApplyPorts;
}

/** Everything an apply reads from and changes outside bpa. */
export interface ApplyPorts {
  access: AccessPort;
  installer: InstallerPort;
  publish: PublishPort;
  packages: PackagePort;
  facts: FactsPort;
}

export interface ApplyRun {
  run: PlanRun;
  config?: Config;
  /** Absent when nothing was applied because the site has errors (see `run.problems`). */
  result?: ApplyResult;
  /**
   * What the nodes report after the apply: the facts read for the plan, with every node an
   * action worked on read again (new nodes, changed versions). What a report shows.
   */
  facts?: FactsMap;
}

/**
 * plan + apply for a local site path, under the state directory's lock: what `bpa apply`
 * and `bpa reconcile --once PATH` run. A site with errors applies nothing and returns its
 * problems; a plan whose hash is not the one asked for throws PLAN_HASH_MISMATCH.
 */
export async function runApply(
  path: string,
  config: (site: Record<string, unknown> | undefined) => Config,
  opts: ApplyRunOptions,
): Promise<ApplyRun> {
  let cfg: Config | undefined;
  const remember = (site: Record<string, unknown> | undefined): Config => (cfg = config(site));
  // The lock is taken before observing: the applied state read for the plan is the one applied to.
  const stateDir = config(undefined).stateDir;
  const lock = opts.lock ?? new StateLock(stateDir);
  if (!opts.lock) await lock.acquire();
  const ssh = new SshSession();
  const readFacts = async (targets: FactsTarget[], c: Config): Promise<FactsMap> => {
    if (opts.ports) return opts.ports.facts.read(targets);
    return readNodeFacts(ssh, targets, c);
  };
  try {
    const run = await runPlan(path, remember, opts.env, opts.now, readFacts);
    opts.onPlan?.(run);
    if (!run.plan || !cfg || hasErrors(run.problems)) return { run, config: cfg };
    const wanted = cfg.planHash;
    if (wanted && !run.plan.hash.startsWith(wanted)) {
      throw new StalledError(
        'PLAN_HASH_MISMATCH',
        `nothing applied: the plan has changed since it was reviewed: its hash is now ${run.plan.hash.slice(0, 12)}, not ${wanted}; run bpa plan again and review it`,
      );
    }
    const c = cfg;
    const result = await applyWith(run.plan, cfg, run, lock, opts, () => ssh.open(c));
    const facts = await factsAfter(run, result, c, (targets) => readFacts(targets, c), opts.log);
    return { run, config: cfg, result, facts };
  } finally {
    await ssh.close();
    if (!opts.lock) await lock.release();
  }
}

/**
 * The facts read for the plan, with the nodes the apply worked on read again: a report shows
 * the versions the nodes have now and the nodes just added, not what was there before.
 */
async function factsAfter(
  run: PlanRun,
  result: ApplyResult,
  cfg: Config,
  read: (targets: FactsTarget[]) => Promise<FactsMap>,
  log: Logger,
): Promise<FactsMap | undefined> {
  const touched = new Set(
    result.clusters.flatMap((c) =>
      c.actions
        .filter((a) => a.result !== 'not-run')
        .flatMap((a) => a.nodes.map((n) => factsKey(c.cluster, n))),
    ),
  );
  const model = run.validated.model;
  // A run stopped half-way is not reported (the next one resumes and reports).
  if (!touched.size || !model || result.interrupted) return run.facts;
  const applied = await new StateStore(cfg.stateDir).readApplied();
  const targets = factsTargets(model, { applied }).filter((t) =>
    touched.has(factsKey(t.cluster, t.node)),
  );
  const facts = new Map(run.facts);
  if (!targets.length) return facts;
  try {
    for (const [key, f] of await read(targets)) facts.set(key, f);
  } catch (err: unknown) {
    // What the nodes had before the apply is no longer known to be true: show nothing for them.
    log.warn({ err: messageOf(err) }, 'could not read the nodes again after the apply');
    for (const t of targets) facts.delete(factsKey(t.cluster, t.node));
  }
  return facts;
}

async function applyWith(
  plan: Plan,
  cfg: Config,
  run: PlanRun,
  lock: StateLock,
  opts: ApplyRunOptions,
  openSsh: () => Promise<OpenSsh>,
): Promise<ApplyResult> {
  const store = new StateStore(cfg.stateDir);
  const ports = opts.ports ?? (await portsFor(cfg, run, store, opts, await openSsh()));
  return await applyPlan(plan, {
    store,
    verifyLock: () => lock.verify(),
    log: opts.log,
    revision: siteDigest(run.validated.loaded.files),
    signal: opts.signal,
    access: ports.access,
    installer: ports.installer,
    publish: ports.publish,
    packages: ports.packages,
  });
}

/** The real ports the configuration names: SSH, an installer process or Job, publishing. */
async function portsFor(
  cfg: Config,
  run: PlanRun,
  store: StateStore,
  opts: ApplyRunOptions,
  ssh: OpenSsh,
): Promise<Omit<ApplyPorts, 'facts'>> {
  const site = run.validated.model?.site?.spec ?? {};
  const { keys, options: sshOptions, pool } = ssh;
  // Exactly what the plan (and its hash) says bpa will run.
  const settings = run.plan?.settings ?? executionSettings(cfg, site);
  const commands = settings.installer.commands;
  const kubesprayDir = kubesprayDirOf(cfg);
  await checkCommands(commands, {
    paths: run.plan ? installerPaths(run.plan) : [],
    kubesprayDir,
    checkoutHere: cfg.installerMode !== 'job',
  });
  const bootstrapKube = await kubeConfigFor(cfg, opts.env);
  if (cfg.installerMode === 'job' && !bootstrapKube) {
    throw new StalledError(
      'INSTALLER_MODE_UNSUPPORTED',
      'installer mode "job" needs the bootstrap cluster: give --bootstrap-kubeconfig, or run bpa in the cluster',
    );
  }
  if (cfg.installerMode === 'job' && !cfg.installerImage) {
    throw new StalledError(
      'INSTALLER_IMAGE_MISSING',
      'installer mode "job" needs an installer image (Site spec.installer.image or --installer-image)',
    );
  }
  const publish: PublishPort = bootstrapKube
    ? new (await import('./publish-kube.js')).KubePublisher(bootstrapKube, cfg.namespace)
    : new FilePublisher((c) => store.clusterDir(c));
  const JobInstaller =
    cfg.installerMode === 'job'
      ? (await import('./installer/job-port.js')).JobInstaller
      : undefined;
  return {
    access: new SshAccess({
      pool,
      ssh: sshOptions,
      user: cfg.sshUser,
      port: cfg.sshPort,
      publicKeyPath: keys.publicKey,
      bootstrap: bootstrapCredentials(cfg, site, bootstrapKube),
      knownHostsFile: (c) => join(store.clusterDir(c), KNOWN_HOSTS_FILE),
      maxParallelHosts: cfg.maxParallelHosts,
      log: opts.log,
    }),
    installer:
      JobInstaller && bootstrapKube
        ? new JobInstaller({
            kc: bootstrapKube,
            namespace: cfg.namespace,
            image: cfg.installerImage,
            commands,
            kubesprayDir,
            user: cfg.sshUser,
            timeoutSeconds: cfg.installerTimeout,
            stateClaim: cfg.stateClaim,
            sshKeySecret: cfg.sshKeySecret,
            onLine: opts.onLine,
            signal: opts.signal,
          })
        : new LocalInstaller({
            commands,
            timeoutMs: cfg.installerTimeout * 1000,
            privateKey: keys.privateKey,
            user: cfg.sshUser,
            kubesprayDir,
            log: opts.log,
            onLine: opts.onLine,
            signal: opts.signal,
          }),
    publish,
    packages: new SshPackages({
      pool,
      user: cfg.sshUser,
      port: cfg.sshPort,
      maxParallelHosts: cfg.maxParallelHosts,
      packageMirror: settings.packageMirror,
      timeoutMs: 15 * 60_000,
      log: opts.log,
    }),
  };
}

const PATH_OF: Partial<Record<Plan['clusters'][number]['actions'][number]['kind'], InstallerPath>> =
  {
    'provision-cluster': 'provision',
    'upgrade-cluster': 'upgrade',
    'add-nodes': 'scale',
    'remove-nodes': 'remove',
    'install-plugins': 'addon',
  };

/** The installer paths a plan runs. */
function installerPaths(plan: Plan): InstallerPath[] {
  const paths = new Set<InstallerPath>();
  for (const c of plan.clusters)
    for (const a of c.actions) {
      const p = PATH_OF[a.kind];
      if (p) paths.add(p);
    }
  return [...paths];
}

/** The bootstrap cluster's client config, when there is one (the client library loads only then). */
async function kubeConfigFor(cfg: Config, env: NodeJS.ProcessEnv): Promise<KubeConfig | undefined> {
  if (!cfg.bootstrapKubeconfig && !env['KUBERNETES_SERVICE_HOST']) return undefined;
  const { loadKubeConfig } = await import('../kube/kubeconfig.js');
  return loadKubeConfig({ file: cfg.bootstrapKubeconfig, env, what: 'the bootstrap cluster' });
}

/**
 * Where the nodes' default credentials come from: a file (--bootstrap-credentials), else the
 * Site's `ssh.bootstrapCredentialsSecret` read from the bootstrap cluster. Never the repository.
 */
function bootstrapCredentials(
  cfg: Config,
  site: Record<string, unknown>,
  kc: KubeConfig | undefined,
): (() => Promise<BootstrapCredentials>) | undefined {
  if (cfg.bootstrapCredentials) return () => readCredentialsFile(cfg.bootstrapCredentials);
  const secret = (site['ssh'] as { bootstrapCredentialsSecret?: unknown } | undefined)
    ?.bootstrapCredentialsSecret;
  if (typeof secret === 'string' && kc)
    return () => readSecretCredentials(kc, cfg.namespace, secret);
  return undefined;
}
