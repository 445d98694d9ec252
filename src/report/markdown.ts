import { APPROVAL_TRAILER } from '../source/input-commit.js';
import type { ClusterPlan, PackageChange, Plan, PlannedNode } from '../plan/index.js';
import { printable } from '../util/printable.js';
import { problemPlace, type Problem } from '../util/problem.js';
import { pluralize } from '../util/pluralize.js';

/** GitHub refuses a comment longer than this many characters. */
export const COMMENT_LIMIT = 65_536;
/** Marks bpa's comment, so that a workflow updates it instead of adding one per push. */
export const COMMENT_MARKER = '<!-- bpa-plan -->';

export interface MarkdownOptions {
  /** Where the plan's world came from ("Planned offline against status/: …"). */
  observed?: string;
  /** Problems with positions relative to the repository (shown as warnings and errors). */
  problems?: readonly Problem[];
  /** The site path, for the heading. */
  site?: string;
  /** The size the text must stay within (default: GitHub's comment limit). */
  limit?: number;
}

const SYMBOL: Record<PlannedNode['change'], string> = {
  add: '+',
  remove: '-',
  update: '~',
  keep: ' ',
};

/**
 * A plan as a pull request comment: a summary line, one collapsible section per cluster with
 * a table of node changes and one of package changes, the actions, what is deferred, the
 * warnings, the plan hash and the trailer that approves it. Within `limit` characters: rows
 * and clusters that do not fit are left out, and the text says how many. Everything that
 * comes from the site or the inventory is escaped: a name cannot close a table, open a tag
 * or hide text.
 */
export function formatPlanMarkdown(plan: Plan, opts: MarkdownOptions = {}): string {
  const limit = opts.limit ?? COMMENT_LIMIT;
  const head = [
    COMMENT_MARKER,
    `### bpa plan${opts.site ? ` for \`${code(opts.site)}\`` : ''}: ${summary(plan)}`,
    '',
    ...(opts.observed ? [`<sub>${cell(opts.observed)}</sub>`, ''] : []),
  ];
  const problems = problemLines(opts.problems ?? []);
  const changed = plan.clusters.some((c) => c.actions.length);
  const tail = [
    `Plan hash: \`${plan.hash}\``,
    '',
    ...(changed && !(opts.problems ?? []).some((p) => p.severity === 'error')
      ? [
          'To apply exactly this plan when `bpa serve --require-approved-plan` follows the site, end the merge (or squash) commit message with:',
          '',
          '```',
          `${APPROVAL_TRAILER}: ${plan.hash}`,
          '```',
        ]
      : []),
  ];
  const budget = new Budget(limit - length(head) - length(tail) - 200);
  const body: string[] = [];
  // Problems come first: a reviewer must see them even when the tables are cut.
  body.push(...budget.take(problems, (n) => `_… ${pluralize(n, 'more problem')} not shown_`));
  if (plan.changedSecrets?.length)
    body.push(...plan.changedSecrets.map((name) => `- \`~ secret ${code(name)} (changed)\``), '');
  const shown = plan.clusters.filter((c) => c.actions.length || c.notes.length);
  const quiet = plan.clusters.length - shown.length;
  for (const [i, c] of shown.entries()) {
    const section = clusterSection(c);
    const out = budget.take(
      section,
      (n) => `_… ${pluralize(n, 'more line')} of cluster ${code(c.cluster)} not shown_`,
      // The closing tag must always fit, or the rest of the comment folds into the section.
      ['</details>', ''],
    );
    body.push(...out);
    if (budget.exhausted) {
      const left = shown.slice(i + 1);
      if (left.length) {
        body.push(
          `_… ${pluralize(left.length, 'more cluster')} not shown (${left
            .map((l) => code(l.cluster))
            .join(', ')
            .slice(
              0,
              500,
            )}): the comment is limited to ${limit} characters; run \`bpa plan\` for the whole plan_`,
          '',
        );
      }
      break;
    }
  }
  if (quiet) body.push(`${pluralize(quiet, 'other cluster')} without changes.`, '');
  return [...head, ...body, ...tail].join('\n') + '\n';
}

