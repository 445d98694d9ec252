import type { Command } from '@commander-js/extra-typings';
import type { Config, ConfigFor } from '../../config/options.js';
import { createRun, type RunContext } from '../../reconcile/context.js';
import { runSteps } from '../../reconcile/steps.js';
import { pluralize } from '../../util/pluralize.js';
import { parseDuration } from '../../util/duration.js';
import { planHasChanges } from '../../plan/index.js';
import { StalledError, UsageError } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { APPLY_OPTIONS, REPO_OPTIONS } from '../option-sets.js';
import { formatApplyResult } from '../output/apply.js';
import { humanLogStream } from '../output/human-log.js';
import { formatPlan } from '../output/plan.js';
import { displayPath, formatText, problemsJson } from '../output/problems.js';
import { outputOption } from '../output-option.js';

/** The settings of apply, reconcile and serve (src/cli/option-sets.ts). */
export { APPLY_OPTIONS };

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
    .argument('[path]', 'site directory', '.')
    .addOption(outputOption(OUTPUT_FORMATS));
  const resolveApplyConfig = addConfigOptions(apply, [
    ...APPLY_OPTIONS,
    'planHash',
    'ignoreWindows',
  ]);
  apply.action((path, opts) =>
    run(path, (site) => resolveApplyConfig(opts, site, env), opts.output, io, env, now),
  );

  const reconcile = program
    .command('reconcile')
    .description(
      'one reconcile: validate, observe, plan and apply a site directory, or (with --repo) a branch of a site repository, then commit status reports back to it',
    )
    .argument('[path]', 'site directory (without --repo; default: the current directory)')
    .option('--once', 'run once and exit (the controller loop is `bpa serve`)')
    .option(
      '--now',
      'ask the running bpa serve for a reconcile now: sets reconcile.bpa.akraino.org/requestedAt on the Site object in the bootstrap cluster (--bootstrap-kubeconfig, --bootstrap-namespace)',
    )
    .addOption(outputOption(OUTPUT_FORMATS));
  const resolveReconcileConfig = addConfigOptions(reconcile, [...APPLY_OPTIONS, ...REPO_OPTIONS]);
  reconcile.action((path, opts) => {
    if (opts.now) {
      if (opts.once || path !== undefined)
        throw new UsageError(
          '--now asks bpa serve for a reconcile: give it without --once or a path',
        );
      return requestNow(resolveReconcileConfig(opts, undefined, env), opts.output, io, env, now);
    }
    if (!opts.once)
      throw new UsageError('only --once is supported here; for a controller loop use bpa serve');
    const configFor: ConfigFor = (site) => resolveReconcileConfig(opts, site, env);
    const cfg = configFor(undefined);
    if (cfg.repoUrl && path !== undefined)
      throw new UsageError(
        `give either a site directory (${path}) or a repository (--repo, BPA_REPO_URL), not both`,
      );
    if (cfg.repoUrl) return reconcileRepo(configFor, opts.output, io, env, now);
    return run(path ?? '.', configFor, opts.output, io, env, now);
  });
}

/** `bpa reconcile --now`: the requestedAt annotation on the Site object, for bpa serve. */
async function requestNow(
  cfg: Config,
  output: OutputFormat,
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): Promise<void> {
  const [{ requireKubeConfig }, { requestReconcile }] = await Promise.all([
    import('../../kube/kubeconfig.js'),
    import('../../report/kube/request.js'),
  ]);
  const kc = requireKubeConfig(
    { file: cfg.bootstrapKubeconfig, env, what: 'bpa reconcile --now' },
    'give --bootstrap-kubeconfig (the cluster bpa serve runs in), or run it in that cluster',
  );
  const requestedAt = new Date(now()).toISOString();
  const sites = await requestReconcile(kc, cfg.namespace, requestedAt);
  if (output === 'json')
    io.out(JSON.stringify({ requestedAt, namespace: cfg.namespace, sites }) + '\n');
  else
    io.out(
      `reconcile requested at ${requestedAt} (Site ${sites.join(', ')} in ${cfg.namespace}); bpa serve echoes it in status.lastHandledReconcileAt\n`,
    );
  io.exit(EXIT.ok);
}

