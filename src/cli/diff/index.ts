import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, posix } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { diffPlans, type PlanDiff } from '../../plan/diff-plans.js';
import type { Plan } from '../../plan/index.js';
import { createRun, type RunContext } from '../../reconcile/context.js';
import { observedAge } from '../../reconcile/observed-age.js';
import { runSteps } from '../../reconcile/steps.js';
import { exportRevision, resolveRevision } from '../../source/revision-tree.js';
import { UsageError } from '../../util/errors.js';
import { silentLogger } from '../../util/silent-logger.js';
import { printable } from '../../util/printable.js';
import { hasErrors } from '../../util/problem.js';
import { pluralize, word } from '../../util/pluralize.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { displayPath, formatText, problemsJson } from '../output/problems.js';
import { outputOption } from '../output-option.js';
import { PLAN_COMMAND_OPTIONS } from '../plan/index.js';

/**
 * `bpa diff BASE HEAD`: how the plan of HEAD differs from the plan of BASE, for a reviewer
 * comparing branches locally. Each is a site directory, or a revision of the git repository
 * (`-C DIR`, default the current directory) whose `--path` is the site. Both are planned
 * against the same world: BASE's status/ when it has one (the observation the controller
 * committed), else what `bpa plan` would observe. Exit 0: the same plan, 2: they differ,
 * 1: either has errors.
 */
export function registerDiff(
  program: Command,
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): void {
  const cmd = program
    .command('diff')
    .description(
      'the difference between the plans of two revisions or two site directories (exit 0: the same plan, 2: they differ, 1: errors)',
    )
    .argument('<base>', 'a site directory, or a revision (branch, tag, commit) of the repository')
    .argument('<head>', 'a site directory, or a revision of the repository')
    .option('--path <path>', 'the site path inside the repository, for revisions', '.')
    .option('-C, --repo-dir <dir>', 'the git repository the revisions are of', '.')
    .addOption(outputOption(['text', 'json']));
  const resolveConfig = addConfigOptions(cmd, PLAN_COMMAND_OPTIONS);
  cmd.action(async (base, head, opts) => {
    const tmp = await mkdtemp(join(tmpdir(), 'bpa-diff-'));
    try {
      const repo = opts.repoDir;
      const path = opts.path;
      // A problem in a revision is shown as git names the file (`HEAD:sites/x/a.yaml`), not
      // by the temporary copy it was read from, which is gone when the command ends.
      const shown = new Map<string, (file: string) => string>();
      const site = async (arg: string, name: string): Promise<string> => {
        if ((await stat(arg).catch(() => undefined))?.isDirectory()) return arg;
        const commit = await resolveRevision(repo, arg);
        if (!commit)
          throw new UsageError(
            `${arg} is neither a site directory nor a revision of the git repository ${repo}`,
          );
        shown.set(name, (file) => (isAbsolute(file) ? file : `${arg}:${posix.join(path, file)}`));
        return exportRevision(repo, commit, path, join(tmp, name));
      };
      const baseDir = await site(base, 'base');
      const headDir = await site(head, 'head');
      const problemsOf = (name: string, run: RunContext): RunContext['problems'] => {
        const show = shown.get(name);
        if (!show) return directoryProblems(run);
        return run.problems.map((p) => ({
          ...p,
          file: p.file === undefined ? p.file : show(p.file),
        }));
      };
      const plan = async (dir: string, statusFrom?: string): Promise<RunContext> => {
        const run = createRun({
          site: { kind: 'path', path: dir },
          configFor: (s) => resolveConfig(opts, s, env),
          env,
          log: silentLogger(),
          now,
          ...(statusFrom ? { statusFrom } : {}),
        });
        await runSteps(run, 'plan');
        return run;
      };
      const baseRun = await plan(baseDir);
      // The head is planned against the world the base was: its own status/ may be older.
      const headRun = await plan(headDir, baseRun.fromStatus ? baseDir : undefined);
      const runs: Array<[string, string, RunContext]> = [
        ['base', base, baseRun],
        ['head', head, headRun],
      ];
      const failed = runs.filter(([, , r]) => !r.plan || hasErrors(r.problems));
      if (failed.length) {
        if (opts.output === 'json') {
          io.out(
            JSON.stringify(
              Object.fromEntries(
                runs.map(([k, , r]) => [k, { problems: problemsJson(problemsOf(k, r)) }]),
              ),
              null,
              2,
            ) + '\n',
          );
        } else {
          for (const [k, arg, r] of failed)
            io.out(`${k} ${printable(arg)}:\n${formatText(problemsOf(k, r))}\n`);
        }
        io.exit(EXIT.failed);
        return;
      }
      const diff = diffPlans(baseRun.plan as Plan, headRun.plan as Plan);
      const observed = baseRun.fromStatus
        ? `Both planned offline against the status/ of ${base}: the inventory and applied state bpa serve ${observedAge(baseRun.fromStatus.observedAt, now())}.`
        : undefined;
      if (opts.output === 'json') {
        io.out(
          JSON.stringify(
            {
              base: { ref: base, hash: diff.baseHash },
              head: { ref: head, hash: diff.headHash },
              ...(baseRun.fromStatus ? { observed: { at: baseRun.fromStatus.observedAt } } : {}),
              same: diff.clusters.length === 0,
              clusters: diff.clusters,
            },
            null,
            2,
          ) + '\n',
        );
      } else {
        io.out(formatDiff(diff, base, head, observed));
      }
      io.exit(diff.clusters.length ? EXIT.changes : EXIT.ok);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
}

/** Problems of a site directory, their files named as `bpa plan` names them. */
function directoryProblems(run: RunContext): RunContext['problems'] {
  const root = run.loaded?.root;
  return run.problems.map((p) => ({ ...p, file: root ? displayPath(root, p.file) : p.file }));
}

/** `-` only in the base plan, `+` only in the head plan, per cluster, then a summary line. */
export function formatDiff(diff: PlanDiff, base: string, head: string, observed?: string): string {
  const out: string[] = [];
  if (observed) out.push(observed, '');
  out.push(
    `bpa diff: base ${base} (plan ${diff.baseHash.slice(0, 12)}) → head ${head} (plan ${diff.headHash.slice(0, 12)})`,
  );
  if (!diff.clusters.length) {
    out.push('', 'The plans are the same.');
    return out.map(printable).join('\n') + '\n';
  }
  let onlyBase = 0;
  let onlyHead = 0;
  for (const c of diff.clusters) {
    out.push('', `cluster ${c.cluster}`);
    for (const i of c.base) out.push(`  - ${i.kind.padEnd(7)} ${i.text}`);
    for (const i of c.head) out.push(`  + ${i.kind.padEnd(7)} ${i.text}`);
    onlyBase += c.base.length;
    onlyHead += c.head.length;
  }
  out.push(
    '',
    `${pluralize(diff.clusters.length, 'cluster')} ${word(diff.clusters.length, 'differs', 'differ')}: ${pluralize(onlyHead, 'line')} only in the head plan (+), ${onlyBase} only in the base plan (-).`,
  );
  return out.map(printable).join('\n') + '\n';
}
