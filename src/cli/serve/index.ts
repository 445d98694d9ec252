import type { Command } from '@commander-js/extra-typings';
import { describeSource } from '../../config/options.js';
import { UsageError } from '../../util/errors.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { outputOption } from '../output-option.js';
import { humanLogStream } from '../output/human-log.js';
import { APPLY_OPTIONS, REPO_OPTIONS } from '../option-sets.js';

/** `bpa serve`: follow a repository (or watch a directory) and reconcile until SIGTERM. */
export function registerServe(program: Command, io: Io, env: NodeJS.ProcessEnv): void {
  const cmd = program
    .command('serve')
    .description(
      'run the controller: follow a site repository (--repo), watch a directory (--watch DIR) or the bpa objects of a cluster (--source kubernetes), reconcile on an interval and on webhooks, serve /healthz /readyz /metrics /api/v1/status',
    )
    .option('--watch <dir>', 'watch a local site directory instead of a repository (development)')
    .addOption(outputOption(['json', 'text']));
  const resolveConfig = addConfigOptions(cmd, [
    ...APPLY_OPTIONS,
    ...REPO_OPTIONS,
    'interval',
    'listen',
    'webhookSecretFile',
    'leaderElect',
    'kubeStatus',
    'uiTokenFile',
    'uiInsecureNoToken',
    'uiUrl',
    'notifyUrls',
    'notifyUrlFile',
    'notifySecretFile',
    'artifactsTokenFile',
    'artifactsMaxMib',
    'apiTokenFile',
    'source',
    'watchNamespaces',
  ]);
  cmd.action(async (opts) => {
    const cfg = resolveConfig(opts, undefined, env);
    const watchDir = opts.watch;
    if (cfg.source === 'kubernetes') {
      const given =
        watchDir !== undefined
          ? '--watch DIR'
          : cfg.repoUrl
            ? 'a repository (--repo, BPA_REPO_URL)'
            : '';
      if (given)
        throw new UsageError(
          `--source kubernetes takes the site from the cluster's objects: give no ${given} with it`,
        );
      if (cfg.requireApprovedPlan)
        throw new UsageError(
          '--require-approved-plan needs a repository: approvals are trailers of its commits, which operator mode (--source kubernetes) does not read',
        );
    }
    if (watchDir !== undefined && cfg.repoUrl)
      throw new UsageError(
        `give either --watch DIR or a repository (--repo, BPA_REPO_URL), not both: the repository comes from ${describeSource('repoUrl', cfg.sources.repoUrl ?? 'default')}`,
      );
    if (watchDir !== undefined && cfg.requireApprovedPlan)
      throw new UsageError(
        '--require-approved-plan needs a repository (--repo): approvals are trailers of its commits, which a watched directory does not have',
      );
    if (watchDir === undefined && !cfg.repoUrl && cfg.source !== 'kubernetes')
      throw new UsageError(
        'give a repository to follow (--repo URL), a directory (--watch DIR), or --source kubernetes',
      );
    // The controller's output is its log on stderr: JSON lines, or lines for a person (-o text).
    const { createLogger } = await import('../../util/log.js');
    const log =
      opts.output === 'text'
        ? createLogger(
            cfg.logLevel,
            humanLogStream((line) => io.err(line)),
          )
        : createLogger(cfg.logLevel);
    // The controller's modules (Kubernetes client, metrics, file watching) load only here.
    const { serve } = await import('../../serve/run.js');
    const server = await serve({
      configFor: (site) => resolveConfig(opts, site, env),
      env,
      log,
      watchDir,
      onLine: (line) => log.info({ installer: true }, line),
    });
    await new Promise<void>((resolve) => {
      const stop = (signal: string): void => {
        log.info({ signal }, 'shutting down');
        process.off('SIGTERM', onTerm);
        process.off('SIGINT', onInt);
        void server.stop().then(resolve, resolve);
      };
      const onTerm = (): void => stop('SIGTERM');
      const onInt = (): void => stop('SIGINT');
      process.on('SIGTERM', onTerm);
      process.on('SIGINT', onInt);
    });
    io.exit(EXIT.ok);
  });
}
