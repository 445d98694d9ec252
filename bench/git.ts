/**
 * The git layer against a real git http-backend: a site repository of 2,000 files and 5,000
 * commits (built with git fast-import), served by the test git server on loopback.
 *   (a) a no-op poll by syncRepo (remote unchanged): median time and the HTTP requests it makes;
 *   (b) a shallow clone by syncRepo vs native `git clone --depth 1` of the same URL, same run;
 *   (c) fetching one new commit into a warm shallow cache, and a status commit + push.
 * Run: npx tsx bench/git.ts. bench/serve.ts imports the repository builder and the clone
 * comparison from here, so both benchmarks measure the same repository the same way.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { syncRepo } from '../src/source/git.js';
import { commitAndPush } from '../src/source/git-push.js';
import {
  startGitServer,
  type GitServer,
  type RecordedGitRequest,
} from '../test/fakes/git-server.js';

export const FILES = 2_000;
export const COMMITS = 5_000;
const POLLS = 25;
const CLONES = 5;

function hostYaml(i: number, rev: number): string {
  const n = String(i).padStart(4, '0');
  return [
    'apiVersion: bpa.akraino.org/v1alpha1',
    'kind: Host',
    `metadata: { name: host-${n} }`,
    'spec:',
    `  mac: 52:54:00:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}:01`,
    `  rack: r${i % 40}`,
    `  revision: ${rev}`,
    '',
  ].join('\n');
}

/** One root commit with every file, then commits that each edit one file, round robin. */
function fastImportStream(): string {
  const parts: string[] = [];
  const data = (text: string): string => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let t = 1_700_000_000;
  parts.push(
    `commit refs/heads/main\ncommitter Person <p@example.org> ${t} +0000\n${data('site: 2,000 hosts')}`,
  );
  parts.push('deleteall\n');
  for (let i = 0; i < FILES; i++)
    parts.push(`M 644 inline sites/bench/hosts/host-${i}.yaml\n${data(hostYaml(i, 0))}`);
  for (let c = 1; c < COMMITS; c++) {
    const i = c % FILES;
    t += 60;
    parts.push(
      `commit refs/heads/main\ncommitter Person <p@example.org> ${t} +0000\n${data(`edit host-${i} (${c})`)}`,
    );
    parts.push(`M 644 inline sites/bench/hosts/host-${i}.yaml\n${data(hostYaml(i, c))}`);
  }
  return parts.join('');
}

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    };
    execFile(cmd, args, { cwd, env, maxBuffer: 1 << 26 }, (err, _out, stderr) =>
      err ? reject(new Error(stderr)) : resolve(),
    );
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const ms = (x: number): string => `${x.toFixed(1)} ms`;
const describeReqs = (rs: RecordedGitRequest[]): string =>
  rs
    .map((r) => `${r.method} ${r.path.replace(/^\/[^/]+/, '')}${r.query ? `?${r.query}` : ''}`)
    .join(', ');

export interface BenchRepo {
  url: string;
  files: number;
  commits: number;
  /** Time to build it, seconds. */
  seconds: number;
}

/** Creates `name` on `server`: FILES files, COMMITS commits on main, packed as a server keeps it. */
export async function buildSiteRepo(server: GitServer, name: string): Promise<BenchRepo> {
  const t0 = performance.now();
  // Empty history first: fast-import writes the real one, then one pack as a server keeps it.
  await server.createRepo(name, { files: {} });
  await server.git(name, ['update-ref', '-d', 'refs/heads/main']);
  await server.git(name, ['fast-import', '--quiet'], { input: fastImportStream() });
  await server.git(name, ['repack', '-adq']);
  const commits = Number((await server.git(name, ['rev-list', '--count', 'main'])).trim());
  const files = (await server.git(name, ['ls-tree', '-r', '--name-only', 'main']))
    .trim()
    .split('\n').length;
  return { url: server.repoUrl(name), files, commits, seconds: (performance.now() - t0) / 1000 };
}

export interface CloneRun {
  wallMs: number;
  /**
   * CPU time: for bpa this process's own (syncRepo runs in it, along with the test server's
   * request piping); for git the clone command and its children (not the server's upload-pack).
   */
  userMs: number;
  sysMs: number;
}

export interface CloneTimes {
  bpa: CloneRun[];
  native: CloneRun[];
}

