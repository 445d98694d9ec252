/** Runs a command as a whole process under /usr/bin/time and returns wall time and peak RSS. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Measured {
  seconds: number;
  /** User + system CPU of the process and its children: less sensitive to a loaded machine. */
  cpuSeconds: number;
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
        ['-o', out, '-f', '%e %M %U %S', cmd, ...args],
        { cwd: opts.cwd, maxBuffer: 1 << 28 },
        (err, so) => {
          resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout: so });
        },
      );
    });
    const last = (await readFile(out, 'utf8')).trim().split('\n').pop() ?? '';
    const [secs = 'NaN', kb = 'NaN', user = 'NaN', sys = 'NaN'] = last.split(' ');
    return {
      seconds: Number(secs),
      cpuSeconds: Number(user) + Number(sys),
      peakMiB: Number(kb) / 1024,
      code,
      stdout,
    };
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
  return `${m.seconds.toFixed(2)} s (CPU ${m.cpuSeconds.toFixed(2)} s), peak ${m.peakMiB.toFixed(0)} MiB`;
}

export interface Comparison {
  floor: Measured;
  bpa: Measured;
  /** Median bpa time over median floor time. */
  ratio: number;
  /** Median bpa CPU time over median floor CPU time. */
  cpuRatio: number;
  /** Every run's wall time, in the order run. */
  floorRuns: number[];
  bpaRuns: number[];
  /** The 1-minute load average before and after the runs. */
  load: [number, number];
}

/**
 * Runs the floor and bpa alternately, `n` times each, so both see the same machine (a
 * shared machine's load drifts), and returns the median run of each.
 */
export async function compare(
  n: number,
  floor: () => Promise<Measured>,
  bpa: () => Promise<Measured>,
  check: (m: Measured) => void = () => undefined,
): Promise<Comparison> {
  const before = loadavg()[0] ?? 0;
  const f: Measured[] = [];
  const b: Measured[] = [];
  for (let i = 0; i < n; i++) {
    f.push(await floor());
    const m = await bpa();
    check(m);
    b.push(m);
  }
  const mid = (runs: Measured[]): Measured =>
    [...runs].sort((x, y) => x.seconds - y.seconds)[Math.floor(runs.length / 2)] as Measured;
  const fm = mid(f);
  const bm = mid(b);
  return {
    floor: fm,
    bpa: bm,
    ratio: bm.seconds / fm.seconds,
    cpuRatio: midOf(b.map((m) => m.cpuSeconds)) / midOf(f.map((m) => m.cpuSeconds)),
    floorRuns: f.map((m) => m.seconds),
    bpaRuns: b.map((m) => m.seconds),
    load: [before, loadavg()[0] ?? 0],
  };
}

function midOf(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
}

/** One line per shape: the floor, bpa, the ratio and peak memory. */
export function report(label: string, c: Comparison, target: number): string {
  return [
    `${label}`,
    `  floor (js-yaml 4 loadAll): ${fmt(c.floor)}   runs ${c.floorRuns.map((s) => s.toFixed(2)).join(' ')}`,
    `  bpa:                       ${fmt(c.bpa)}   runs ${c.bpaRuns.map((s) => s.toFixed(2)).join(' ')}`,
    `  bpa / floor = ${c.ratio.toFixed(2)} (budget ≤ ${target}×), CPU ${c.cpuRatio.toFixed(2)}   load average ${c.load[0].toFixed(2)} → ${c.load[1].toFixed(2)}`,
  ].join('\n');
}
