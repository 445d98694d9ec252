import { relative, resolve } from 'node:path';
import { printable } from '../../util/printable.js';
import { problemPlace, type Problem } from '../../util/problem.js';

export const PROBLEM_FORMATS = ['text', 'json', 'github'] as const;
export type ProblemFormat = (typeof PROBLEM_FORMATS)[number];

/** Shows a site-relative file as a path relative to the working directory. */
export function displayPath(
  root: string,
  file: string | undefined,
  cwd = process.cwd(),
): string | undefined {
  if (file === undefined) return undefined;
  const abs = resolve(root, file);
  const rel = relative(cwd, abs);
  // Inside the working directory (the usual CI checkout): relative, as annotations need.
  return rel === '' ? file : rel.startsWith('..') ? abs : rel;
}

/**
 * One line per problem, like a compiler: `file:line:col: error CODE: message`. File names and
 * messages carry site text: control characters in them are escaped, one problem stays one line.
 */
export function formatText(problems: readonly Problem[]): string {
  return problems
    .map((p) => {
      const where = problemPlace(p) ?? '<site>';
      return `${printable(where)}: ${p.severity} ${p.code}: ${printable(p.message)}\n`;
    })
    .join('');
}

/** GitHub Actions workflow commands, so problems show on the pull request's diff. */
export function formatGithub(problems: readonly Problem[]): string {
  return problems
    .map((p) => {
      const props = [
        p.file !== undefined ? `file=${escapeProperty(p.file)}` : undefined,
        p.line !== undefined ? `line=${p.line}` : undefined,
        p.column !== undefined ? `col=${p.column}` : undefined,
        `title=${escapeProperty(`bpa ${p.code}`)}`,
      ].filter(Boolean);
      // An object of the cluster is no file of the diff: it is named in the message.
      const text = p.object !== undefined ? `${problemPlace(p) ?? ''}: ${p.message}` : p.message;
      return `::${p.severity} ${props.join(',')}::${escapeData(text)}\n`;
    })
    .join('');
}

function escapeData(s: string): string {
  // Newlines keep the workflow command's own encoding; other controls never reach the log.
  return printable(s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A'));
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** Problems as plain JSON objects with stable field order. */
export function problemsJson(problems: readonly Problem[]): Array<Record<string, unknown>> {
  return problems.map((p) => ({
    code: p.code,
    severity: p.severity,
    message: p.message,
    file: p.file,
    line: p.line,
    column: p.column,
    pointer: p.pointer,
    ...(p.closest ? { closest: p.closest } : {}),
    ...(p.object !== undefined ? { object: p.object, field: p.field ?? '' } : {}),
  }));
}

export function countSeverities(problems: readonly Problem[]): {
  errors: number;
  warnings: number;
} {
  let errors = 0;
  let warnings = 0;
  for (const p of problems) {
    if (p.severity === 'error') errors++;
    else if (p.severity === 'warning') warnings++;
  }
  return { errors, warnings };
}