/** `bpa reconcile --once --repo URL`: one reconcile of a repository, reports committed back. */
async function reconcileRepo(
  configFor: ConfigFor,
  output: OutputFormat,
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): Promise<void> {
  const cfg = configFor(undefined);
  const log = await terminalLogger(cfg, io);
  // Heavy modules (SSH, git, installers) load only for the commands that use them.
  const [{ Reconciler }, { sourceFor }] = await Promise.all([
    import('../../reconcile/reconciler.js'),
    import('../../reconcile/from-config.js'),
  ]);
  const reconciler = new Reconciler({
    source: await sourceFor(cfg, env, undefined),
    configFor,
    env,
    log,
    now,
    resyncIntervalMs: parseDuration(cfg.resyncInterval),
    onLine: installerLines(output, io),
  });
  // Like a poll: unchanged input (a status-only commit, a commit outside the site) is skipped.
  const summary = await reconciler.reconcile('interval');
  const ok =
    summary.result === 'applied' || summary.result === 'unchanged' || summary.result === 'skipped';
  if (output === 'json') {
    io.out(JSON.stringify(summary, null, 2) + '\n');
    io.exit(ok ? EXIT.ok : EXIT.failed);
    return;
  }
  io.out(
    `${summary.result}${summary.revision ? ` ${summary.revision.slice(0, 12)}` : ''}${summary.error ? `: ${summary.error.code}: ${summary.error.message}` : ''}\n`,
  );
  for (const c of summary.clusters) io.out(`  ${c.name}: ${c.phase}\n`);
  io.exit(ok ? EXIT.ok : EXIT.failed);
}

/**
 * Log lines for a person at a terminal, on stderr, at the log level asked for. The logging
 * library loads only for the commands that log (not for validate or plan).
 */
async function terminalLogger(cfg: Config, io: Io): Promise<Logger> {
  const { createLogger } = await import('../../util/log.js');
  return createLogger(
    cfg.logLevel,
    humanLogStream((s) => io.err(s)),
  );
}

/** `bpa apply PATH`, `bpa reconcile --once PATH`: the steps up to apply, the plan shown first. */
async function run(
  path: string,
  configFor: ConfigFor,
  output: OutputFormat,
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): Promise<void> {
  let shown = false;
  const show = (ctx: RunContext): void => {
    if (shown || output === 'json') return;
    shown = true;
    const root = ctx.loaded?.root ?? path;
    io.out(formatText(ctx.problems.map((p) => ({ ...p, file: displayPath(root, p.file) }))));
    if (ctx.plan) io.out(formatPlan(ctx.plan) + '\n');
  };
  const ctx = createRun({
    site: { kind: 'path', path },
    configFor,
    env,
    log: await terminalLogger(configFor(undefined), io),
    now,
    onLine: installerLines(output, io),
    onPlan: show,
  });
  await runSteps(ctx, 'apply');
  const root = ctx.loaded?.root ?? path;
  const errors = ctx.problems.filter((p) => p.severity === 'error').length;
  const invalid = `nothing applied: the site has ${pluralize(errors, 'error')}`;
  if (output === 'json') {
    // One document: the problems, the plan and what applying it did (absent: nothing applied).
    io.out(
      JSON.stringify(
        {
          hash: ctx.plan?.hash,
          changes: ctx.plan ? planHasChanges(ctx.plan) : false,
          problems: problemsJson(
            ctx.problems.map((p) => ({ ...p, file: displayPath(root, p.file) })),
          ),
          ...(ctx.result
            ? { result: ctx.result }
            : { error: { code: SITE_INVALID, message: `${invalid} (listed in problems)` } }),
        },
        null,
        2,
      ) + '\n',
    );
  }
  if (!ctx.result) {
    // Nothing applied: the site, or its plan, has errors.
    show(ctx);
    if (output !== 'json') throw new StalledError(SITE_INVALID, `${invalid} (listed above)`);
    io.err(`${SITE_INVALID}: ${invalid}\n`);
    io.exit(EXIT.failed);
    return;
  }
  if (!ctx.plan || !planHasChanges(ctx.plan)) {
    io.exit(EXIT.ok);
    return;
  }
  if (output !== 'json') io.out(formatApplyResult(ctx.result));
  io.exit(ctx.result.ok ? EXIT.ok : EXIT.failed);
}

const SITE_INVALID = 'SITE_INVALID';
const OUTPUT_FORMATS = ['text', 'json'] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Installer output: on stdout beside the text output; on stderr when stdout is one JSON document. */
function installerLines(output: OutputFormat, io: Io): (line: string) => void {
  return output === 'json' ? (line) => io.err(`${line}\n`) : (line) => io.out(`${line}\n`);
}
