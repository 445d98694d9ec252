import type { ApplyResult } from '../../apply/engine.js';
import { printable } from '../../util/printable.js';

/** What an apply did, per cluster and action, for the terminal (every line printable). */
export function formatApplyResult(result: ApplyResult): string {
  const lines: string[] = [];
  for (const c of result.clusters) {
    if (c.result === 'unchanged') continue;
    const why =
      c.result === 'waiting'
        ? ` (outside its maintenance windows${c.waitingUntil ? `; the next opens at ${c.waitingUntil}` : ''})`
        : c.result === 'suspended'
          ? ' (suspended: nothing applied)'
          : '';
    lines.push(`cluster ${c.cluster}: ${c.result}${why}`);
    for (const a of c.actions) {
      const mark = a.result === 'done' ? '✓' : a.result === 'failed' ? '✗' : '·';
      const skipped = a.steps.filter((s) => s.result === 'skipped').length;
      const steps = a.steps.length
        ? ` (${a.steps.length} steps${skipped ? `, ${skipped} already done` : ''})`
        : '';
      lines.push(
        `  ${mark} ${a.kind}${a.nodes.length ? ` ${a.nodes.join(', ')}` : ''}${a.result === 'not-run' ? ' not run' : ''}${steps}`,
      );
      if (a.error) lines.push(`      ${a.error.code}: ${a.error.message}`);
      for (const p of a.packages ?? []) {
        if (!p.ok) lines.push(`      ${p.node}: ${p.error?.code}: ${p.error?.message}`);
      }
    }
  }
  const held = result.clusters.filter((c) => c.result === 'waiting' || c.result === 'suspended');
  lines.push(
    result.ok && held.length
      ? `Apply ${result.planHash.slice(0, 12)} done, except ${held.map((c) => `${c.cluster} (${c.result})`).join(', ')}.`
      : result.ok
        ? `Apply ${result.planHash.slice(0, 12)} complete.`
        : `Apply ${result.planHash.slice(0, 12)} failed; run again to resume: finished steps are not repeated.`,
  );
  return lines.map(printable).join('\n') + '\n';
}
