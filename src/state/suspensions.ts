import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StalledError, messageOf } from '../util/errors.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';

/** `*`: the whole site. */
export const WHOLE_SITE = '*';

/** One emergency suspension made through serve's API (no commit). */
export interface Suspension {
  /** When it was made (ISO 8601). */
  since: string;
  /** What the operator gave as the reason, if anything. */
  reason?: string;
}

/** Suspensions by cluster name (or `*`). */
export type Suspensions = Record<string, Suspension>;

const FILE = 'suspended.json';

/**
 * The suspensions made without a commit, kept in the state directory: every bpa that applies
 * with this state directory (serve, `reconcile --once`, `apply`) honours them, and they
 * survive a restart, until resumed. A file that cannot be read stops the apply rather than
 * being taken for "nothing suspended".
 */
export async function readSuspensions(stateDir: string): Promise<Suspensions> {
  let text: string;
  try {
    text = await readFile(join(stateDir, FILE), 'utf8');
  } catch (err: unknown) {
    if ((err as { code?: string }).code === 'ENOENT') return byName({});
    throw new StalledError(
      'SUSPENSIONS_UNREADABLE',
      `cannot read ${join(stateDir, FILE)} (${messageOf(err)}): check its permissions`,
    );
  }
  try {
    const parsed = JSON.parse(text) as { suspended?: Suspensions };
    return byName(parsed.suspended && typeof parsed.suspended === 'object' ? parsed.suspended : {});
  } catch (err: unknown) {
    throw new StalledError(
      'SUSPENSIONS_UNREADABLE',
      `${join(stateDir, FILE)} is not valid JSON (${messageOf(err)}): fix or remove it after checking what it suspended`,
    );
  }
}

/**
 * Without a prototype: a cluster may be named like a property of every object
 * (`constructor`), and must not read as suspended by it.
 */
function byName(entries: Suspensions): Suspensions {
  return Object.assign(Object.create(null) as Suspensions, entries);
}

export async function writeSuspensions(stateDir: string, suspended: Suspensions): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(suspended).sort(([a], [b]) => (a < b ? -1 : 1)));
  await writeFileAtomic(
    join(stateDir, FILE),
    JSON.stringify({ suspended: sorted }, null, 2) + '\n',
  );
}
