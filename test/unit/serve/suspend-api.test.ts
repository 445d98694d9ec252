import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { knownClusters } from '../../../src/reconcile/known-clusters.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { GuessLimiter } from '../../../src/serve/guess-limit.js';
import { startHttpServer, type HttpServer } from '../../../src/serve/http.js';
import { BpaMetrics } from '../../../src/serve/metrics.js';
import { Scheduler } from '../../../src/serve/scheduler.js';
import { suspendRoutes } from '../../../src/serve/suspend-api.js';
import { readSuspensions } from '../../../src/state/suspensions.js';
import { createLogger, silentLogger } from '../../../src/util/log.js';
import type { Trigger } from '../../../src/reconcile/summary.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith, hostIp, writeSite, type SiteSpec } from '../../fakes/site.js';
import { FakeTimers, ManualReconcile } from './fake-timers.js';

const TOKEN = 'api-token-3b8e61d0c2';

/**
 * The suspend API over real HTTP, then the real reconciler reading what it wrote from the state
 * directory: the suspension holds the apply and reaches the reports and the commit.
 */
describe('serve: POST /api/v1/suspend and /api/v1/resume', () => {
  let tmp: string;
  let stateDir: string;
  let siteDir: string;
  let server: HttpServer | undefined;
  let url: string;
  let triggers: Trigger[];
  /** The site's clusters as the server knows them (undefined: the site not read yet). */
  let known: string[] | undefined;
  /** Where the routes ask for them (by default: `known`). */
  let clusters: () => Promise<readonly string[] | undefined> | readonly string[] | undefined;
  /** What the routes logged. */
  let logged: string[];

  const v1: SiteSpec = {
    nodes: [{ name: 'master-1', roles: ['master'], host: 0 }],
    masterSoftware: ['jq=1.6-2.1ubuntu3'],
  };

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-suspend-'));
    stateDir = join(tmp, 'state');
    siteDir = join(tmp, 'site');
    triggers = [];
    known = ['east', 'site'];
    clusters = () => known;
    logged = [];
    const scheduler = new Scheduler({
      reconcile: new ManualReconcile().fn,
      intervalMs: 300_000,
      timers: new FakeTimers(),
    });
    server = await startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      scheduler,
      metrics: new BpaMetrics({ defaultMetrics: false }),
      log: silentLogger(),
      routes: suspendRoutes({
        token: TOKEN,
        limiter: new GuessLimiter(),
        clusters: () => clusters(),
        stateDir,
        trigger: () => triggers.push('api'),
        log: createLogger(
          'info',
          new Writable({
            write(chunk: Buffer, _enc, done): void {
              logged.push(chunk.toString());
              done();
            },
          }),
        ),
        now: () => Date.parse('2026-11-24T02:10:00Z'),
      }),
    });
    url = server.url;
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await rm(tmp, { recursive: true, force: true });
  });

  const post = (path: string, body?: unknown, token: string | null = TOKEN) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });

  it('refuses a call without the token, or with another, and changes nothing', async () => {
    const none = await post('/api/v1/suspend', { cluster: 'east' }, null);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal((await post('/api/v1/suspend', {}, 'not-the-token')).status, 401);
    assert.equal((await post('/api/v1/resume', {}, null)).status, 401);
    assert.equal((await fetch(`${url}/api/v1/suspend`)).status, 401);
    assert.deepEqual({ ...(await readSuspensions(stateDir)) }, {});
    assert.deepEqual(triggers, []);
  });

  it('refuses a bad body with 400', async () => {
    assert.equal((await post('/api/v1/suspend', '{not json')).status, 400);
    assert.equal((await post('/api/v1/suspend', { cluster: '../etc' })).status, 400);
    assert.equal((await post('/api/v1/suspend', { cluster: 'east', force: true })).status, 400);
    assert.equal((await post('/api/v1/suspend', { reason: 'x'.repeat(501) })).status, 400);
    assert.deepEqual({ ...(await readSuspensions(stateDir)) }, {});
  });

  it('suspends and resumes a cluster or the whole site, kept in the state directory', async () => {
    const r = await post('/api/v1/suspend', { cluster: 'east', reason: 'fan failure on node-3' });
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      suspended: {
        site: null,
        clusters: { east: { since: '2026-11-24T02:10:00.000Z', reason: 'fan failure on node-3' } },
      },
    });
    assert.equal((await post('/api/v1/suspend')).status, 200, 'no body: the whole site');
    const listed = await fetch(`${url}/api/v1/suspend`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.deepEqual(await listed.json(), {
      suspended: {
        site: { since: '2026-11-24T02:10:00.000Z' },
        clusters: { east: { since: '2026-11-24T02:10:00.000Z', reason: 'fan failure on node-3' } },
      },
    });
    assert.deepEqual(Object.keys(await readSuspensions(stateDir)).sort(), ['*', 'east']);
    assert.equal((await post('/api/v1/resume', { cluster: 'east' })).status, 200);
    assert.deepEqual(Object.keys(await readSuspensions(stateDir)), ['*']);
    assert.equal((await post('/api/v1/resume')).status, 200);
    assert.deepEqual({ ...(await readSuspensions(stateDir)) }, {});
    assert.deepEqual(triggers, ['api', 'api', 'api', 'api'], 'each change asks for a reconcile');
  });

  it('refuses a cluster the site does not have with 404 naming its clusters, and changes nothing', async () => {
    for (const cluster of ['constructor', 'eastt', 'hasownproperty', 'tostring']) {
      const r = await post('/api/v1/suspend', { cluster });
      assert.equal(r.status, 404, cluster);
      const body = (await r.json()) as { error: string; message: string; clusters: string[] };
      assert.equal(body.error, 'unknown_cluster');
      assert.equal(
        body.message,
        `the site has no cluster ${cluster}; its clusters: east, site; nothing was changed`,
      );
      assert.deepEqual(body.clusters, ['east', 'site']);
      assert.equal((await post('/api/v1/resume', { cluster })).status, 404, cluster);
    }
    assert.equal((await post('/api/v1/suspend', { cluster: '__proto__' })).status, 400);
    assert.deepEqual({ ...(await readSuspensions(stateDir)) }, {});
    assert.deepEqual(triggers, [], 'a refused call asks for no reconcile');
    known = [];
    const none = await post('/api/v1/suspend', { cluster: 'east' });
    assert.equal(none.status, 404);
    assert.match(((await none.json()) as { message: string }).message, /it has no clusters/);
  });

  it('knowing no cluster at all: the name is taken, with a warning in the answer and the log', async () => {
    known = undefined;
    const r = await post('/api/v1/suspend', { cluster: 'east', reason: 'smoke' });
    assert.equal(r.status, 200, 'an emergency stop is never refused for want of knowledge');
    const body = (await r.json()) as { suspended: { clusters: object }; warning?: string };
    assert.deepEqual(Object.keys(body.suspended.clusters), ['east']);
    assert.match(body.warning ?? '', /could not check that the site has a cluster east/);
    assert.deepEqual(Object.keys(await readSuspensions(stateDir)), ['east']);
    const line = logged.find((l) => l.includes('suspended through the API'));
    assert.match(line ?? '', /"warning":"bpa does not know the site's clusters yet/);
    assert.equal((await post('/api/v1/suspend', {})).status, 200);
    assert.deepEqual(Object.keys(await readSuspensions(stateDir)).sort(), ['*', 'east']);
  });

  it('not having read the site (a standby, a restart): checks names against the state directory', async () => {
    clusters = () => knownClusters(undefined, stateDir);
    await mkdir(join(stateDir, 'clusters', 'east'), { recursive: true });
    await writeFile(
      join(stateDir, 'status.json'),
      JSON.stringify({
        files: {
          'status/west.yaml':
            'kind: ClusterStatus\nmetadata: {name: west}\nstatus: {phase: Ready}\n',
          'status/site.yaml': 'kind: SiteStatus\nmetadata: {name: s}\n',
        },
      }),
    );
    for (const cluster of ['east', 'west']) {
      const r = await post('/api/v1/suspend', { cluster });
      assert.equal(r.status, 200, cluster);
      assert.equal(((await r.json()) as { warning?: string }).warning, undefined);
    }
    const typo = await post('/api/v1/suspend', { cluster: 'esat' });
    assert.equal(typo.status, 404);
    assert.deepEqual(((await typo.json()) as { clusters: string[] }).clusters, ['east', 'west']);
    assert.deepEqual(Object.keys(await readSuspensions(stateDir)).sort(), ['east', 'west']);
  });

  it("knows the site's clusters while the first apply still runs", async () => {
    await writeSite(siteDir, v1);
    const ports = fakePorts(new FakeNodes({ jq: ['1.6-2.1ubuntu3'] }));
    const stop = new AbortController();
    ports.installer.next({ kind: 'hang', signal: stop.signal });
    const reconciler = new Reconciler({
      source: new FakeSiteSource(siteDir),
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
    });
    clusters = () => reconciler.clusterNames();
    const running = reconciler.reconcile('startup', stop.signal);
    try {
      await ports.installer.started;
      assert.deepEqual(reconciler.clusterNames(), ['east']);
      assert.equal((await post('/api/v1/suspend', { cluster: 'east' })).status, 200);
      assert.equal((await post('/api/v1/suspend', { cluster: 'esat' })).status, 404);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('a cluster named site and the whole site are told apart', async () => {
    assert.equal(
      (await post('/api/v1/suspend', { cluster: 'site', reason: 'rack move' })).status,
      200,
    );
    const listed = await fetch(`${url}/api/v1/suspend`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.deepEqual(await listed.json(), {
      suspended: {
        site: null,
        clusters: { site: { since: '2026-11-24T02:10:00.000Z', reason: 'rack move' } },
      },
    });
    await post('/api/v1/suspend', { reason: 'storm' });
    const both = (await (
      await fetch(`${url}/api/v1/suspend`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { suspended: { site: { reason?: string }; clusters: Record<string, unknown> } };
    assert.equal(both.suspended.site.reason, 'storm');
    assert.deepEqual(Object.keys(both.suspended.clusters), ['site']);
  });

  it('resumes a suspended cluster the site no longer has', async () => {
    await post('/api/v1/suspend', { cluster: 'east' });
    known = ['west'];
    assert.equal((await post('/api/v1/resume', { cluster: 'east' })).status, 200);
    assert.deepEqual({ ...(await readSuspensions(stateDir)) }, {});
  });

  it('the next reconcile holds the cluster and commits the suspension; resume applies', async () => {
    await writeSite(siteDir, v1);
    const nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'] });
    const ports = fakePorts(nodes);
    const source = new FakeSiteSource(siteDir);
    const reconciler = new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
    });
    assert.equal((await reconciler.reconcile('startup')).result, 'applied');
    await writeSite(siteDir, { ...v1, masterSoftware: ['jq=1.7.1-3'] });
    await post('/api/v1/suspend', { cluster: 'east', reason: 'fan failure on node-3' });

    const held = await reconciler.reconcile('api');
    assert.equal(held.result, 'unchanged', JSON.stringify(held.error));
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.6-2.1ubuntu3', 'nothing applied');
    const report = source.clusterReport('east');
    assert.equal(report?.status.phase, 'Suspended');
    assert.deepEqual(report?.status.gate, {
      state: 'suspended',
      reason: 'Suspended',
      by: 'api',
      since: '2026-11-24T02:10:00.000Z',
    });
    const ready = report?.status.conditions.find((c) => c.type === 'Ready');
    assert.match(ready?.message ?? '', /suspend API of bpa serve \(fan failure on node-3\)/);
    const commit = source.commits.at(-1);
    assert.ok(commit?.files.has('status/east.yaml'), 'the suspension is in a status commit');
    assert.match(commit?.message ?? '', /east suspended through the API/);

    // The same input again is a no-op while suspended; resuming is new input.
    assert.equal((await reconciler.reconcile('interval')).result, 'skipped');
    await post('/api/v1/resume', { cluster: 'east' });
    const resumed = await reconciler.reconcile('api');
    assert.equal(resumed.result, 'applied', JSON.stringify(resumed.error));
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
  });
});

describe('serve: the suspend API drops an oversized body', () => {
  let tmp: string;
  let server: HttpServer | undefined;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-suspend-big-'));
    server = await startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      scheduler: new Scheduler({
        reconcile: new ManualReconcile().fn,
        intervalMs: 300_000,
        timers: new FakeTimers(),
      }),
      metrics: new BpaMetrics({ defaultMetrics: false }),
      log: silentLogger(),
      routes: suspendRoutes({
        token: TOKEN,
        limiter: new GuessLimiter(),
        clusters: () => ['east'],
        stateDir: join(tmp, 'state'),
        trigger: () => undefined,
        log: silentLogger(),
      }),
    });
  });
  after(async () => {
    await server?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  /**
   * A client that announces no length (chunked) and keeps sending: after the 413 the server
   * must close the connection soon, not read whatever the client sends for as long as it does.
   */
  it('answers 413 and closes the connection while the client still sends', async function () {
    this.timeout(10_000);
    const { port } = new URL(server!.url);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((resolve) =>
      socket.once('close', () => resolve(Date.now())),
    );
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /api/v1/suspend HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TOKEN}\r\n` +
        'content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    );
    const chunk = `${(4096).toString(16)}\r\n${' '.repeat(4096)}\r\n`;
    const start = Date.now();
    let sent = 0;
    const feed = setInterval(() => {
      if (socket.writable) {
        socket.write(chunk);
        sent += 4096;
      }
    }, 20);
    const limit = new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 6_000));
    const outcome = await Promise.race([closed, limit]);
    clearInterval(feed);
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.notEqual(outcome, 'open', `still reading after ${sent} bytes`);
    assert.ok((outcome as number) - start < 5_000);
  });
});
