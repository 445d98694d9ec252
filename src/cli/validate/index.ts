import type { Command } from '@commander-js/extra-typings';
import { basename, dirname, resolve } from 'node:path';
import { BpaError } from '../../util/errors.js';
import { silentLogger } from '../../util/silent-logger.js';
import { error, type Problem } from '../../util/problem.js';
import { createRun } from '../../reconcile/context.js';
import { runSteps } from '../../reconcile/steps.js';
import {
  PROBLEM_FORMATS,
  countSeverities,
  displayPath,
  formatGithub,
  formatText,
  problemsJson,
} from '../output/problems.js';
import { EXIT, type Io } from '../io.js';
import { addConfigOptions } from '../options.js';
import { formatAliasOption, outputFormat, outputOption } from '../output-option.js';
import { printable } from '../../util/printable.js';
import { pluralize } from '../../util/pluralize.js';

/** `bpa validate [PATH]`: every problem of a site, for pull requests. */
export function registerValidate(program: Command, io: Io, env: NodeJS.ProcessEnv): void {
  const cmd = program
    .command('validate')
    .description(
      'check a site directory (or one file) and report every problem with file, line and column',
    )
    .argument('[path]', 'site directory or YAML file', '.')
    .addOption(outputOption(PROBLEM_FORMATS))
    .addOption(formatAliasOption(PROBLEM_FORMATS))
    .action(async (path, opts) => {
      const format = outputFormat(opts);
      const ctx = createRun({
        site: { kind: 'path', path },
        configFor: (site) => resolvePolicy(opts, site, env),
        env,
        log: silentLogger(),
      });
      let result: Validated;
      try {
        await runSteps(ctx, 'validate');
        const loaded = ctx.loaded as NonNullable<typeof ctx.loaded>;
        result = {
          root: loaded.root,
          files: loaded.files.length,
          documents: loaded.documents.length,
          problems: ctx.validation,
          clusters: ctx.model?.clusters.map((c) => c.name) ?? [],
        };
      } catch (err: unknown) {
        // A path that cannot be read is a problem of the input like any other: it is printed
        // in the format asked for (a JSON document, a GitHub annotation).
        if (!(err instanceof BpaError) || !PATH_CODES.has(err.code)) throw err;
        result = unreadablePath(path, err);
      }
      const problems = result.problems.map((p) => ({
        ...p,
        file: displayPath(result.root, p.file),
      }));
      const { errors, warnings } = countSeverities(problems);
      if (format === 'json') {
        io.out(
          JSON.stringify(
            {
              valid: errors === 0,
              errors,
              warnings,
              files: result.files,
              documents: result.documents,
              clusters: result.clusters,
              problems: problemsJson(problems),
            },
            null,
            2,
          ) + '\n',
        );
      } else if (format === 'github') {
        io.out(formatGithub(problems));
      } else {
        io.out(formatText(problems));
        const where = printable(displayPath(process.cwd(), path) ?? path);
        const scope = `${pluralize(result.documents, 'document')} in ${pluralize(result.files, 'file')}`;
        if (errors === 0) {
          const clusters = result.clusters.length;
          io.out(
            `${where}: valid (${scope}, ${pluralize(clusters, 'cluster')}${warnings ? `, ${pluralize(warnings, 'warning')}` : ''})\n`,
          );
        } else {
          io.out(
            `${where}: ${pluralize(errors, 'error')}, ${pluralize(warnings, 'warning')} (${scope})\n`,
          );
        }
      }
      io.exit(errors === 0 ? EXIT.ok : EXIT.failed);
    });
  // The operator's policy, so a pull request is judged as the controller will judge it.
  const resolvePolicy = addConfigOptions(cmd, ['allowSiteCommands', 'packageMirrors']);
}

const PATH_CODES = new Set(['PATH_NOT_FOUND', 'PATH_UNREADABLE']);

/** What `bpa validate` shows of a site. */
interface Validated {
  root: string;
  files: number;
  documents: number;
  problems: Problem[];
  /** The clusters of a valid site. */
  clusters: string[];
}

/** The result for a path that cannot be read: one problem, on the path itself. */
function unreadablePath(path: string, err: BpaError): Validated {
  return {
    root: dirname(resolve(path)),
    files: 0,
    documents: 0,
    problems: [error(err.code, err.message, { file: basename(resolve(path)) })],
    clusters: [],
  };
}
