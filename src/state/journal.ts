import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StalledError } from '../util/errors.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';

export type StepStatus = 'pending' | 'running' | 'done' | 'failed';

export interface StepRecord {
  /** `<action digest>:<step name>`: the same work has the same key in any plan. */
  key: string;
  action: string;
  step: string;
  status: StepStatus;
  attempt: number;
  startedAt?: string;
  endedAt?: string;
  error?: { code: string; message: string };
  /** Small facts a re-check needs (e.g. the installer's PID file, a Job name). */
  data?: Record<string, unknown>;
}

interface JournalFile {
  cluster: string;
  steps: StepRecord[];
}

const KEEP_DONE = 200;

/**
 * The journal of one cluster: every step is recorded before it runs (`running`) and after
 * (`done` / `failed`), each write atomic. Steps are keyed by the work they do, not by the
 * plan, so a step done in an earlier run is skipped even when the plan hash has changed
 * since (say a lease moved) — and nothing is ever done twice.
 */
export class Journal {
  private steps = new Map<string, StepRecord>();

  private constructor(
    readonly cluster: string,
    private readonly file: string,
    private readonly beforeWrite: () => Promise<void>,
  ) {}

  static async open(
    clusterDir: string,
    cluster: string,
    beforeWrite: () => Promise<void> = async () => undefined,
  ): Promise<Journal> {
    const j = new Journal(cluster, join(clusterDir, 'journal.json'), beforeWrite);
    try {
      const parsed = JSON.parse(await readFile(j.file, 'utf8')) as JournalFile;
      for (const s of parsed.steps) j.steps.set(s.key, s);
    } catch (err: unknown) {
      const code = (err as { code?: string }).code;
      if (code !== 'ENOENT')
        throw new StalledError(
          'JOURNAL_CORRUPT',
          `${j.file}: cannot read the journal (${err instanceof Error ? err.message : String(err)}); move it away after checking no installer is running`,
        );
    }
    return j;
  }

  get(key: string): StepRecord | undefined {
    return this.steps.get(key);
  }

  /** Whether any step whose key starts with `prefix` (one action's work) was ever started. */
  hasStarted(prefix: string): boolean {
    for (const key of this.steps.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** Steps found `running`: a previous bpa stopped in the middle of them. */
  interrupted(): StepRecord[] {
    return [...this.steps.values()].filter((s) => s.status === 'running');
  }

  async start(
    key: string,
    action: string,
    step: string,
    data?: Record<string, unknown>,
  ): Promise<StepRecord> {
    const prev = this.steps.get(key);
    const rec: StepRecord = {
      key,
      action,
      step,
      status: 'running',
      attempt: (prev?.attempt ?? 0) + 1,
      startedAt: new Date().toISOString(),
      data: { ...prev?.data, ...data },
    };
    this.steps.set(key, rec);
    await this.flush();
    return rec;
  }

  async update(key: string, data: Record<string, unknown>): Promise<void> {
    const rec = this.steps.get(key);
    if (!rec) return;
    rec.data = { ...rec.data, ...data };
    await this.flush();
  }

  async finish(
    key: string,
    status: 'done' | 'failed',
    error?: { code: string; message: string },
  ): Promise<void> {
    const rec = this.steps.get(key);
    if (!rec) return;
    rec.status = status;
    rec.endedAt = new Date().toISOString();
    if (error) rec.error = error;
    else delete rec.error;
    await this.flush();
  }

  /**
   * One write at a time, each of the whole journal as it is when it starts: steps that run in
   * parallel (the nodes of a rollout batch) cannot have an older snapshot land last.
   */
  private flush(): Promise<void> {
    const next = this.writing.then(() => this.write());
    this.writing = next.catch(() => undefined);
    return next;
  }

  private writing: Promise<void> = Promise.resolve();

  private async write(): Promise<void> {
    await this.beforeWrite();
    const all = [...this.steps.values()];
    const done = all.filter((s) => s.status === 'done');
    const keep = done.length > KEEP_DONE ? new Set(done.slice(done.length - KEEP_DONE)) : undefined;
    const steps = keep ? all.filter((s) => s.status !== 'done' || keep.has(s)) : all;
    const body: JournalFile = { cluster: this.cluster, steps };
    await writeFileAtomic(this.file, JSON.stringify(body, null, 2) + '\n');
  }
}
