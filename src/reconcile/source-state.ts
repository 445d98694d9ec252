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

/**
 * What bpa last left in the site's `status/` (`<state>/status.json`): each report
 * (`status/x.yaml` → text) as it was after bpa's last status commit, with the source revision
 * and plan that commit named. It is how bpa tells its own status commits from other people's
 * edits: by content, which nobody else can make bpa's, not by an author or a trailer, which
 * anyone who can push can copy.
 */
export interface StatusRecord {
  files: Record<string, string>;
  /** Written just before a push and promoted after it: a push whose answer was lost still counts. */
  pending?: Record<string, string>;
  source?: string;
  plan?: string;
}

/** `status/` as the revision has it, against the record: `edited` when someone else changed it. */
export interface StatusCheck {
  record?: StatusRecord;
  actual: ReadonlyMap<string, string>;
  edited: boolean;
}

const STATUS_RECORD = 'status.json';

export async function readStatusRecord(stateDir: string): Promise<StatusRecord | undefined> {
  try {
    const rec = JSON.parse(await readFile(join(stateDir, STATUS_RECORD), 'utf8')) as StatusRecord;
    return rec && typeof rec.files === 'object' && rec.files !== null ? rec : undefined;
  } catch {
    return undefined;
  }
}

export async function writeStatusRecord(stateDir: string, record: StatusRecord): Promise<void> {
  await writeFileAtomic(join(stateDir, STATUS_RECORD), JSON.stringify(record, null, 2) + '\n');
}
