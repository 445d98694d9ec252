import type { ClusterStatusDoc } from '../../report/status.js';
import { printable } from '../../util/printable.js';
import type { StatusView } from '../status/read.js';

/**
 * `bpa status` as tables, in the manner of `flux get`: the site and its clusters with phase,
 * readiness, revision and message, then every node. Every cell is made printable (names come
 * from a site repository) and kept on one line.
 */
export function formatStatus(view: StatusView, opts: { nodes?: boolean } = {}): string {
  const out: string[] = [];
  const c = view.controller;
  if (c) {
    const parts = [
      c.running ? 'reconciling now' : 'idle',
      c.lastResult
        ? `last reconcile ${c.lastResult}${c.lastFinishedAt ? ` at ${c.lastFinishedAt}` : ''}`
        : 'no reconcile finished yet',
      ...(c.consecutiveFailures ? [`${c.consecutiveFailures} failures in a row`] : []),
      ...(c.nextRunAt ? [`next at ${c.nextRunAt}`] : []),
    ];
    out.push(`controller: ${parts.join(', ')}`);
    if (c.error) out.push(`  ${c.error.code}: ${oneLine(c.error.message, 200)}`);
    out.push('');
  }
  const rows: string[][] = [['NAME', 'PHASE', 'READY', 'REVISION', 'NODES', 'MESSAGE']];
  const site = view.site;
  if (site) {
    rows.push([
      `site/${site.metadata.name}`,
      site.status.phase,
      readyOf(site.status.conditions),
      short(site.status.source.revision),
      '-',
      messageOf(site.status.conditions),
    ]);
  }
  for (const doc of view.clusters) {
    const nodes = doc.status.nodes;
    const reachable = nodes.filter((n) => n.reachable !== false).length;
    rows.push([
      `cluster/${doc.metadata.name}`,
      doc.status.phase,
      readyOf(doc.status.conditions),
      short(doc.status.source.revision),
      `${reachable}/${nodes.length}`,
      messageOf(doc.status.conditions),
    ]);
  }
  out.push(...table(rows));
  if (opts.nodes !== false && view.clusters.some((d) => d.status.nodes.length)) {
    out.push('');
    out.push(...table(nodeRows(view.clusters)));
  }
  return out.join('\n') + '\n';
}

function nodeRows(clusters: readonly ClusterStatusDoc[]): string[][] {
  const rows = [['CLUSTER', 'NODE', 'ROLES', 'HOST', 'MAC', 'ADDRESS', 'REACHABLE', 'PACKAGES']];
  for (const doc of clusters) {
    for (const n of doc.status.nodes) {
      const pkgs = Object.entries(n.packages ?? {});
      rows.push([
        doc.metadata.name,
        n.name,
        n.roles.join(','),
        n.host,
        n.mac,
        n.ip,
        n.reachable === undefined ? '-' : n.reachable ? 'yes' : 'no',
        pkgs.length ? pkgs.map(([name, v]) => `${name}=${v ?? 'absent'}`).join(' ') : '-',
      ]);
    }
  }
  return rows;
}

type Conditions = ClusterStatusDoc['status']['conditions'];

function readyOf(conditions: Conditions): string {
  return conditions.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
}

function messageOf(conditions: Conditions): string {
  return oneLine(conditions.find((c) => c.type === 'Ready')?.message ?? '', 100);
}

function short(revision: string | undefined): string {
  if (!revision) return '-';
  return revision.startsWith('sha256:') ? revision.slice(7, 19) : revision.slice(0, 7);
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Left-aligned columns, two spaces apart; the last column is not padded. */
function table(rows: string[][]): string[] {
  const cells = rows.map((r) => r.map((c) => printable(c)));
  const widths: number[] = [];
  for (const r of cells) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return cells.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
