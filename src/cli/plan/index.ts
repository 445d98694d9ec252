import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { runPlan } from '../../plan/run.js';
import { planHasChanges } from '../../plan/index.js';
import { hasErrors } from '../../util/problem.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { formatPlan } from '../output/plan.js';
import { displayPath, formatText, problemsJson } from '../output/problems.js';

/** `bpa plan [PATH]`: what would change and why. Exit 0 no changes, 2 changes, 1 errors. */
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
    'allowSiteCommands',
    'packageMirrors',
  ]);
  cmd.action(async (path: string, opts: Record<string, unknown>) => {
    const run = await runPlan(path, (site) => config(opts, site, env), env, now());
    if ('usage' in run) {
      io.err(`bpa plan: ${run.usage}\n`);
      io.exit(EXIT.usage);
      return;
    }
    const problems = run.problems.map((p) => ({
      ...p,
      file: displayPath(run.validated.root, p.file),
    }));
    const plan = run.plan;
    if (opts['output'] === 'json') {
      io.out(
        JSON.stringify(
          {
            hash: plan?.hash,
            changes: plan ? planHasChanges(plan) : false,
            problems: problemsJson(problems),
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
    if (!plan || hasErrors(run.problems)) io.exit(EXIT.invalid);
    else io.exit(planHasChanges(plan) ? EXIT.changes : EXIT.ok);
  });
}
