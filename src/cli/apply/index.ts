import type { Command } from 'commander';
import { runApply } from '../../apply/run.js';
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

const APPLY_OPTIONS = ['stateDir', 'flavour', 'prune', 'inventoryDir', 'kubeconfig', 'namespaces', 'leases', 'ipOrder', 'maxParallelHosts', 'installerMode', 'installerCommand', 'scaleCommand', 'addonCommand', 'removeCommand', 'installerTimeout', 'installerImage', 'sshUser', 'sshPort', 'sshKey', 'bootstrapCredentials', 'bootstrapKubeconfig', 'namespace', 'stateClaim', 'sshKeySecret'] as const;

/**
 * `bpa apply [PATH]` and `bpa reconcile --once [PATH]`: plan, then apply, journaled. A run
 * that was interrupted (killed, a host down, an installer failure) is resumed by running
 * again: steps already done are skipped.
 */
export function registerApply(program: Command, io: Io, env: NodeJS.ProcessEnv, now: () => number): void {
  const apply = program.command('apply').description('apply the current plan of a site directory (exit 0 applied or nothing to do, 1 failed or refused)').argument('[path]', 'site directory', '.');
  const applyConfig = addConfigOptions(apply, [...APPLY_OPTIONS, 'planHash']);
  apply.option('--log-level <level>', 'log level (trace, debug, info, warn, error)', 'info');
  apply.action((path: string, opts: Record<string, unknown>) => run(path, opts, (site) => applyConfig(opts, site, env), io, env, now));

  const reconcile = program.command('reconcile').description('one reconcile of a site directory: validate, observe, plan and apply').argument('[path]', 'site directory', '.');
  reconcile.option('--once', 'run once and exit (the controller loop is `bpa serve`)');
  const reconcileConfig = addConfigOptions(reconcile, [...APPLY_OPTIONS]);
  reconcile.option('--log-level <level>', 'log level (trace, debug, info, warn, error)', 'info');
  reconcile.action((path: string, opts: Record<string, unknown>) => {
    if (!opts['once']) {
      io.err('bpa reconcile: only --once is supported here; for a controller loop use bpa serve\n');
      io.exit(EXIT.usage);
      return;
    }
    return run(path, opts, (site) => reconcileConfig(opts, site, env), io, env, now);
  });
}

async function run(path: string, opts: Record<string, unknown>, config: Parameters<typeof runApply>[1], io: Io, env: NodeJS.ProcessEnv, now: () => number): Promise<void> {
  const log = createLogger(String(opts['logLevel'] ?? 'info'), humanLogStream((s) => io.err(s)));
  let outcome;
  try {
    outcome = await runApply(path, config, {
      env,
      now: now(),
      log,
      onLine: (line) => io.out(`${line}\n`),
      onPlan: (planRun) => {
        io.out(formatText(planRun.problems.map((p) => ({ ...p, file: displayPath(planRun.validated.root, p.file) }))));
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
