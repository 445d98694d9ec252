/**
 * (e) The warm path of `bpa serve`: a 10,000-host site in a repository on the test git server;
 * commits that each change one file, each followed by the reconcile steps up to the plan, in
 * this process, with the cache a serve process keeps (reconcile/reconciler.ts). Measured from
 * the fetched revision (the source step's sync returned) to the plan made, against a cold
 * `bpa plan` of the same checked-out site as a whole process; the process's RSS and heap are
 * printed every 100 changes. Part of bench/serve.ts (`--only e`); for a steady heap figure run
 * it with `NODE_OPTIONS=--expose-gc` (a collection before each reading).
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { OPTIONS, resolveConfig, type OptionName } from '../src/config/options.js';
import { createRun, warmCache } from '../src/reconcile/context.js';
import { STEPS, runSteps } from '../src/reconcile/steps.js';
import { GitSource } from '../src/source/git-source.js';
import type { SiteSource } from '../src/source/site-source.js';
import { silentLogger } from '../src/util/log.js';
import type { GitServer } from '../test/fakes/git-server.js';
import { readTree } from '../test/fakes/tree.js';
import { generateSite, type SiteShape } from './gen-site.js';
import { measure } from './measure.js';

export interface WarmRow {
  figure: string;
  result: string;
  target: string;
  met: boolean | undefined;
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const med = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

export async function benchWarm(
  git: GitServer,
  tmp: string,
  root: string,
  opts: { changes: number; shape: SiteShape; hosts: number; profile?: string },
): Promise<WarmRow[]> {
  const { changes, shape, hosts } = opts;
  const profiler = opts.profile ? await startProfiler() : undefined;
  console.log(`\n(e) warm path: ${hosts} hosts, shape ${shape}, ${changes} one-file commits`);
  const gen = await generateSite(join(tmp, `warm-${shape}`), hosts / 10, hosts, shape);
  const repoName = `warm-${shape}`;
  const t0 = performance.now();
  const url = await git.createRepo(repoName, { files: await readTree(gen.dir, 'site') });
  console.log(
    `  repository: ${gen.files} site files, ${(gen.bytes / 1e6).toFixed(1)} MB (${((performance.now() - t0) / 1000).toFixed(1)} s to create)`,
  );
  const stateDir = join(tmp, `warm-state-${shape}`);
  const git2 = new GitSource({ url, ref: 'main', path: 'site', stateDir });
  let fetchedAt = 0;
  const source: SiteSource = {
    describe: () => git2.describe(),
    sync: async () => {
      const r = await git2.sync();
      await profiler?.start();
      fetchedAt = performance.now();
      return r;
    },
    checkedOut: () => git2.checkedOut(),
    previousReports: (dir) => git2.previousReports(dir),
    publish: (dir, files, message) => git2.publish(dir, files, message),
  };
  const cache = warmCache();
  const names = Object.keys(OPTIONS) as OptionName[];
  const flags = { stateDir, leases: [gen.leaseFile] };
  /** One reconcile up to the plan: ms from the fetched revision to the plan. */
  const reconcile = async (): Promise<{ ms: number; siteDir: string }> => {
    let plannedAt = 0;
    const ctx = createRun({
      site: { kind: 'source', source, trigger: 'webhook', resyncIntervalMs: 3_600_000 },
      configFor: (site) => resolveConfig(names, flags, {}, site),
      env: {},
      log: silentLogger(),
      cache,
      onPlan: () => {
        plannedAt = performance.now();
      },
    });
    await runSteps(ctx, 'plan');
    if (!ctx.plan || ctx.problems.some((p) => p.severity === 'error'))
      throw new Error(`no plan: ${JSON.stringify(ctx.problems.slice(0, 3))}`);
    return { ms: plannedAt - fetchedAt, siteDir: ctx.siteDir as string };
  };

  // Each step's time in every warm run (the step functions wrapped for this bench only).
  const stepTimes = new Map<string, number[]>();
  const restore: Array<() => void> = [];
  for (const step of STEPS) {
    const original = step.run;
    const timed = step as { run: typeof original };
    timed.run = async (ctx) => {
      const t = performance.now();
      await original(ctx);
      stepTimes.set(step.name, [...(stepTimes.get(step.name) ?? []), performance.now() - t]);
    };
    restore.push(() => {
      timed.run = original;
    });
  }
  const first = await reconcile();
  await profiler?.stop();
  profiler?.profiles.pop(); // the cold reconcile
  stepTimes.clear();
  console.log(`  first reconcile (cold cache, in this process): ${first.ms.toFixed(0)} ms`);
  // A cold `bpa plan` of the same checked-out site at every memory reading: spread over the
  // run, it sees the same machine as the warm reconciles around it.
  const colds: number[] = [];
  const coldPlan = async (): Promise<void> => {
    const m = await measure(join(root, 'bin', 'bpa'), [
      'plan',
      first.siteDir,
      '--leases',
      gen.leaseFile,
      '--state',
      join(tmp, `warm-cold-state-${shape}`),
      '-o',
      'json',
    ]);
    if (m.code !== 2) throw new Error(`bpa plan exited ${m.code}: ${m.stdout.slice(0, 500)}`);
    colds.push(m.seconds * 1000);
  };

  const inventory = await readTree(join(gen.dir, 'inventory'), 'site/inventory');
  const hostFiles = Object.keys(inventory).sort();
  const times: number[] = [];
  const memory: string[] = [];
  const sample = (n: number): void => {
    // The test git server in this process records every request it answers (for the no-op
    // poll figure): that record is the bench's, not serve's, and is emptied before a reading.
    git.requests.splice(0);
    (globalThis as { gc?: () => void }).gc?.();
    // BPA_BENCH_HEAP_SNAPSHOTS=DIR: a heap snapshot at each reading, to compare what grows.
    const snapshots = process.env['BPA_BENCH_HEAP_SNAPSHOTS'];
    if (snapshots) writeHeapSnapshot(join(snapshots, `warm-${n}.heapsnapshot`));
    const m = process.memoryUsage();
    memory.push(`${n}: RSS ${mib(m.rss)}, heap ${mib(m.heapUsed)}`);
    console.log(
      `  after ${n} changes: RSS ${mib(m.rss)}, heap used ${mib(m.heapUsed)}, external ${mib(m.external)} (array buffers ${mib(m.arrayBuffers)}), cached files ${cache.files.size}`,
    );
  };
  sample(0);
  await coldPlan();
  for (let i = 1; i <= changes; i++) {
    const path = hostFiles[(i * 7) % hostFiles.length] as string;
    const text = inventory[path] as string;
    // A real change: the first host of the file gets another rack label.
    const changed = text.replace(/rack: r\S*/, `rack: r-${i}`);
    inventory[path] = changed;
    await git.commitAs(repoName, { [path]: changed }, `change ${i}`);
    const r = await reconcile();
    await profiler?.stop();
    const c = cache.files.counts;
    if (c.parsed !== 1 || c.read !== 1)
      throw new Error(`change ${i}: read ${c.read}, parsed ${c.parsed} files, not 1`);
    times.push(r.ms);
    if (i % 100 === 0 || i === changes) {
      sample(i);
      await coldPlan();
      const window = times.slice(-100);
      console.log(
        `    warm median of the last ${window.length}: ${med(window).toFixed(0)} ms; cold bpa plan now ${(colds.at(-1) ?? NaN).toFixed(0)} ms; load ${loadavg()[0]?.toFixed(1)}`,
      );
    }
  }
  for (const r of restore) r();
  if (profiler && opts.profile) {
    await writeFile(opts.profile, JSON.stringify(profiler.profiles));
    console.log(
      `  CPU profiles of the ${profiler.profiles.length} warm reconciles (fetched revision → plan): ${opts.profile}`,
    );
  }
  console.log(
    `  warm steps, median: ${[...stepTimes].map(([name, ts]) => `${name} ${med(ts).toFixed(0)} ms`).join(', ')}`,
  );
  const warm = med(times);
  const cold = { seconds: med(colds) / 1000 };
  const ratio = warm / (cold.seconds * 1000);
  console.log(
    `  fetched revision → plan ready: median ${warm.toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}); cold \`bpa plan\` median of ${colds.length} ${cold.seconds.toFixed(2)} s (${colds.map((c) => (c / 1000).toFixed(2)).join(' ')}): ${(ratio * 100).toFixed(1)}%`,
  );
  return [
    {
      figure: `(e) one-file commit of a ${hosts}-host site (${shape}): fetched revision → plan ready`,
      result: `median ${warm.toFixed(0)} ms over ${changes} commits = ${(ratio * 100).toFixed(1)}% of a cold \`bpa plan\` (median ${cold.seconds.toFixed(2)} s); 1 file read and parsed per commit`,
      target: '≤ 10% of a cold bpa plan',
      met: ratio <= 0.1,
    },
    {
      figure: `(e) memory over ${changes} such commits (this process)`,
      result: memory.join('; '),
      target: 'flat',
      met: undefined,
    },
  ];
}

/**
 * A CPU profiler for the warm reconciles: one profile from the fetched revision to the plan of
 * each (the first, cold reconcile included, then dropped), kept as a JSON array of profiles.
 */
async function startProfiler(): Promise<{
  start: () => Promise<void>;
  stop: () => Promise<void>;
  profiles: unknown[];
}> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  const profiles: unknown[] = [];
  let running = false;
  return {
    start: async () => {
      await session.post('Profiler.start');
      running = true;
    },
    stop: async () => {
      if (!running) return;
      running = false;
      profiles.push((await session.post('Profiler.stop')).profile);
    },
    profiles,
  };
}