/**
 * Shallow clones of `url` (branch main) by bpa's syncRepo and by native `git clone --depth 1`,
 * one of each per run, into empty directories under `dir` (removed afterwards). The order
 * alternates from run to run: on some file systems each clone of 2,000 files is slower than
 * the one before (the removals of earlier clones are still being paid for), which would
 * otherwise always favour whichever goes first.
 */
export async function compareShallowClones(
  url: string,
  dir: string,
  runs: number,
): Promise<CloneTimes> {
  const out: CloneTimes = { bpa: [], native: [] };
  const cpuFile = join(dir, 'clone-cpu');
  const bpa = async (i: number): Promise<void> => {
    const target = join(dir, `bpa-clone-${i}`);
    const cpu0 = process.cpuUsage();
    const wallMs = await timed(() => syncRepo({ url, ref: 'main', dir: target }));
    const cpu = process.cpuUsage(cpu0);
    out.bpa.push({ wallMs, userMs: cpu.user / 1000, sysMs: cpu.system / 1000 });
    await rm(target, { recursive: true, force: true });
  };
  const native = async (i: number): Promise<void> => {
    const target = join(dir, `native-clone-${i}`);
    const clone = ['git', 'clone', '--quiet', '--depth', '1', '--branch', 'main', url, target];
    const wallMs = await timed(() =>
      run('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, ...clone], dir),
    );
    const last = (await readFile(cpuFile, 'utf8')).trim().split('\n').pop() ?? '';
    const [user = NaN, sys = NaN] = last.split(' ').map(Number);
    out.native.push({ wallMs, userMs: user * 1000, sysMs: sys * 1000 });
    await rm(target, { recursive: true, force: true });
  };
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      await bpa(i);
      await native(i);
    } else {
      await native(i);
      await bpa(i);
    }
  }
  await rm(cpuFile, { force: true });
  return out;
}

async function main(): Promise<void> {
  const server: GitServer = await startGitServer();
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-git-'));
  try {
    const repo = await buildSiteRepo(server, 'site');
    const url = repo.url;
    console.log(
      `repository: ${repo.files} files, ${repo.commits} commits (built in ${repo.seconds.toFixed(1)} s)`,
    );

    const clones = await compareShallowClones(url, tmp, CLONES);
    const b = median(clones.bpa.map((r) => r.wallMs));
    const n = median(clones.native.map((r) => r.wallMs));
    console.log(
      `(b) shallow clone, median of ${CLONES}: bpa syncRepo ${ms(b)}, native git clone --depth 1 ${ms(n)} (ratio ${(b / n).toFixed(2)}x)`,
    );

    // (a) no-op polls against a warm cache.
    const dir = join(tmp, 'wc');
    await syncRepo({ url, ref: 'main', dir });
    const polls: number[] = [];
    let reqs: RecordedGitRequest[] = [];
    for (let i = 0; i < POLLS; i++) {
      server.requests.length = 0;
      polls.push(
        await timed(async () => {
          const r = await syncRepo({ url, ref: 'main', dir });
          if (r.changed) throw new Error('a no-op poll reported a change');
        }),
      );
      reqs = [...server.requests];
    }
    console.log(
      `(a) no-op poll, median of ${POLLS}: ${ms(median(polls))} (min ${ms(Math.min(...polls))}); ${reqs.length} request(s): ${describeReqs(reqs)}`,
    );

    // (c) incremental work on the warm cache.
    await server.commitAs(
      'site',
      { 'sites/bench/hosts/host-7.yaml': hostYaml(7, 99_999) },
      'edit one host',
    );
    server.requests.length = 0;
    const inc = await timed(() => syncRepo({ url, ref: 'main', dir }));
    console.log(
      `(c) one new commit into the warm shallow cache: ${ms(inc)}; ${server.requests.length} requests: ${describeReqs(server.requests)}`,
    );
    server.requests.length = 0;
    const push = await timed(() =>
      commitAndPush(
        { url, ref: 'main', dir },
        {
          files: { 'sites/bench/status/site.yaml': 'phase: Ready\n' },
          message: 'bpa: bench status',
          author: { name: 'bpa', email: 'bpa@example.org' },
          branch: 'main',
        },
      ),
    );
    console.log(
      `    status commit + push: ${ms(push)}; ${server.requests.length} requests: ${describeReqs(server.requests)}`,
    );
  } finally {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

// Imported by bench/serve.ts: run only when started as a script.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
