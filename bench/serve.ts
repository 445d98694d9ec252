/**
 * `bpa serve` as a process, against the test git server (real git http-backend) and test hosts
 * (network namespaces with sshd, the reference installer):
 *   (a) a no-op poll (remote unchanged): its HTTP requests, its duration, and that no SSH happens;
 *   (b) a shallow clone of a 2,000-file, 5,000-commit repository, bpa vs native git (bench/git.ts);
 *   (c) latency from a signed webhook push to the first apply step;
 *   (d) RSS of the serve process over 500 no-op cycles;
 *   (e) the warm path: one-file commits of a 10,000-host site, fetched revision → plan ready,
 *       against a cold `bpa plan`, and memory over 500 of them (bench/serve-warm.ts).
 * Run as root, after `npm run build` (it runs bin/bpa):
 *   npx tsx bench/serve.ts [--only abcde] [--rss-cycles 500] [--changes 500] [--warm-shape block]
 *     [--warm-profile FILE]   (e: a CPU profile of the warm reconciles only, for a profile viewer)
 * Without root (or without ansible-playbook) only (b) and (e) run.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  startGitServer,
  type GitServer,
  type RecordedGitRequest,
} from '../test/fakes/git-server.js';
import { canRunLab, startLab, type Lab, type LabHost } from '../test/lab/lab.js';
import { ROOT, labArgs, labReady, spawnBpa, waitFor } from '../test/integration/apply/harness.js';
import {
  updateLabSite,
  writeLabSite,
  type LabSiteNode,
} from '../test/integration/apply/lab-site.js';
import { isShape, type SiteShape } from './gen-site.js';
import { buildSiteRepo, compareShallowClones, median, type CloneRun } from './git.js';
import { benchWarm } from './serve-warm.js';
import { readTree } from '../test/fakes/tree.js';
import { sendPush } from '../test/fakes/webhook.js';

const SECRET = 'bench-webhook-secret';
const CLONES = 3;
/** No-op polls measured in (a). */
const NOOP_POLLS = 25;
const WEBHOOK_PUSHES = 5;
const RSS_EVERY = 50;

interface Row {
  figure: string;
  result: string;
  target: string;
  met: boolean | undefined;
}
const rows: Row[] = [];

// ---------------------------------------------------------------------------------------------
// bpa serve as a child process, its JSON log lines timestamped on arrival.

interface LogLine {
  /** performance.now() when the line reached this process. */
  at: number;
  msg: string;
  rec: Record<string, unknown>;
}

interface Serve {
  child: ChildProcess;
  url: string;
  lines: LogLine[];
  stop(): Promise<void>;
}

async function startServe(args: string[]): Promise<Serve> {
  const child = spawnBpa(['serve', ...args]);
  const lines: LogLine[] = [];
  let partial = '';
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const at = performance.now();
    const text = partial + chunk.toString('utf8');
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      tail = (tail + line + '\n').slice(-4000);
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        lines.push({ at, msg: typeof rec['msg'] === 'string' ? rec['msg'] : '', rec });
      } catch {
        lines.push({ at, msg: '', rec: { raw: line } });
      }
    }
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const url = await waitFor(
      'bpa serve to listen',
      async () => {
        if (child.exitCode !== null) throw new Error(`bpa serve exited ${child.exitCode}: ${tail}`);
        const started = lines.find((l) => l.msg === 'bpa serve started');
        return typeof started?.rec['url'] === 'string' ? started.rec['url'] : undefined;
      },
      30_000,
      20,
    );
    return { child, url, lines, stop };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Sum of the samples of `name` whose labels contain every `label="value"` in `match`. */
function metricSum(text: string, name: string, match: Record<string, string> = {}): number {
  let total = 0;
  const re = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
  for (const m of text.matchAll(re)) {
    const labels = m[1] ?? '';
    if (Object.entries(match).every(([k, v]) => labels.includes(`${k}="${v}"`)))
      total += Number(m[2]);
  }
  return total;
}

interface ServeStatus {
  running: boolean;
  queued: boolean;
  lastReconcile: { result: string; trigger: string } | null;
}

async function status(url: string): Promise<ServeStatus> {
  return (await (await fetch(`${url}/api/v1/status`)).json()) as ServeStatus;
}

