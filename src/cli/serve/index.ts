import type { Command } from 'commander';
import { BpaError } from '../../util/errors.js';
import { createLogger } from '../../util/log.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { APPLY_OPTIONS } from '../apply/index.js';

/** `bpa serve`: follow a repository (or watch a directory) and reconcile until SIGTERM. */
export function registerServe(program: Command, io: Io, env: NodeJS.ProcessEnv): void {
  const cmd = program
    .command('serve')
    .description(
      'run the controller: follow a site repository (--repo) or watch a directory (--watch DIR), reconcile on an interval and on webhooks, serve /healthz /readyz /metrics /api/v1/status',
    )
    .option('--watch <dir>', 'watch a local site directory instead of a repository (development)')
    .option('--log-level <level>', 'log level', 'info');
  const config = addConfigOptions(cmd, [
    ...APPLY_OPTIONS,
    'repoUrl',
    'ref',
    'path',
    'statusBranch',
    'gitUsername',
    'gitTokenFile',
    'interval',
    'resyncInterval',
    'listen',
    'webhookSecretFile',
    'leaderElect',
    'verifySignatures',
    'trustedKeys',
    'allowedSigners',
  ]);
  cmd.action(async (opts: Record<string, unknown>) => {
    const log = createLogger(String(opts['logLevel'] ?? 'info'));
    let server;
    try {
      // The controller's modules (Kubernetes client, metrics, file watching) load only here.
      const { serve } = await import('../../serve/run.js');
      server = await serve({
        config: (site) => config(opts, site, env),
        env,
        log,
        watchDir: typeof opts['watch'] === 'string' ? opts['watch'] : undefined,
        onLine: (line) => log.info({ installer: true }, line),
      });
    } catch (err: unknown) {
      if (!(err instanceof BpaError)) throw err;
      io.err(`bpa serve: ${err.code}: ${err.message}\n`);
      io.exit(EXIT.invalid);
      return;
    }
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
