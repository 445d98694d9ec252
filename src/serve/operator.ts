/**
 * Operator mode (`bpa serve --source kubernetes`): the site is read from the bootstrap
 * cluster's bpa objects (source/kubernetes-source.ts); a change of them, of a BareMetalHost
 * the plan reads, or of a lease file starts a reconcile, coalesced by the scheduler exactly
 * as webhooks are.
 */
import { resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Config } from '../config/options.js';
import { loadKubeConfig, requireKubeConfig } from '../kube/kubeconfig.js';
import { KubernetesSource } from '../source/kubernetes-source.js';
import type { Logger } from '../util/log.js';

export interface OperatorSource {
  source: KubernetesSource;
  /** Starts the informers and the lease files' watch; resolves once the site is listed. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The namespaces whose objects are the site: --watch-namespace, else the bootstrap namespace. */
export function watchedNamespaces(cfg: Config): string[] {
  return cfg.watchNamespaces.length ? [...new Set(cfg.watchNamespaces)] : [cfg.namespace];
}

/**
 * Calls `fire` once a burst of calls has been quiet for `quietMs`, and at the latest `maxMs`
 * after its first: a burst of changes (kubectl apply of a whole site, Flux applying a commit)
 * is one trigger, and the scheduler coalesces triggers with a reconcile in flight.
 */
export function coalesce(
  fire: () => void,
  quietMs = 150,
  maxMs = 500,
): { call(): void; cancel(): void } {
  let quiet: NodeJS.Timeout | undefined;
  let latest: NodeJS.Timeout | undefined;
  const run = (): void => {
    clearTimeout(quiet);
    clearTimeout(latest);
    quiet = latest = undefined;
    fire();
  };
  return {
    call(): void {
      clearTimeout(quiet);
      quiet = setTimeout(run, quietMs);
      latest ??= setTimeout(run, maxMs);
    },
    cancel(): void {
      clearTimeout(quiet);
      clearTimeout(latest);
    },
  };
}

export function operatorSource(
  cfg: Config,
  env: NodeJS.ProcessEnv,
  log: Logger,
  trigger: () => void,
): OperatorSource {
  const burst = coalesce(trigger);
  const onChange = (): void => burst.call();
  const kubeConfig = requireKubeConfig(
    { file: cfg.bootstrapKubeconfig, env, what: 'operator mode (--source kubernetes)' },
    'give --bootstrap-kubeconfig, or run bpa in the cluster',
  );
  // The hosts are watched where the inventory lists them (--kubeconfig, KUBECONFIG), else in
  // the bootstrap cluster.
  const hostsConfig =
    loadKubeConfig({ file: cfg.kubeconfig, env, kubeconfigEnv: true, what: 'the inventory' }) ??
    kubeConfig;
  const leaseFiles = cfg.leases.map((p) => resolve(p));
  const source = new KubernetesSource({
    kubeConfig,
    namespaces: watchedNamespaces(cfg),
    stateDir: cfg.stateDir,
    hosts: { kubeConfig: hostsConfig, namespaces: cfg.namespaces },
    leaseFiles,
    onChange,
    log: log.child({ component: 'kubernetes-source' }),
  });
  let watcher: FSWatcher | undefined;
  return {
    source,
    async start() {
      if (leaseFiles.length) {
        watcher = watch(leaseFiles, { ignoreInitial: true });
        watcher.on('all', () => onChange());
      }
      await source.start();
    },
    async stop() {
      burst.cancel();
      await watcher?.close();
      await source.stop();
    },
  };
}
