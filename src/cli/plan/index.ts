import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { createRun } from '../../reconcile/context.js';
import { observedAge } from '../../reconcile/observed-age.js';
import { STATUS_DIR } from '../../source/site-path.js';
import { runSteps } from '../../reconcile/steps.js';
import { silentLogger } from '../../util/silent-logger.js';
import { planHasChanges } from '../../plan/index.js';
import { hasErrors } from '../../util/problem.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { PLAN_OPTIONS } from '../option-sets.js';
import { outputOption } from '../output-option.js';
import { formatPlan } from '../output/plan.js';
import { writeJsonWithList } from '../output/json.js';
import { formatPlanMarkdown, formatProblemsMarkdown } from '../../report/markdown.js';
import { displayPath, formatText, problemsJson } from '../output/problems.js';

/**
 * The settings `bpa plan` and `bpa diff` take: those of the plan, and whether to plan offline
 * against the site's status/ (a plan only: apply always observes the world itself).
 */
export const PLAN_COMMAND_OPTIONS = [...PLAN_OPTIONS, 'fromStatus'] as const;

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
    .addOption(outputOption(['text', 'json', 'markdown']))
    .option('--out <dir>', "write each cluster's hosts.ini to DIR/<cluster>/hosts.ini");
  const resolveConfig = addConfigOptions(cmd, PLAN_COMMAND_OPTIONS);
  cmd.action(async (path, opts) => {
    const run = createRun({
      site: { kind: 'path', path },
      configFor: (site) => resolveConfig(opts, site, env),
      env,
      log: silentLogger(),
      now,
    });
    await runSteps(run, 'plan');
    const root = run.loaded?.root ?? path;
    const problems = run.problems.map((p) => ({ ...p, file: displayPath(root, p.file) }));
    const plan = run.plan;
    const offline = run.fromStatus
      ? `Planned offline against ${STATUS_DIR}/: the inventory and applied state bpa serve ${observedAge(run.fromStatus.observedAt, now())}.`
      : undefined;
    if (opts.output === 'markdown') {
      io.out(
        plan
          ? formatPlanMarkdown(plan, { observed: offline, problems, site: path })
          : formatProblemsMarkdown(problems, { site: path }),
      );
    } else if (opts.output === 'json') {
      writeJsonWithList(
        (text) => io.out(text),
        {
          hash: plan?.hash,
          ...(run.fromStatus
            ? { observed: { from: STATUS_DIR, at: run.fromStatus.observedAt, text: offline } }
            : {}),
          changes: plan ? planHasChanges(plan) : false,
          problems: problemsJson(problems),
          ...(plan?.settings ? { settings: plan.settings } : {}),
          ...(plan?.changedSecrets ? { changedSecrets: plan.changedSecrets } : {}),
        },
        'clusters',
        plan?.clusters ?? [],
      );
    } else {
      if (offline) io.out(`${offline}\n\n`);
      io.out(formatText(problems));
      if (plan) {
        if (problems.length) io.out('\n');
        io.out(formatPlan(plan));
      }
    }
    const out = opts.out;
    if (plan && out !== undefined) {
      for (const c of plan.clusters) {
        if (!c.hostsIni) continue;
        await mkdir(join(out, c.cluster), { recursive: true });
        await writeFile(join(out, c.cluster, 'hosts.ini'), c.hostsIni);
      }
    }
    if (!plan || hasErrors(run.problems)) io.exit(EXIT.failed);
    else io.exit(planHasChanges(plan) ? EXIT.changes : EXIT.ok);
  });
}
