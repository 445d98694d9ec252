import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { createRun } from '../../reconcile/context.js';
import { runSteps } from '../../reconcile/steps.js';
import { silentLogger } from '../../util/log.js';
import { planHasChanges } from '../../plan/index.js';
import { hasErrors } from '../../util/problem.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { formatPlan } from '../output/plan.js';
import { displayPath, formatText, problemsJson } from '../output/problems.js';

/**
 * `bpa plan [PATH]`: what would change and why. Exit 0 no changes, 2 changes, 1 errors. It
 * sees what `bpa apply` sees: with bpa's SSH key (--ssh-key, or the one in the state
 * directory) it reads the installed packages of the nodes applied before, as apply does, so
 * the two compute the same plan and the same hash.
 */
export function registerPlan(
  program: Command,
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): void {
  const cmd = program
    .command('plan')
    .description(
      'show what bpa would change on the site, and why (exit 0: no changes, 2: changes, 1: errors)',
    )
    .argument('[path]', 'site directory', '.')
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['text', 'json'])
        .default('text'),
    )
    .option('--out <dir>', "write each cluster's hosts.ini to DIR/<cluster>/hosts.ini");
  const config = addConfigOptions(cmd, [
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
    'upgradeCommand',
    'kubesprayDir',
    'installerImage',
    'sshUser',
    'sshPort',
    'sshKey',
    'allowSiteCommands',
    'packageMirrors',
    'artifactsUrl',
    'aptSigningKey',
    'registryUrl',
  ]);
  cmd.action(async (path: string, opts: Record<string, unknown>) => {
    const run = createRun({
      site: { kind: 'path', path },
      configFor: (site) => config(opts, site, env),
      env,
      log: silentLogger(),
      now,
    });
    await runSteps(run, 'plan');
    const root = run.loaded?.root ?? path;
    const problems = run.problems.map((p) => ({ ...p, file: displayPath(root, p.file) }));
    const plan = run.plan;
    if (opts['output'] === 'json') {
      io.out(
        JSON.stringify(
          {
            hash: plan?.hash,
            changes: plan ? planHasChanges(plan) : false,
            problems: problemsJson(problems),
            ...(plan?.settings ? { settings: plan.settings } : {}),
            clusters: plan?.clusters ?? [],
          },
          null,
          2,
        ) + '\n',
      );
    } else {
      io.out(formatText(problems));
      if (plan) {
        if (problems.length) io.out('\n');
        io.out(formatPlan(plan));
      }
    }
    if (plan && typeof opts['out'] === 'string') {
      for (const c of plan.clusters) {
        if (!c.hostsIni) continue;
        await mkdir(join(opts['out'], c.cluster), { recursive: true });
        await writeFile(join(opts['out'], c.cluster, 'hosts.ini'), c.hostsIni);
      }
    }
    if (!plan || hasErrors(run.problems)) io.exit(EXIT.failed);
    else io.exit(planHasChanges(plan) ? EXIT.changes : EXIT.ok);
  });
}