async function waitReady(serve: Serve): Promise<void> {
  await waitFor(
    'the first reconcile',
    async () => {
      if (serve.child.exitCode !== null)
        throw new Error(`bpa serve exited ${serve.child.exitCode}`);
      return (await fetch(`${serve.url}/readyz`)).status === 200 ? true : undefined;
    },
    240_000,
    200,
  );
}

// ---------------------------------------------------------------------------------------------
// The site and the lab.

/** sshd runs with LogLevel VERBOSE: one `Connection from` line per TCP connection accepted. */
async function sshConnections(hosts: readonly LabHost[]): Promise<number> {
  let n = 0;
  for (const h of hosts) {
    const text = await readFile(join(h.dir, 'sshd.log'), 'utf8').catch(() => '');
    n += text.split('\n').filter((l) => l.includes('Connection from ')).length;
  }
  return n;
}

/** TCP connections to port 22 established right now, over every host (ss in the host's netns). */
async function sshSessions(lab: Lab): Promise<number> {
  let n = 0;
  for (const h of lab.hosts) {
    const r = await lab.exec(h.name, ['ss', '-Htn', 'state', 'established', '( sport = :22 )']);
    n += r.stdout.split('\n').filter((l) => l.trim()).length;
  }
  return n;
}

const ms = (x: number): string => `${x.toFixed(1)} ms`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
const reqText = (r: RecordedGitRequest): string =>
  `${r.method} ${r.path.replace(/^\/[^/]+/, '')}${r.query ? `?${r.query}` : ''}`;
const isRefAdvert = (r: RecordedGitRequest): boolean =>
  r.method === 'GET' && r.path.endsWith('/info/refs') && r.query === 'service=git-upload-pack';
const isPack = (r: RecordedGitRequest): boolean =>
  r.method === 'POST' && r.path.endsWith('/git-upload-pack');

// ---------------------------------------------------------------------------------------------
// (b) shallow clone, bpa vs native.

