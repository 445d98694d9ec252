import { hostname } from 'node:os';
import { loadKubeConfig, requireKubeConfig } from '../kube/kubeconfig.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeStatusWriter } from '../report/kube/writer.js';
import { watchReconcileRequests } from './reconcile-requests.js';
import { watch } from 'chokidar';
import { NOTIFY_URL, parseListen, type ConfigFor } from '../config/options.js';
import { sourceFor } from '../reconcile/from-config.js';
import { knownClusters } from '../reconcile/known-clusters.js';
import { Reconciler } from '../reconcile/reconciler.js';
import { checkStateDir } from '../state/dir.js';
import { StalledError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { parseDuration } from '../util/duration.js';
import { readSecretFile } from './auth.js';
import { GuessLimiter } from './guess-limit.js';
import { startHttpServer, type HttpServer } from './http.js';
import { LeaderElector } from './leader.js';
import { BpaMetrics } from './metrics.js';
import { Scheduler } from './scheduler.js';
import { Notifier } from './notify/notifier.js';
import { LiveBus } from './ui/live.js';
import { UiModel } from './ui/model.js';
import { loginRoutes, uiAccess, uiGuard } from './ui/access.js';
import { statusPageRoutes } from './ui/routes.js';
import { readLogTail } from '../state/logs.js';
import { startArtifacts } from './artifacts/start.js';
import { suspendRoutes } from './suspend-api.js';
import { operatorSource } from './operator.js';
import type { SiteSource } from '../source/site-source.js';

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
  await checkStateDir(cfg.stateDir);
  // Operator mode: changes of the cluster's objects ask the scheduler (made below) for a run.
  let onChange: () => void = () => undefined;
  const operator =
    cfg.source === 'kubernetes' ? operatorSource(cfg, opts.env, log, () => onChange()) : undefined;
  const source: SiteSource = operator?.source ?? (await sourceFor(cfg, opts.env, opts.watchDir));
  // The status page's live feed: every installer line, already redacted by the reconciler.
  const live = new LiveBus();
  const bootstrap = kubeStatusCluster(cfg, opts.env, log);
  const kubeStatus = bootstrap
    ? new KubeStatusWriter(bootstrap, cfg.namespace, log, {
        instance: `${hostname()}-${process.pid}`,
        // With the bootstrap cluster, kubeconfigs are published there (apply/ports-for.ts).
        kubeconfigSecrets: true,
        // Operator mode: the objects are the site; bpa writes only their status.
        statusOnly: cfg.source === 'kubernetes',
      })
    : undefined;
  const reconciler = new Reconciler({
    ...(kubeStatus ? { kubeStatus } : {}),
    source,
    configFor: opts.configFor,
    env: opts.env,
    log,
    resyncIntervalMs: parseDuration(cfg.resyncInterval),
    onLine: (line) => {
      opts.onLine?.(line);
      live.line(line);
    },
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
  // Events link to the page: at --ui-url, else at the address the server gets.
  const served = { url: '' };
  const notifier = await notifierFor(cfg, () => cfg.uiUrl || `${served.url}/`, log);
  const scheduler = new Scheduler({
    reconcile: (trigger, signal) => reconciler.reconcile(trigger, signal),
    intervalMs,
    isLeader: elector ? () => elector?.isLeader() ?? false : undefined,
    onRun: (r) => {
      metrics.recordRun(r);
      notifier?.observe(r.summary);
    },
    logger: log,
  });
  onChange = () => void scheduler.trigger('kubernetes');
  const webhookSecret = cfg.webhookSecretFile
    ? await readSecretFile(cfg.webhookSecretFile, 'the webhook secret')
    : undefined;
  const ui = new UiModel({
    scheduler,
    bus: live,
    ...(source.history ? { history: (n: number) => source.history!(n) } : {}),
  });
  const uiToken = cfg.uiTokenFile
    ? await readSecretFile(cfg.uiTokenFile, 'the status page token')
    : undefined;
  const access = uiAccess({
    listenHost: listenAddress(cfg.listen).host,
    token: uiToken,
    insecureNoToken: cfg.uiInsecureNoToken,
  });
  if (access.mode === 'off') log.warn({ reason: access.reason }, 'the status page is off');
  // One limit per secret: a guess at one token is no guess at another.
  const limitFor = (secret: 'ui' | 'api' | 'artifacts' | 'webhook'): GuessLimiter =>
    new GuessLimiter({
      onBlock: (b) =>
        log.warn(
          { remote: b.client, scope: b.scope, seconds: b.seconds, secret },
          b.scope === 'client'
            ? 'too many wrong tokens from one address: its checks of this token wait'
            : 'too many wrong tokens from many addresses: checks of this token wait, but from addresses that gave it in the last day',
        ),
    });
  const guesses = {
    ui: limitFor('ui'),
    api: limitFor('api'),
    artifacts: limitFor('artifacts'),
    webhook: limitFor('webhook'),
  };
  const artifacts = await startArtifacts(cfg, log, guesses.artifacts);
  const apiToken = cfg.apiTokenFile
    ? await readSecretFile(cfg.apiTokenFile, 'the API token')
    : undefined;
  const suspendApi = apiToken
    ? suspendRoutes({
        token: apiToken,
        limiter: guesses.api,
        stateDir: cfg.stateDir,
        // The site as read, else as the state directory knows it: a standby replica and a
        // restart during a long first apply check names too.
        clusters: () => knownClusters(reconciler.clusterNames(), cfg.stateDir),
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
      webhookLimiter: guesses.webhook,
      leader: elector,
      ...(operator ? { notReady: () => operator.source.notReady() } : {}),
      log,
      maxRunMs: Math.max(3_600_000, cfg.installerTimeout * 1000 * 2),
      routes: [
        ...statusPageRoutes({
          model: ui,
          bus: live,
          guard: uiGuard(access, guesses.ui),
          logs: (id) => readLogTail(cfg.stateDir, id),
          extra: loginRoutes(access, guesses.ui),
          loggedIn: access.mode === 'token',
        }),
        ...artifacts.routes,
        ...suspendApi,
      ],
      // An OS image upload takes minutes; a stalled one is cut off by its idle timeout.
      ...(artifacts.uploads ? { requestTimeoutMs: 6 * 3_600_000 } : {}),
    });
  } catch (err: unknown) {
    await artifacts.close();
    throw new StalledError(
      'LISTEN_FAILED',
      `cannot listen on ${cfg.listen}: ${(err as { code?: string }).code ?? String(err)}`,
    );
  }
  served.url = http.url;
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
  const stopRequests = bootstrap
    ? watchReconcileRequests(bootstrap, cfg.namespace, () => scheduler.trigger('requested'), log)
    : undefined;
  // The first reconcile sees the whole site, not the part listed so far.
  await operator?.start();
  scheduler.start();
  ui.start();
  log.info(
    {
      source: source.describe(),
      interval: cfg.interval,
      url: http.url,
      leaderElect: cfg.leaderElect,
      kubeStatus: bootstrap !== undefined,
    },
    'bpa serve started',
  );
  return {
    url: http.url,
    async stop() {
      clearTimeout(debounce);
      stopRequests?.();
      await watcher?.close();
      const { timedOut } = await scheduler.stop();
      ui.stop();
      live.end();
      if (timedOut) log.warn('the running reconcile did not stop within the grace period');
      await notifier?.stop();
      await http.close();
      await artifacts.close();
      await operator?.stop();
      await elector?.stop();
      await electing?.catch(() => undefined);
      log.info('bpa serve stopped');
    },
  };
}

/**
 * The bootstrap cluster --kube-status writes to: on by default when bpa has one (a
 * --bootstrap-kubeconfig, or a pod's service account); turned on explicitly without one, it
 * is NO_KUBECONFIG.
 */
function kubeStatusCluster(
  cfg: ReturnType<ConfigFor>,
  env: NodeJS.ProcessEnv,
  log: Logger,
): KubeConfig | undefined {
  if (!cfg.kubeStatus) return undefined;
  const what = 'the status of the site in the bootstrap cluster (--kube-status)';
  const explicit = cfg.sources.kubeStatus === 'flag' || cfg.sources.kubeStatus === 'env';
  if (explicit)
    return requireKubeConfig(
      { file: cfg.bootstrapKubeconfig, env, what },
      'give --bootstrap-kubeconfig, run bpa in the cluster, or turn it off (--no-kube-status)',
    );
  const kc = loadKubeConfig({ file: cfg.bootstrapKubeconfig, env, what });
  if (!kc) log.debug('no bootstrap cluster: the site is not mirrored there (--kube-status)');
  return kc;
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

/** The notifier of --notify-url / --notify-url-file, or none without receivers. */
async function notifierFor(
  cfg: ReturnType<ConfigFor>,
  pageUrl: () => string,
  log: Logger,
): Promise<Notifier | undefined> {
  const urls = [...cfg.notifyUrls];
  if (cfg.notifyUrlFile) {
    const text = await readSecretFile(cfg.notifyUrlFile, 'notification receiver URLs');
    text.split('\n').forEach((raw, i) => {
      const line = raw.trim();
      if (!line || line.startsWith('#')) return;
      // The line itself may be a secret (a Slack webhook): it is never repeated in the error.
      if (!NOTIFY_URL.re.test(line))
        throw new StalledError(
          'CONFIG_INVALID',
          `${cfg.notifyUrlFile}:${i + 1}: not ${NOTIFY_URL.text}`,
        );
      urls.push(line);
    });
  }
  if (!urls.length) return undefined;
  const secret = cfg.notifySecretFile
    ? await readSecretFile(cfg.notifySecretFile, 'the notification signing secret')
    : undefined;
  return new Notifier({
    urls,
    ...(secret ? { secret } : {}),
    pageUrl,
    log,
  });
}