/** No plan (the site does not validate): the comment lists the problems, within the limit. */
export function formatProblemsMarkdown(
  problems: readonly Problem[],
  opts: Omit<MarkdownOptions, 'problems'> = {},
): string {
  const limit = opts.limit ?? COMMENT_LIMIT;
  const errors = problems.filter((p) => p.severity === 'error').length;
  const head = [
    COMMENT_MARKER,
    `### bpa plan${opts.site ? ` for \`${code(opts.site)}\`` : ''}: no plan, the site has ${pluralize(errors, 'error')}`,
    '',
  ];
  const budget = new Budget(limit - length(head) - 200);
  const body = budget.take(
    problemLines(problems),
    (n) => `_… ${pluralize(n, 'more problem')} not shown_`,
  );
  return [...head, ...body].join('\n') + '\n';
}

/** Lines are taken while they fit; then one line says how many were left out. */
class Budget {
  exhausted = false;
  constructor(private left: number) {}

  take(lines: readonly string[], more: (n: number) => string, closing: string[] = []): string[] {
    if (this.exhausted) return [];
    const out: string[] = [];
    const reserve = length(closing) + 200;
    for (const [i, line] of lines.entries()) {
      const cost = line.length + 1;
      if (cost + reserve > this.left) {
        this.exhausted = true;
        const note = more(lines.length - i - closing.length);
        out.push('', note, ...closing);
        this.left -= note.length + length(closing) + 2;
        return out;
      }
      out.push(line);
      this.left -= cost;
    }
    return out;
  }
}

function clusterSection(c: ClusterPlan): string[] {
  const state = c.notes.some((n) => n.startsWith('blocked'))
    ? 'blocked'
    : c.actions.some((a) => a.kind === 'provision-cluster')
      ? 'new cluster, to provision'
      : c.actions.length
        ? pluralize(c.actions.length, 'action')
        : 'no changes';
  const lines = [
    `<details${c.actions.length ? ' open' : ''}><summary><b>cluster ${html(c.cluster)}</b>: ${html(state)}</summary>`,
    '',
  ];
  const changed = c.nodes.filter((n) => n.change !== 'keep');
  const kept = c.nodes.length - changed.length;
  if (changed.length) {
    lines.push('| | node | host | address | roles | why |', '|---|---|---|---|---|---|');
    for (const n of changed)
      lines.push(
        `| \`${SYMBOL[n.change]}\` | ${cell(n.name)} | ${cell(n.host)} | ${cell(n.ip)} | ${cell(n.roles.join('+'))} | ${cell(why(n))} |`,
      );
    lines.push('');
  }
  if (kept) lines.push(`${pluralize(kept, 'node')} unchanged.`, '');
  const packages = c.actions.flatMap((a) =>
    (a.packages ?? []).map((p) => ({ ...p, kind: a.kind })),
  );
  if (packages.length) {
    lines.push('| node | package | from | to | action |', '|---|---|---|---|---|');
    for (const p of packages)
      lines.push(
        `| ${cell(p.node)} | ${cell(p.name)} | ${cell(from(p))} | ${cell(to(p, p.kind))} | ${p.kind} |`,
      );
    lines.push('');
  }
  if (c.actions.length) {
    lines.push('**Actions**', '');
    c.actions.forEach((a, i) => lines.push(`${i + 1}. \`${a.kind}\`: ${cell(a.reason)}`));
    lines.push('');
  }
  if (c.notes.length) {
    lines.push('**Deferred and notes**', '');
    for (const n of c.notes) lines.push(`- ${cell(n)}`);
    lines.push('');
  }
  lines.push('</details>', '');
  return lines;
}

function why(n: PlannedNode): string {
  if (n.change === 'update') return (n.details ?? []).join('; ');
  if (n.change === 'remove') return 'no longer in the site (or replaced)';
  return n.placement;
}

function from(p: PackageChange): string {
  return p.from ?? '(none)';
}

function to(p: PackageChange, kind: string): string {
  if (kind === 'remove-packages') return '(removed)';
  return p.to ?? 'any version';
}

function problemLines(problems: readonly Problem[]): string[] {
  if (!problems.length) return [];
  const errors = problems.filter((p) => p.severity === 'error').length;
  const lines = [
    `**${errors ? `${pluralize(errors, 'error')}, ` : ''}${pluralize(problems.length - errors, 'warning')}**`,
    '',
  ];
  for (const p of problems) {
    const place =
      p.object !== undefined ? problemPlace(p) : p.file && `${p.file}${p.line ? `:${p.line}` : ''}`;
    const where = place ? ` (\`${code(place)}\`)` : '';
    lines.push(
      `- ${p.severity === 'error' ? '❌' : '⚠️'} \`${p.code}\`${where}: ${cell(p.message)}`,
    );
  }
  lines.push('');
  return lines;
}

function summary(plan: Plan): string {
  const actions = plan.clusters.flatMap((c) => c.actions);
  const nodes = (kind: string): number =>
    actions.filter((a) => a.kind === kind).reduce((n, a) => n + a.nodes.length, 0);
  const provision = actions.filter((a) => a.kind === 'provision-cluster').length;
  const teardowns = actions.filter((a) => a.kind === 'remove-cluster').length;
  const reconfigure = actions.filter((a) => a.kind === 'reconfigure-cluster').length;
  const pkgs = actions.reduce((n, a) => n + (a.packages?.length ?? 0), 0);
  if (!actions.length) return `no changes (${pluralize(plan.clusters.length, 'cluster')})`;
  return `${pluralize(plan.clusters.length, 'cluster')}; ${provision} to provision, ${reconfigure ? `${reconfigure} to reconfigure, ` : ''}${pluralize(nodes('add-nodes'), 'node')} to add, ${nodes('remove-nodes') + nodes('remove-cluster')} to remove${teardowns ? ` (${pluralize(teardowns, 'whole cluster')} reset)` : ''}, ${pluralize(pkgs, 'package change')}`;
}

/** Text safe in a table cell: one line, no pipe, no tag, no HTML entity, printable. */
function cell(text: string): string {
  return html(printable(text)).replace(/\|/g, '\\|').replace(/`/g, "'");
}

function html(text: string): string {
  return printable(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Text inside backticks: no backtick can end it early. */
function code(text: string): string {
  return printable(text).replace(/`/g, "'");
}

function length(lines: readonly string[]): number {
  return lines.reduce((n, l) => n + l.length + 1, 0);
}
