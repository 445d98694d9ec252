import { hostname } from 'node:os';
import { requireKubeConfig } from '../kube/kubeconfig.js';
import { watch } from 'chokidar';
import { parseListen, type ConfigFor } from '../config/options.js';
import { sourceFor } from '../reconcile/from-config.js';
import { Reconciler } from '../reconcile/reconciler.js';
import { StalledError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { parseDuration } from '../util/duration.js';
import { readSecretFile } from './auth.js';
import { startHttpServer, type HttpServer } from './http.js';
import { LeaderElector } from './leader.js';
import { BpaMetrics } from './metrics.js';
import { Scheduler } from './scheduler.js';
import { suspendRoutes } from './suspend-api.js';

export interface ServeOptions {
  /** The settings, resolved with the Site document's spec once it is read. */
  configFor: ConfigFor;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** A local site directory watched for changes (development), instead of a repository. */
  watchDir?: string;
  onLine?: (line: string) => void;
}

export interface RunningServer {
  url: string;
  /** Graceful stop: no new reconcile; the running one finishes or journals its step. */
  stop(): Promise<void>;
}

/** `bpa serve`: the controller loop with its HTTP interface. */
export async function serve(opts: ServeOptions): Promise<RunningServer> {
  const cfg = opts.configFor(undefined);
  const log = opts.log;
  const source = await sourceFor(cfg, opts.env, opts.watchDir);
  const reconciler = new Reconciler({
    source,
    configFor: opts.configFor,
    env: opts.env,
    log,
    resyncIntervalMs: parseDuration(cfg.resyncInterval),
    onLine: opts.onLine,
  });
  const metrics = new BpaMetrics();
  let elector: LeaderElector | undefined;
  if (cfg.leaderElect) {
    const kc = requireKubeConfig(
      { file: cfg.bootstrapKubeconfig, env: opts.env, what: 'leader election (--leader-elect)' },
      'give --bootstrap-kubeconfig, or run bpa in the cluster',
    );
    elector = new LeaderElector(kc, {
      namespace: cfg.namespace,
      name: 'bpa-leader',
      identity: `${hostname()}-${process.pid}`,
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
      logger: log,
    });
  }
  const intervalMs = parseDuration(cfg.interval);
  const scheduler = new Scheduler({
    reconcile: (trigger, signal) => reconciler.reconcile(trigger, signal),
    intervalMs,
    isLeader: elector ? () => elector?.isLeader() ?? false : undefined,
    onRun: (r) => metrics.recordRun(r),
    logger: log,
  });
  const webhookSecret = cfg.webhookSecretFile
    ? await readSecretFile(cfg.webhookSecretFile, 'the webhook secret')
    : undefined;
  const apiToken = cfg.apiTokenFile
    ? await readSecretFile(cfg.apiTokenFile, 'the API token')
    : undefined;
  const routes = apiToken
    ? suspendRoutes({
        token: apiToken,
        stateDir: cfg.stateDir,
        trigger: () => scheduler.trigger('api'),
        log,
      })
    : [];
  let http: HttpServer;
  try {
    http = await startHttpServer({
      listen: listenAddress(cfg.listen),
      scheduler,
      metrics,
      webhookSecret: webhookSecret || undefined,
      leader: elector,
      log,
      maxRunMs: Math.max(3_600_000, cfg.installerTimeout * 1000 * 2),
      routes,
    });
  } catch (err: unknown) {
    throw new StalledError(
      'LISTEN_FAILED',
      `cannot listen on ${cfg.listen}: ${(err as { code?: string }).code ?? String(err)}`,
    );
  }
  const electing = elector?.run({
    onStartedLeading: () => scheduler.leadershipChanged(),
    onStoppedLeading: () => scheduler.leadershipChanged(),
  });
  const watcher = opts.watchDir
    ? watch(opts.watchDir, {
        ignoreInitial: true,
        ignored: (p: string) => /(^|\/)(status|\.git)(\/|$)/.test(p.slice(opts.watchDir!.length)),
      })
    : undefined;
  let debounce: NodeJS.Timeout | undefined;
  watcher?.on('all', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => scheduler.trigger('watch'), 300);
  });
  scheduler.start();
  log.info(
    {
      source: source.describe(),
      interval: cfg.interval,
      url: http.url,
      leaderElect: cfg.leaderElect,
    },
    'bpa serve started',
  );
  return {
    url: http.url,
    async stop() {
      clearTimeout(debounce);
      await watcher?.close();
      const { timedOut } = await scheduler.stop();
      if (timedOut) log.warn('the running reconcile did not stop within the grace period');
      await http.close();
      await elector?.stop();
      await electing?.catch(() => undefined);
      log.info('bpa serve stopped');
    },
  };
}

/** The configured listen address (checked when the configuration was read). */
function listenAddress(text: string): { host: string; port: number } {
  const addr = parseListen(text);
  if (!addr)
    throw new StalledError(
      'LISTEN_INVALID',
      `--listen ${JSON.stringify(text)}: expected [host]:port`,
    );
  return addr;
}
