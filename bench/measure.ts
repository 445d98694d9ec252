/** Runs a command as a whole process under /usr/bin/time and returns wall time and peak RSS. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Measured {
  seconds: number;
  peakMiB: number;
  code: number;
  stdout: string;
}

export async function measure(
  cmd: string,
  args: string[],
  opts: { cwd?: string } = {},
): Promise<Measured> {
  const dir = await mkdtemp(join(tmpdir(), 'bpa-bench-'));
  const out = join(dir, 'time');
  try {
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        '/usr/bin/time',
        ['-o', out, '-f', '%e %M', cmd, ...args],
        { cwd: opts.cwd, maxBuffer: 1 << 28 },
        (err, so) => {
          resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout: so });
        },
      );
    });
    const last = (await readFile(out, 'utf8')).trim().split('\n').pop() ?? '';
    const [secs = 'NaN', kb = 'NaN'] = last.split(' ');
    return { seconds: Number(secs), peakMiB: Number(kb) / 1024, code, stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The run with the median wall time of `n` runs. */
export async function median(n: number, run: () => Promise<Measured>): Promise<Measured> {
  const runs: Measured[] = [];
  for (let i = 0; i < n; i++) runs.push(await run());
  runs.sort((a, b) => a.seconds - b.seconds);
  return runs[Math.floor(runs.length / 2)] as Measured;
}

export function fmt(m: Measured): string {
  return `${m.seconds.toFixed(2)} s, peak ${m.peakMiB.toFixed(0)} MiB`;
}
