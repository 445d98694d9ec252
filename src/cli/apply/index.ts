import type { Command } from 'commander';
import type { runApply } from '../../apply/run.js';
import { parseDuration } from '../../util/duration.js';
import { planHasChanges } from '../../plan/index.js';
import { BpaError } from '../../util/errors.js';
import { hasErrors } from '../../util/problem.js';
import { createLogger } from '../../util/log.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { formatApplyResult } from '../output/apply.js';
import { humanLogStream } from '../output/human-log.js';
import { formatPlan } from '../output/plan.js';
import { displayPath, formatText } from '../output/problems.js';

export const APPLY_OPTIONS = [
  'stateDir',
  'flavour',
  'prune',
  'inventoryDir',
  'kubeconfig',
  'namespaces',
  'leases',
  'ipOrder',
  'maxParallelHosts',
  'installerMode',
  'installerCommand',
  'scaleCommand',
  'addonCommand',
  'removeCommand',
  'installerTimeout',
  'installerImage',
  'sshUser',
  'sshPort',
  'sshKey',
  'bootstrapCredentials',
  'bootstrapKubeconfig',
  'namespace',
  'stateClaim',
  'sshKeySecret',
  'allowSiteCommands',
  'packageMirrors',
] as const;

/**
 * `bpa apply [PATH]` and `bpa reconcile --once [PATH]`: plan, then apply, journaled. A run
 * that was interrupted (killed, a host down, an installer failure) is resumed by running
 * again: steps already done are skipped.
 */
export function registerApply(
  program: Command,
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): void {
  const apply = program
    .command('apply')
    .description(
      'apply the current plan of a site directory (exit 0 applied or nothing to do, 1 failed or refused)',
    )
    .argument('[path]', 'site directory', '.');
  const applyConfig = addConfigOptions(apply, [...APPLY_OPTIONS, 'planHash']);
  apply.option('--log-level <level>', 'log level (trace, debug, info, warn, error)', 'info');
  apply.action((path: string, opts: Record<string, unknown>) =>
    run(path, opts, (site) => applyConfig(opts, site, env), io, env, now),
  );

  const reconcile = program
    .command('reconcile')
    .description(
      'one reconcile: validate, observe, plan and apply a site directory, or (with --repo) a branch of a site repository, then commit status reports back to it',
    )
    .argument('[path]', 'site directory (without --repo)', '.');
  reconcile.option('--once', 'run once and exit (the controller loop is `bpa serve`)');
  const reconcileConfig = addConfigOptions(reconcile, [
    ...APPLY_OPTIONS,
    'repoUrl',
    'ref',
    'path',
    'statusBranch',
    'gitUsername',
    'gitTokenFile',
    'resyncInterval',
    'verifySignatures',
    'trustedKeys',
    'allowedSigners',
  ]);
  reconcile.option('--log-level <level>', 'log level (trace, debug, info, warn, error)', 'info');
  reconcile.action((path: string, opts: Record<string, unknown>) => {
    if (!opts['once']) {
      io.err('bpa reconcile: only --once is supported here; for a controller loop use bpa serve\n');
      io.exit(EXIT.usage);
      return;
    }
    const config = (
      site: Record<string, unknown> | undefined,
    ): ReturnType<typeof reconcileConfig> => reconcileConfig(opts, site, env);
    if (config(undefined).repoUrl) return reconcileRepo(opts, config, io, env, now);
    return run(path, opts, config, io, env, now);
  });
}

/** `bpa reconcile --once --repo URL`: one reconcile of a repository, reports committed back. */
async function reconcileRepo(
  opts: Record<string, unknown>,
  config: Parameters<typeof runApply>[1],
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): Promise<void> {
  const log = terminalLogger(opts, io);
  const cfg = config(undefined);
  try {
    // Heavy modules (SSH, git, installers) load only for the commands that use them.
    const [{ Reconciler }, { sourceFor }] = await Promise.all([
      import('../../reconcile/index.js'),
      import('../../reconcile/from-config.js'),
    ]);
    const reconciler = new Reconciler({
      source: await sourceFor(cfg, env, undefined),
      stateDir: cfg.stateDir,
      config,
      env,
      log,
      now,
      resyncIntervalMs: parseDuration(cfg.resyncInterval),
      onLine: (line) => io.out(`${line}\n`),
    });
    // Like a poll: unchanged input (a status-only commit, a commit outside the site) is skipped.
    const summary = await reconciler.reconcile('interval');
    io.out(
      `${summary.result}${summary.revision ? ` ${summary.revision.slice(0, 12)}` : ''}${summary.error ? `: ${summary.error.code}: ${summary.error.message}` : ''}\n`,
    );
    for (const c of summary.clusters) io.out(`  ${c.name}: ${c.phase}\n`);
    io.exit(
      summary.result === 'applied' || summary.result === 'unchanged' || summary.result === 'skipped'
        ? EXIT.ok
        : EXIT.invalid,
    );
  } catch (err: unknown) {
    if (!(err instanceof BpaError)) throw err;
    io.err(`bpa: ${err.code}: ${err.message}\n`);
    io.exit(EXIT.invalid);
  }
}

/** Log lines for a person at a terminal, on stderr, at the --log-level asked for. */
function terminalLogger(opts: Record<string, unknown>, io: Io): ReturnType<typeof createLogger> {
  return createLogger(
    String(opts['logLevel'] ?? 'info'),
    humanLogStream((s) => io.err(s)),
  );
}

async function run(
  path: string,
  opts: Record<string, unknown>,
  config: Parameters<typeof runApply>[1],
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): Promise<void> {
  const log = terminalLogger(opts, io);
  let outcome;
  try {
    const { runApply } = await import('../../apply/run.js');
    outcome = await runApply(path, config, {
      env,
      now: now(),
      log,
      onLine: (line) => io.out(`${line}\n`),
      onPlan: (planRun) => {
        io.out(
          formatText(
            planRun.problems.map((p) => ({
              ...p,
              file: displayPath(planRun.validated.root, p.file),
            })),
          ),
        );
        if (planRun.plan) io.out(formatPlan(planRun.plan) + '\n');
      },
    });
  } catch (err: unknown) {
    if (err instanceof BpaError) {
      io.err(`bpa: ${err.code}: ${err.message}\n`);
      io.exit(EXIT.invalid);
      return;
    }
    throw err;
  }
  if ('usage' in outcome) {
    io.err(`bpa: ${outcome.usage}\n`);
    io.exit(EXIT.usage);
    return;
  }
  const { run: planRun } = outcome;
  if (outcome.refused) {
    io.err(`bpa: nothing applied: ${outcome.refused}\n`);
    io.exit(EXIT.invalid);
    return;
  }
  const blocked = hasErrors(planRun.problems);
  if (!outcome.result || !planRun.plan || !planHasChanges(planRun.plan)) {
    io.exit(blocked ? EXIT.invalid : EXIT.ok);
    return;
  }
  io.out(formatApplyResult(outcome.result));
  io.exit(outcome.result.ok && !blocked ? EXIT.ok : EXIT.invalid);
}
