/**
 * The status page and the notifier at site scale:
 *   (a) `bpa serve --watch` on a generated site of 10,000 BareMetalHosts in 100 clusters
 *       (bench/gen-site.ts), its first reconcile done (the nodes are unreachable here, so the
 *       clusters fail: what a bad day looks like); then each page loaded in Debian's chromium
 *       (playwright-core), cold (new context, nothing cached) and warm (reloaded): the time to
 *       the load event and the bytes transferred (every response, headers and body, as the
 *       browser counted them), the median of 5 loads;
 *   (b) the notifier: events delivered per second to one local receiver (HTTP on loopback,
 *       answering 204), in order, with signatures; and the cost of working out the events of
 *       a reconcile of 1,000 clusters.
 * It runs in a loopback-only network namespace (it re-runs itself in one). Root, after
 * `npm run build`:
 *   npx tsx bench/ui.ts [--hosts 10000] [--clusters 100] [--events 5000]
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { chromium } from 'playwright-core';
import type { ReconcileSummary } from '../src/reconcile/summary.js';
import { Deliverer } from '../src/serve/notify/deliver.js';
import { emptyMemory, transitions, type NotifyEvent } from '../src/serve/notify/events.js';
import { createLogger } from '../src/util/log.js';
import { kill, spawnBpa, waitFor } from '../test/integration/apply/harness.js';
import { ensureLoopbackOnly } from '../test/netns/loopback-only.js';
import { generateSite } from './gen-site.js';

await ensureLoopbackOnly();

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const HOSTS = arg('hosts', 10_000);
const CLUSTERS = arg('clusters', 100);
const EVENTS = arg('events', 5_000);
const LOADS = 5;
const CHROMIUM = '/usr/bin/chromium';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};
const kb = (n: number): string => `${(n / 1024).toFixed(1)} kB`;

async function pages(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log(`(a) skipped: ${CHROMIUM} is not installed`);
    return;
  }
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-ui-'));
  let child: ChildProcess | undefined;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const site = await generateSite(join(tmp, 'site'), CLUSTERS, HOSTS);
    console.log(
      `(a) site: ${site.hosts} hosts, ${site.clusters} clusters, ${site.files} files, ${kb(site.bytes)}`,
    );
    // A free port, so that the address is known without reading bpa's log.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const url = `http://127.0.0.1:${port}`;
    let stderr = '';
    child = spawnBpa([
      'serve',
      '--watch',
      site.dir,
      '--state',
      join(tmp, 'state'),
      '--listen',
      `127.0.0.1:${port}`,
      '--interval',
      '1h',
      '--leases',
      site.leaseFile,
      '--log-level',
      'error',
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const started = performance.now();
    await waitFor(
      'the server',
      async () => ((await fetch(`${url}/healthz`).catch(() => undefined))?.ok ? true : undefined),
      60_000,
      100,
    ).catch(() => {
      throw new Error(`bpa serve did not start: ${stderr}`);
    });
    await waitFor(
      'the first reconcile',
      async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
      600_000,
      200,
    );
    console.log(
      `    first reconcile done in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const targets = [
      '/',
      '/clusters/cluster-0000',
      '/inventory',
      '/inventory?show=all&page=50',
      '/inventory?q=52:54:00:00:27:0f',
      '/history',
    ];
    console.log('    page                          cold load  cold bytes   warm load  warm bytes');
    for (const path of targets) {
      const cold: Array<{ ms: number; bytes: number }> = [];
      const warm: Array<{ ms: number; bytes: number }> = [];
      for (let i = 0; i < LOADS; i++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        let bytes = 0;
        const cdp = await context.newCDPSession(page);
        await cdp.send('Network.enable');
        cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => {
          bytes += e.encodedDataLength;
        });
        let t = performance.now();
        await page.goto(`${url}${path}`, { waitUntil: 'load' });
        cold.push({ ms: performance.now() - t, bytes });
        bytes = 0;
        t = performance.now();
        await page.reload({ waitUntil: 'load' });
        warm.push({ ms: performance.now() - t, bytes });
        await context.close();
      }
      console.log(
        `    ${path.padEnd(30)} ${median(cold.map((c) => c.ms))
          .toFixed(0)
          .padStart(6)} ms  ${kb(median(cold.map((c) => c.bytes))).padStart(10)}  ${median(
          warm.map((c) => c.ms),
        )
          .toFixed(0)
          .padStart(6)} ms  ${kb(median(warm.map((c) => c.bytes))).padStart(10)}`,
      );
    }
  } finally {
    await browser.close();
    if (child) await kill(child);
    await rm(tmp, { recursive: true, force: true });
  }
}

async function notifier(): Promise<void> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
  const d = new Deliverer({
    target: { url, format: 'json' },
    secret: 'bench-secret',
    log,
    maxQueue: EVENTS,
  });
  const event = (i: number): NotifyEvent => ({
    id: `e${i}`,
    type: 'phase-changed',
    at: new Date().toISOString(),
    site: 'bench',
    cluster: `cluster-${i}`,
    phase: 'Degraded',
    previousPhase: 'Ready',
    reason: 'NodesUnreachable',
    message: `unreachable: worker-${i}`,
    link: `http://127.0.0.1/clusters/cluster-${i}`,
  });
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) d.enqueue(event(i));
  const enqueued = performance.now() - t0;
  await waitFor(
    'every event delivered',
    async () => (received === EVENTS ? true : undefined),
    600_000,
    5,
  );
  const s = (performance.now() - t0) / 1000;
  await d.stop(0);
  await new Promise((r) => server.close(r));
  console.log(
    `(b) ${EVENTS} events to one receiver: ${(EVENTS / s).toFixed(0)} events/s (queued in ${enqueued.toFixed(1)} ms, delivered in ${s.toFixed(2)} s, in order, signed)`,
  );

  // Working out what to announce: 1,000 clusters all changing phase at once.
  const summary = (phase: string): ReconcileSummary => ({
    result: 'applied',
    revision: 'a'.repeat(40),
    clusters: [],
    status: {
      site: {
        kind: 'SiteStatus',
        metadata: { name: 'bench' },
        status: { phase, conditions: [], source: {}, clusters: [] },
      },
      clusters: Array.from({ length: 1000 }, (_, i) => ({
        kind: 'ClusterStatus',
        metadata: { name: `cluster-${i}` },
        status: {
          phase,
          conditions: [
            { type: 'Ready', status: 'False', reason: 'R', message: 'm', lastTransitionTime: '' },
          ],
          source: {},
          nodes: [],
          plugins: [],
        },
      })),
    },
  });
  const memory = emptyMemory();
  let n = 0;
  const ctx = { now: new Date().toISOString(), pageUrl: 'http://bpa/', nextId: () => `e${++n}` };
  transitions(summary('Ready'), memory, ctx);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    transitions(summary(i % 2 ? 'Ready' : 'Degraded'), memory, ctx);
    times.push(performance.now() - t);
  }
  console.log(
    `    the events of a reconcile where 1,000 clusters change phase: ${median(times).toFixed(1)} ms (median of 5)`,
  );
}

await pages();
await notifier();
