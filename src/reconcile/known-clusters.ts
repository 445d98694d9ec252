import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReport } from '../source/site-source.js';
import { readStatusRecord } from './source-state.js';

const NAME = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The clusters the state directory knows of, for a bpa that has not read the site itself (a
 * restart during a long first apply, a standby replica that never reconciles): each one with
 * a directory under `<state>/clusters/` (an applied state, installer logs) and each one of the
 * reports bpa last committed (`<state>/status.json`). Undefined when it knows of neither: a
 * new state directory, never reported.
 */
export async function clustersInState(stateDir: string): Promise<string[] | undefined> {
  const names = new Set<string>();
  let known = false;
  try {
    const entries = await readdir(join(stateDir, 'clusters'), { withFileTypes: true });
    for (const e of entries) if (e.isDirectory() && NAME.test(e.name)) names.add(e.name);
    known = names.size > 0;
  } catch {
    // No clusters directory (or an unreadable one): nothing known from it.
  }
  const record = await readStatusRecord(stateDir);
  if (record) {
    // A record of reports without a cluster is knowledge too: the site had none.
    known = true;
    for (const text of [...Object.values(record.files), ...Object.values(record.pending ?? {})])
      for (const name of reportedCluster(text)) names.add(name);
  }
  return known ? [...names].sort() : undefined;
}

/**
 * The clusters bpa knows: those it read (`read`, from the reconciler: undefined until it has
 * read the site) and those the state directory knows of. Undefined only when neither knows
 * any: then a cluster's name cannot be checked at all.
 */
export async function knownClusters(
  read: readonly string[] | undefined,
  stateDir: string,
): Promise<string[] | undefined> {
  const kept = await clustersInState(stateDir);
  if (read === undefined && kept === undefined) return undefined;
  return [...new Set([...(read ?? []), ...(kept ?? [])])].sort();
}

function reportedCluster(text: string): string[] {
  try {
    const doc = parseReport(text) as { kind?: unknown; metadata?: { name?: unknown } } | null;
    const name = doc?.kind === 'ClusterStatus' ? doc.metadata?.name : undefined;
    return typeof name === 'string' && NAME.test(name) ? [name] : [];
  } catch {
    return [];
  }
}
