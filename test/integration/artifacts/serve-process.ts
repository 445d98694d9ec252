/**
 * `bpa serve` as a process for the artifact tests: an empty site watched from a directory (so
 * a reconcile touches nothing), the given state directory and upload token, on a free
 * loopback port. Stopped by its PID.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnBpa, waitFor } from '../apply/harness.js';

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process logged so far. */
  log(): string;
  /** The process's peak resident memory so far (VmHWM), in KiB. */
  peakRssKiB(): Promise<number>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export const TOKEN = 'artifact-upload-token-for-tests';

export async function startServe(
  dir: string,
  opts: { listen?: string; extra?: string[]; token?: string | false } = {},
): Promise<ServeProcess> {
  const site = join(dir, 'site');
  await mkdir(site, { recursive: true });
  const args = [
    'serve',
    '--watch',
    site,
    '--state',
    join(dir, 'state'),
    '--listen',
    opts.listen ?? '127.0.0.1:0',
    '--interval',
    '1h',
  ];
  if (opts.token !== false) {
    await writeFile(join(dir, 'token'), `${opts.token ?? TOKEN}\n`, { mode: 0o600 });
    args.push('--artifacts-token-file', join(dir, 'token'));
  }
  const child = spawnBpa([...args, ...(opts.extra ?? [])]);
  let out = '';
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await Promise.race([
    waitFor('the server URL', async () => /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1], 30_000, 50),
    exited.then(() => {
      throw new Error(`bpa serve exited: ${out}`);
    }),
  ]);
  return {
    url,
    child,
    log: () => out,
    async peakRssKiB() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
