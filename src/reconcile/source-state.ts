import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';

/** What bpa last saw of its source: the revisions fetched, attempted and applied. */
export interface SourceState {
  fetched?: { revision: string; at: string };
  attempted?: {
    revision: string;
    digest: string;
    at: string;
    result: string;
    /** Changes wait for a maintenance window that opens then (ISO): the same input is run again from then on. */
    wakeAt?: string;
    /** Clusters suspended through the API when it ran (`*`: all): a change is new input. */
    suspended?: string[];
  };
  applied?: { revision: string; digest: string; at: string };
  /** When a full reconcile (observe nodes, repair drift) last ran. */
  lastFullAt?: string;
  /** The last input digest whose commit passed signature verification. */
  verifiedDigest?: string;
}

export async function readSourceState(stateDir: string): Promise<SourceState> {
  try {
    return JSON.parse(await readFile(join(stateDir, 'source.json'), 'utf8')) as SourceState;
  } catch {
    return {};
  }
}

export async function writeSourceState(stateDir: string, state: SourceState): Promise<void> {
  await writeFileAtomic(join(stateDir, 'source.json'), JSON.stringify(state, null, 2) + '\n');
}