async function benchClone(git: GitServer, tmp: string): Promise<void> {
  const repo = await buildSiteRepo(git, 'big-site');
  console.log(
    `\n(b) shallow clone, ${repo.files} files / ${repo.commits} commits (repository built in ${repo.seconds.toFixed(1)} s)`,
  );
  console.log(
    `    method: syncRepo (isomorphic-git, depth 1, in this process) and \`git clone --depth 1 --branch main\` of the same URL from the test git server, one of each per run in alternating order, each into an empty directory; median of ${CLONES}; CPU: process.cpuUsage() for bpa, /usr/bin/time for git (client side only)`,
  );
  // On disk, as a site's state directory would be; on tmpfs the cost of creating 2,000 files
  // drops out and what is left is the git work itself.
  const places: Array<{ label: string; dir: string }> = [{ label: `disk (${tmp})`, dir: tmp }];
  if (existsSync('/dev/shm'))
    places.push({ label: 'tmpfs (/dev/shm)', dir: await mkdtemp('/dev/shm/bpa-bench-serve-') });
  try {
    for (const place of places) {
      const { bpa, native } = await compareShallowClones(repo.url, place.dir, CLONES);
      const b = median(bpa.map((r) => r.wallMs));
      const n = median(native.map((r) => r.wallMs));
      const ratio = b / n;
      const cpu = (rs: CloneRun[]): string =>
        rs.map((r) => `${r.userMs.toFixed(0)}+${r.sysMs.toFixed(0)}`).join(', ');
      console.log(`    ${place.label}:`);
      console.log(
        `      bpa: ${bpa.map((r) => ms(r.wallMs)).join(', ')} -> median ${ms(b)}; CPU user+sys ms ${cpu(bpa)}`,
      );
      console.log(
        `      git: ${native.map((r) => ms(r.wallMs)).join(', ')} -> median ${ms(n)}; CPU user+sys ms ${cpu(native)}`,
      );
      console.log(`      ratio bpa/git: ${ratio.toFixed(2)}x`);
      rows.push({
        figure: `(b) shallow clone, ${place.label.replace(/ \(.*/, '')}`,
        result: `bpa ${ms(b)} vs git ${ms(n)} (${ratio.toFixed(2)}x)`,
        target: 'within 2x',
        met: ratio <= 2,
      });
    }
  } finally {
    for (const place of places.slice(1)) await rm(place.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// (a) no-op polls.

interface Snapshot {
  metrics: string;
  requests: number;
  sshConnections: number;
}

/**
 * Counters that belong together: the git server's request count and sshd's connection count are
 * read between two /metrics scrapes with the scheduler idle in between and bpa_reconcile_total
 * equal in both, so no poll was in flight or finished while they were read.
 */
async function snapshot(serve: Serve, git: GitServer, lab: Lab): Promise<Snapshot> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const before = await metrics(serve.url);
    const requests = git.requests.length;
    const ssh = await sshConnections(lab.hosts);
    const s = await status(serve.url);
    const after = await metrics(serve.url);
    if (
      !s.running &&
      metricSum(before, 'bpa_reconcile_total') === metricSum(after, 'bpa_reconcile_total')
    ) {
      return { metrics: after, requests, sshConnections: ssh };
    }
  }
  throw new Error('no quiet moment between polls for a consistent snapshot');
}

async function benchNoopPoll(
  serve: Serve,
  git: GitServer,
  lab: Lab,
  startupSsh: number,
): Promise<void> {
  // The first poll after the startup reconcile fetches bpa's own status commit; wait past it.
  await waitFor(
    'settled no-op polls',
    async () =>
      metricSum(await metrics(serve.url), 'bpa_reconcile_total', { result: 'skipped' }) >= 3
        ? true
        : undefined,
    60_000,
    100,
  );
  const s0 = await snapshot(serve, git, lab);
  const skipped0 = metricSum(s0.metrics, 'bpa_reconcile_total', { result: 'skipped' });
  await waitFor(
    `${NOOP_POLLS} no-op polls`,
    async () =>
      metricSum(await metrics(serve.url), 'bpa_reconcile_total', { result: 'skipped' }) >=
      skipped0 + NOOP_POLLS
        ? true
        : undefined,
    60_000,
    100,
  );
  const s1 = await snapshot(serve, git, lab);
  const sessions = await sshSessions(lab);

  const d = (name: string, match: Record<string, string> = {}): number =>
    metricSum(s1.metrics, name, match) - metricSum(s0.metrics, name, match);
  const polls = d('bpa_reconcile_total', { result: 'skipped' });
  const allRuns = d('bpa_reconcile_total');
  const sum = d('bpa_reconcile_duration_seconds_sum', { result: 'skipped' });
  const count = d('bpa_reconcile_duration_seconds_count', { result: 'skipped' });
  const under50 = d('bpa_reconcile_duration_seconds_bucket', { result: 'skipped', le: '0.05' });
  const under100 = d('bpa_reconcile_duration_seconds_bucket', { result: 'skipped', le: '0.1' });
  const reqs = git.requests.slice(s0.requests, s1.requests);
  const adverts = reqs.filter(isRefAdvert).length;
  const packs = reqs.filter(isPack).length;
  const other = reqs.filter((r) => !isRefAdvert(r) && !isPack(r));
  const newSsh = s1.sshConnections - s0.sshConnections;
  const meanMs = (sum / count) * 1000;
  const kinds = [...new Set(reqs.map(reqText))];

  console.log(
    `\n(a) no-op poll (remote unchanged), ${polls} consecutive polls of bpa serve (one signed webhook every 200 ms)`,
  );
  console.log(
    '    method: a 1-host lab, one cluster applied by the reference installer at startup; two consistent snapshots (scheduler idle, bpa_reconcile_total equal before and after) around the polls; requests from the git server\'s log; duration from /metrics bpa_reconcile_duration_seconds{result="skipped"} (delta sum / delta count); SSH from the lab hosts\' sshd logs (LogLevel VERBOSE, one "Connection from" line per accepted connection) plus established :22 sockets (ss in each host\'s netns)',
  );
  console.log(`    reconciles between snapshots: ${allRuns} (all results), ${polls} skipped`);
  console.log(
    `    HTTP requests: ${reqs.length} = ${(reqs.length / polls).toFixed(2)} per poll; ref advertisements ${adverts}, pack downloads (POST git-upload-pack) ${packs}, other ${other.length}; distinct: ${kinds.join(' | ')}`,
  );
  console.log(
    `    duration: mean ${ms(meanMs)} over ${count} polls; ${under50}/${count} at or under 50 ms, ${under100}/${count} at or under 100 ms (histogram buckets)`,
  );
  console.log(
    `    SSH: ${newSsh} new sshd connections during the polls (positive control: the startup reconcile made ${startupSsh}); ${sessions} established :22 sockets afterwards`,
  );
  const requestsOk =
    polls > 0 && allRuns === polls && adverts === polls && packs === 0 && other.length === 0;
  rows.push({
    figure: '(a) no-op poll: requests',
    result: `${(reqs.length / polls).toFixed(2)} per poll (${adverts} GET info/refs, ${packs} POST upload-pack over ${polls} polls)`,
    target: '1 ref advertisement, no pack',
    met: requestsOk,
  });
  rows.push({
    figure: '(a) no-op poll: duration',
    result: `mean ${ms(meanMs)} (${under50}/${count} <= 50 ms)`,
    target: '-',
    met: undefined,
  });
  rows.push({
    figure: '(a) no-op poll: SSH',
    result: `${newSsh} connections, ${sessions} open (startup: ${startupSsh})`,
    target: 'none',
    met: newSsh === 0 && sessions === 0 && startupSsh > 0,
  });
}

// ---------------------------------------------------------------------------------------------
// (d) RSS over no-op cycles.

async function vmRssKiB(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(text);
  if (!m?.[1]) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

async function benchRss(serve: Serve, intervalMs: number, cycles: number): Promise<void> {
  const pid = serve.child.pid;
  if (pid === undefined) throw new Error('bpa serve has no pid');
  const comm = (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
  const samples: Array<{ cycle: number; rss: number; heap: number }> = [];
  const t0 = performance.now();
  let mark = RSS_EVERY;
  while (mark <= cycles) {
    if (serve.child.exitCode !== null) throw new Error(`bpa serve exited ${serve.child.exitCode}`);
    const text = await metrics(serve.url);
    const cycle = metricSum(text, 'bpa_reconcile_total');
    if (cycle >= mark) {
      samples.push({
        cycle,
        rss: await vmRssKiB(pid),
        heap: metricSum(text, 'bpa_nodejs_heap_size_used_bytes') / 1024,
      });
      while (mark <= cycle) mark += RSS_EVERY;
      continue;
    }
    if (performance.now() - t0 > cycles * 1000)
      throw new Error(`only ${cycle} of ${cycles} cycles in ${cycles} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - t0) / 1000;
  const failed = metricSum(await metrics(serve.url), 'bpa_reconcile_total', { result: 'failed' });
  const at = (c: number): { cycle: number; rss: number; heap: number } =>
    samples.find((s) => s.cycle >= c) ?? samples[samples.length - 1]!;
  const a = at(100);
  const b = samples[samples.length - 1]!;
  const growth = b.rss - a.rss;
  const pct = (growth / a.rss) * 100;
  const later = samples.filter((s) => s.cycle >= a.cycle);
  const lo = Math.min(...later.map((s) => s.rss));
  const hi = Math.max(...later.map((s) => s.rss));
  console.log(
    `\n(d) RSS of bpa serve (pid ${pid}, ${comm}) over ${cycles} cycles, one signed webhook every ${intervalMs} ms (${seconds.toFixed(0)} s; ${failed} failed cycles)`,
  );
  console.log(
    `    method: VmRSS from /proc/<pid>/status whenever bpa_reconcile_total (all results, the startup reconcile is cycle 1) passes a multiple of ${RSS_EVERY}; /metrics scraped every 250 ms; heap = bpa_nodejs_heap_size_used_bytes from the same scrape`,
  );
  console.log('    cycle   VmRSS       heap used');
  for (const s of samples)
    console.log(
      `    ${String(s.cycle).padStart(5)}   ${mib(s.rss).padStart(9)}   ${mib(s.heap).padStart(9)}`,
    );
  const signed = (x: number): string => `${x >= 0 ? '+' : ''}${mib(x)}`;
  console.log(
    `    growth from cycle ${a.cycle} to ${b.cycle}: ${signed(growth)} (${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %); range over those samples ${mib(lo)} .. ${mib(hi)}; heap used ${signed(b.heap - a.heap)}`,
  );
  // Flat: no more than 5 % growth over the window. A drop (V8 giving pages back) is no leak.
  rows.push({
    figure: `(d) RSS over ${cycles} no-op cycles`,
    result: `${mib(a.rss)} at ${a.cycle} -> ${mib(b.rss)} at ${b.cycle} (${signed(growth)}, ${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %)`,
    target: 'flat (<= +5 %)',
    met: pct <= 5,
  });
}

// ---------------------------------------------------------------------------------------------
/**
 * Sends a signed push notification every `everyMs` until stopped: each starts a reconcile of
 * an unchanged remote, a no-op poll (notifications that arrive while one runs are coalesced).
 */
function pumpWebhooks(url: string, everyMs: number): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sendPush(url, SECRET).catch(() => undefined);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

// (c) webhook push to the start of apply.

async function webhook(url: string): Promise<{ status: number; sentAt: number }> {
  const sentAt = performance.now();
  const r = await sendPush(url, SECRET);
  await r.arrayBuffer();
  return { status: r.status, sentAt };
}

/** The first line at or after `from` whose msg is `msg`. */
async function nextLine(
  serve: Serve,
  from: number,
  msg: string,
  timeoutMs: number,
): Promise<LogLine> {
  try {
    return await waitFor(
      `"${msg}" in the serve log`,
      async () => {
        if (serve.child.exitCode !== null)
          throw new Error(`bpa serve exited ${serve.child.exitCode}`);
        return serve.lines.slice(from).find((l) => l.msg === msg);
      },
      timeoutMs,
      5,
    );
  } catch (err: unknown) {
    // What serve did instead, so a failed run can be understood from its output alone.
    const seen = serve.lines
      .slice(from)
      .filter((l) => !l.rec['installer'])
      .slice(-40);
    throw new Error(
      `${String(err)}; serve logged since:\n${seen.map((l) => `  ${JSON.stringify(l.rec)}`).join('\n')}`,
    );
  }
}

async function benchWebhook(
  serve: Serve,
  git: GitServer,
  lab: Lab,
  siteDir: string,
  master: LabSiteNode,
): Promise<void> {
  // A second host for the worker; the push that adds it to the inventory is not measured.
  await lab.addHost();
  await writeLabSite(lab.hosts, { cluster: 'lab', nodes: [master] }, siteDir);
  await git.commitAs(
    'site',
    {
      'site/inventory/hosts.yaml': await readFile(join(siteDir, 'inventory', 'hosts.yaml'), 'utf8'),
    },
    'inventory: a second host',
  );
  {
    const mark = serve.lines.length;
    const { status: code } = await webhook(serve.url);
    if (code !== 202) throw new Error(`webhook answered ${code}`);
    await nextLine(serve, mark, 'reconcile finished', 240_000);
  }
  const runs: Array<{
    latency: number;
    toReconcile: number;
    action: string;
    result: string;
    total: number;
  }> = [];
  for (let i = 0; i < WEBHOOK_PUSHES; i++) {
    const add = i % 2 === 0;
    // A new node name for every add, on the same host: bpa's journal skips work it did before,
    // so re-adding a node it removed earlier would do nothing (see the report on this bench).
    const worker: LabSiteNode = {
      name: `worker-${Math.floor(i / 2) + 1}`,
      roles: ['worker'],
      host: 1,
    };
    await updateLabSite(siteDir, lab.hosts, {
      cluster: 'lab',
      nodes: add ? [master, worker] : [master],
    });
    await git.commitAs(
      'site',
      { 'site/cluster.yaml': await readFile(join(siteDir, 'cluster.yaml'), 'utf8') },
      `${add ? 'add' : 'remove'} ${worker.name}`,
    );
    const mark = serve.lines.length;
    const { status: code, sentAt } = await webhook(serve.url);
    if (code !== 202) throw new Error(`webhook answered ${code}`);
    const started = await nextLine(serve, mark, 'reconcile started', 30_000);
    const step = await nextLine(serve, mark, 'step started', 60_000);
    const finished = await nextLine(serve, mark, 'reconcile finished', 240_000);
    await waitFor(
      'the scheduler to go idle',
      async () => {
        const s = await status(serve.url);
        return !s.running && !s.queued ? true : undefined;
      },
      60_000,
      50,
    );
    runs.push({
      latency: step.at - sentAt,
      toReconcile: started.at - sentAt,
      action: String(step.rec['action'] ?? '?'),
      result: String(finished.rec['result'] ?? '?'),
      total: finished.at - sentAt,
    });
  }
  const lat = runs.map((r) => r.latency);
  const lo = Math.min(...lat);
  const mid = median(lat);
  const hi = Math.max(...lat);
  console.log(
    `\n(c) webhook push to the start of apply, ${WEBHOOK_PUSHES} pushes (a worker added and removed alternately, a new name each time: worker-1, -1, -2, -2, -3; bpa serve --interval 1h --prune)`,
  );
  console.log(
    '    method: a person\'s commit straight into the bare repository, then POST /hooks/git signed with X-Hub-Signature-256 (secret from --webhook-secret-file); latency = from just before the POST to the arrival of the first "step started" JSON log line on serve\'s stderr',
  );
  for (const [i, r] of runs.entries()) {
    console.log(
      `    push ${i + 1}: ${ms(r.latency)} to "step started" (${r.action}); "reconcile started" after ${ms(r.toReconcile)}; reconcile ${r.result} after ${(r.total / 1000).toFixed(1)} s`,
    );
  }
  console.log(`    min ${ms(lo)}, median ${ms(mid)}, max ${ms(hi)}`);
  const ok = runs.every((r) => r.result === 'applied');
  rows.push({
    figure: '(c) webhook push -> apply start',
    result: `min ${ms(lo)} / median ${ms(mid)} / max ${ms(hi)}${ok ? '' : ' (a reconcile did not apply)'}`,
    target: 'under 1 s',
    met: ok && hi < 1000,
  });
}

// ---------------------------------------------------------------------------------------------

function printSummary(): void {
  console.log('\nSummary');
  const w = [
    Math.max(6, ...rows.map((r) => r.figure.length)),
    Math.max(6, ...rows.map((r) => r.result.length)),
    Math.max(6, ...rows.map((r) => r.target.length)),
  ];
  const line = (a: string, b: string, c: string, d: string): string =>
    `| ${a.padEnd(w[0]!)} | ${b.padEnd(w[1]!)} | ${c.padEnd(w[2]!)} | ${d.padEnd(3)} |`;
  console.log(line('figure', 'result', 'target', 'met'));
  console.log(`|${'-'.repeat(w[0]! + 2)}|${'-'.repeat(w[1]! + 2)}|${'-'.repeat(w[2]! + 2)}|-----|`);
  for (const r of rows)
    console.log(
      line(r.figure, r.result, r.target, r.met === undefined ? '-' : r.met ? 'yes' : 'NO'),
    );
}

/** `--only ac`: the figures to run (default all). */
function selected(argv: string[]): Set<string> {
  const i = argv.indexOf('--only');
  const letters = i >= 0 ? (argv[i + 1] ?? '') : 'abcde';
  if (!/^[abcde]+$/.test(letters))
    throw new Error(`--only takes letters of abcde, got ${JSON.stringify(letters)}`);
  return new Set(letters);
}

/** `--rss-cycles N` for (d) (default 500). */
function rssCycles(argv: string[]): number {
  const i = argv.indexOf('--rss-cycles');
  const n = i >= 0 ? Number(argv[i + 1]) : 500;
  if (!Number.isInteger(n) || n < 2 * RSS_EVERY)
    throw new Error(`--rss-cycles takes an integer of at least ${2 * RSS_EVERY}`);
  return n;
}

/** `--changes N` and `--warm-shape S` for (e). */
function warmOptions(argv: string[]): {
  changes: number;
  shape: SiteShape;
  profile?: string;
} {
  const c = argv.indexOf('--changes');
  const changes = c >= 0 ? Number(argv[c + 1]) : 500;
  if (!Number.isInteger(changes) || changes < 1)
    throw new Error('--changes takes a positive integer');
  const s = argv.indexOf('--warm-shape');
  const shape = s >= 0 ? (argv[s + 1] ?? '') : 'block';
  if (!isShape(shape)) throw new Error(`unknown --warm-shape ${shape}`);
  const p = argv.indexOf('--warm-profile');
  return { changes, shape, ...(p >= 0 && argv[p + 1] ? { profile: argv[p + 1] } : {}) };
}

async function main(): Promise<number> {
  const only = selected(process.argv.slice(2));
  const cycles = rssCycles(process.argv.slice(2));
  const warm = warmOptions(process.argv.slice(2));
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
    console.error('bench/serve.ts runs bin/bpa: build it first with `npm run build`');
    return 2;
  }
  const cleanups: Array<() => Promise<unknown>> = [];
  const cleanup = async (): Promise<void> => {
    while (cleanups.length)
      await cleanups.pop()!().catch((err: unknown) => console.error(`cleanup: ${String(err)}`));
  };
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const t0 = performance.now();
  try {
    const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-serve-'));
    cleanups.push(() => rm(tmp, { recursive: true, force: true }));
    const git = await startGitServer();
    cleanups.push(() => git.stop());
    console.log(`bpa serve benchmarks (node ${process.version}, ${process.platform})`);

    if (only.has('b')) await benchClone(git, tmp);
    if (only.has('e')) rows.push(...(await benchWarm(git, tmp, ROOT, { ...warm, hosts: 10_000 })));

    const needLab = only.has('a') || only.has('c') || only.has('d');
    const canLab =
      needLab && process.getuid?.() === 0 && labReady(canRunLab({ isolatedPackages: true }));
    if (!needLab) {
      // Nothing else asked for.
    } else if (!canLab) {
      console.log(
        '\n(a), (c), (d) skipped: they need root (test hosts in network namespaces) and ansible-playbook',
      );
    } else {
      const lab = await startLab({ hosts: 1, isolatedPackages: true });
      cleanups.push(() => lab.stop());
      const master: LabSiteNode = { name: 'master-1', roles: ['master'], host: 0 };
      const siteDir = await writeLabSite(
        lab.hosts,
        { cluster: 'lab', nodes: [master] },
        join(tmp, 'site'),
      );
      const repo = await git.createRepo('site', { files: await readTree(siteDir, 'site') });
      const secretFile = join(tmp, 'webhook-secret');
      await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
      const state = join(tmp, 'state');
      const common = [
        '--repo',
        repo,
        '--path',
        'site',
        '--listen',
        '127.0.0.1:0',
        '--webhook-secret-file',
        secretFile,
        ...labArgs(lab, state).filter((a) => a !== '--log-level' && a !== 'info'),
      ];
      const run = async <T>(args: string[], body: (s: Serve) => Promise<T>): Promise<T> => {
        const serve = await startServe([...common, ...args]);
        cleanups.push(() => serve.stop());
        try {
          return await body(serve);
        } finally {
          cleanups.pop();
          await serve.stop();
        }
      };

      const sshBefore = await sshConnections(lab.hosts);
      // Each figure has a serve process of its own; they share the state directory, so only the
      // first one provisions the cluster.
      // Polls are driven by signed webhooks (the same reconcile as an interval poll): the
      // interval has a 10 s minimum, far too slow for hundreds of cycles.
      if (only.has('a')) {
        await run(['--interval', '1h'], async (serve) => {
          await waitReady(serve);
          const stop = pumpWebhooks(serve.url, 200);
          cleanups.push(stop);
          const first = await status(serve.url);
          if (first.lastReconcile?.result !== 'applied')
            throw new Error(`the first reconcile was ${first.lastReconcile?.result}, not applied`);
          await benchNoopPoll(serve, git, lab, (await sshConnections(lab.hosts)) - sshBefore);
          cleanups.pop();
          await stop();
        });
      }
      if (only.has('d')) {
        await run(['--interval', '1h'], async (serve) => {
          await waitReady(serve);
          const stop = pumpWebhooks(serve.url, 100);
          cleanups.push(stop);
          await benchRss(serve, 100, cycles);
          cleanups.pop();
          await stop();
        });
      }
      if (only.has('c')) {
        await run(['--interval', '1h', '--prune'], async (serve) => {
          await waitReady(serve);
          await benchWebhook(serve, git, lab, siteDir, master);
        });
      }
    }
    printSummary();
    console.log(`\ntotal ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    return rows.every((r) => r.met !== false) ? 0 : 1;
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

process.exitCode = await main();
