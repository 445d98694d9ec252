/**
 * CPU time of bringing a site path into an empty cache: bpa's syncRepo (its own process, the
 * sync alone: bench/sync-once.ts) against native git on the same repository (bench/git.ts:
 * 2,000 files, 5,000 commits, on the test git server): `git clone --depth 1` (user + sys of
 * git and its children, from /usr/bin/time; the server's upload-pack is not counted for
 * either). Alternating runs, medians.
 *   npx tsx bench/git-cpu.ts [--runs 5] [--profile DIR]   (--profile: a CPU profile of bpa's sync)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGitServer } from '../test/fakes/git-server.js';
import { buildSiteRepo, median } from './git.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const runs = argv.includes('--runs') ? Number(argv[argv.indexOf('--runs') + 1]) : 5;
const profile = argv.includes('--profile') ? argv[argv.indexOf('--profile') + 1] : undefined;

interface Cpu {
  wallMs: number;
  userMs: number;
  sysMs: number;
}

function exec(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    };
    execFile(cmd, args, { cwd, env, maxBuffer: 1 << 26 }, (err, out, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr}`)) : resolve(out),
    );
  });
}

const server = await startGitServer();
const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-git-cpu-'));
try {
  const repo = await buildSiteRepo(server, 'site');
  console.log(`repository: ${repo.files} files, ${repo.commits} commits`);
  const bpa: Cpu[] = [];
  const native: Cpu[] = [];
  const runBpa = async (i: number): Promise<void> => {
    const dir = join(tmp, `bpa-${i}`);
    const node = [
      ...(profile && i === 0 ? ['--cpu-prof', '--cpu-prof-dir', profile] : []),
      '--import',
      'tsx',
      join(root, 'bench', 'sync-once.ts'),
      repo.url,
      dir,
      'sites/bench',
    ];
    const out = await exec(process.execPath, node, root);
    bpa.push(JSON.parse(out.trim().split('\n').pop() ?? '{}') as Cpu);
    await rm(dir, { recursive: true, force: true });
  };
  const runNative = async (i: number): Promise<void> => {
    const dir = join(tmp, `native-${i}`);
    const cpuFile = join(tmp, 'cpu');
    const t0 = performance.now();
    await exec(
      '/usr/bin/time',
      ['-f', '%U %S', '-o', cpuFile, 'git', 'clone', '--quiet', '--depth', '1', repo.url, dir],
      tmp,
    );
    const wallMs = performance.now() - t0;
    const [user = NaN, sys = NaN] = (await readFile(cpuFile, 'utf8')).trim().split(' ').map(Number);
    native.push({ wallMs, userMs: user * 1000, sysMs: sys * 1000 });
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < runs; i++) {
    if (i % 2) {
      await runNative(i);
      await runBpa(i);
    } else {
      await runBpa(i);
      await runNative(i);
    }
  }
  const row = (name: string, xs: Cpu[]): string =>
    `${name}: wall ${median(xs.map((x) => x.wallMs)).toFixed(0)} ms, user ${median(xs.map((x) => x.userMs)).toFixed(0)} ms, sys ${median(xs.map((x) => x.sysMs)).toFixed(0)} ms, user+sys ${median(xs.map((x) => x.userMs + x.sysMs)).toFixed(0)} ms`;
  console.log(row('bpa syncRepo (site path)', bpa));
  console.log(row('git clone --depth 1     ', native));
  const cpu = (xs: Cpu[]): number => median(xs.map((x) => x.userMs + x.sysMs));
  console.log(`CPU ratio bpa / native: ${(cpu(bpa) / cpu(native)).toFixed(2)}× (target ≤ 3×)`);
  console.log(
    `runs: bpa ${bpa.map((x) => (x.userMs + x.sysMs).toFixed(0)).join(' ')}; native ${native.map((x) => (x.userMs + x.sysMs).toFixed(0)).join(' ')}`,
  );
} finally {
  await server.stop();
  await rm(tmp, { recursive: true, force: true });
}
