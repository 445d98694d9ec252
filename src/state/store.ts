import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StalledError } from '../util/errors.js';
import type { AppliedCluster, AppliedState } from './applied.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';

/** Cluster names are RFC 1123 names (validated), so they are safe as directory names. */
const SAFE_NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

/**
 * The state directory: `<dir>/clusters/<cluster>/applied.json` per cluster, each written
 * atomically. A missing directory is an empty state (a first run).
 */
export class StateStore {
  constructor(readonly dir: string) {}

  clusterDir(cluster: string): string {
    if (!SAFE_NAME.test(cluster))
      throw new StalledError(
        'STATE_BAD_NAME',
        `not a valid cluster name: ${JSON.stringify(cluster)}`,
      );
    return join(this.dir, 'clusters', cluster);
  }

  async readApplied(): Promise<AppliedState> {
    const clusters = new Map<string, AppliedCluster>();
    let names: string[];
    try {
      names = await readdir(join(this.dir, 'clusters'));
    } catch (err: unknown) {
      if ((err as { code?: string }).code === 'ENOENT') return { clusters };
      throw err;
    }
    for (const name of names.sort()) {
      if (!SAFE_NAME.test(name)) continue;
      const applied = await this.readCluster(name);
      if (applied) clusters.set(name, applied);
    }
    return { clusters };
  }

  async readCluster(cluster: string): Promise<AppliedCluster | undefined> {
    const file = join(this.clusterDir(cluster), 'applied.json');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err: unknown) {
      if ((err as { code?: string }).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const parsed = JSON.parse(text) as AppliedCluster;
      if (parsed.cluster !== cluster || !Array.isArray(parsed.nodes))
        throw new Error('unexpected shape');
      return parsed;
    } catch (err: unknown) {
      throw new StalledError(
        'STATE_CORRUPT',
        `${file}: not a valid applied-state file (${err instanceof Error ? err.message : String(err)}); move it away to rebuild the state`,
      );
    }
  }

  /**
   * bpa no longer knows the cluster: its applied state and its journal go, so the same name
   * added back is a new cluster. Its logs and last inventory stay, for a person to read.
   */
  async forgetCluster(cluster: string): Promise<void> {
    const dir = this.clusterDir(cluster);
    await rm(join(dir, 'applied.json'), { force: true });
    await rm(join(dir, 'journal.json'), { force: true });
  }

  async writeCluster(applied: AppliedCluster): Promise<void> {
    await writeFileAtomic(
      join(this.clusterDir(applied.cluster), 'applied.json'),
      JSON.stringify(applied, null, 2) + '\n',
    );
  }
}
