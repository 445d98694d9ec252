import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { Writable } from 'node:stream';
import { requireBearer } from '../../../src/serve/auth.js';
import { GuessLimiter } from '../../../src/serve/guess-limit.js';
import { startHttpServer, type HttpServer, type RouteSet } from '../../../src/serve/http.js';
import { sendJson } from '../../../src/serve/respond.js';
import { BpaMetrics } from '../../../src/serve/metrics.js';
import { Scheduler } from '../../../src/serve/scheduler.js';
import { createLogger } from '../../../src/util/log.js';
import { FakeTimers, ManualReconcile, failed, ok, settle } from './fake-timers.js';

const SECRET = 'webhook-secret-4f1c9a7e';
const INTERVAL = 300_000;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a fresh connection; `body` may be a list of chunks (sent chunked). */
function request(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer | Buffer[];
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    // The server may answer (413) and hang up before the whole body is sent.
    req.on('error', (err) => (req.writableEnded && req.destroyed ? undefined : reject(err)));
    const body = opts.body;
    if (Array.isArray(body)) {
      const write = (i: number): void => {
        const chunk = body[i];
        if (chunk === undefined || req.destroyed) {
          req.end();
          return;
        }
        if (req.write(chunk)) setImmediate(() => write(i + 1));
        else req.once('drain', () => write(i + 1));
      };
      write(0);
    } else {
      req.end(body);
    }
  });
}

function sign(body: string, secret = SECRET): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

const PUSH = JSON.stringify({ ref: 'refs/heads/main', after: 'b'.repeat(40) });

describe('serve/http', () => {
  let clock: FakeTimers;
  let reconcile: ManualReconcile;
  let scheduler: Scheduler;
  let metrics: BpaMetrics;
  let server: HttpServer | undefined;
  let logs: string[];
  let replies: string[];
  let leading: boolean | undefined;

  async function start(
    webhookSecret: string | null = SECRET,
    maxRunMs?: number,
    routes?: RouteSet[],
    webhookLimiter?: GuessLimiter,
  ): Promise<string> {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done): void {
        logs.push(chunk.toString());
        done();
      },
    });
    server = await startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      scheduler,
      metrics,
      webhookSecret: webhookSecret ?? undefined,
      leader: leading === undefined ? undefined : { isLeader: () => leading === true },
      log: createLogger('debug', sink),
      maxRunMs,
      maxBodyBytes: 1024 * 1024,
      routes,
      webhookLimiter,
    });
    return server.url;
  }

  async function call(url: string, opts: Parameters<typeof request>[1] = {}): Promise<Reply> {
    const reply = await request(url, opts);
    replies.push(JSON.stringify(reply.headers) + reply.body);
    return reply;
  }

  function hook(url: string, headers: Record<string, string>, body = PUSH): Promise<Reply> {
    return call(`${url}/hooks/git`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  }

  beforeEach(() => {
    clock = new FakeTimers();
    reconcile = new ManualReconcile();
    metrics = new BpaMetrics({ defaultMetrics: false });
    leading = undefined;
    scheduler = new Scheduler({
      reconcile: reconcile.fn,
      intervalMs: INTERVAL,
      timers: clock,
      isLeader: () => leading !== false,
      onRun: (run) => metrics.recordRun(run),
    });
    logs = [];
    replies = [];
  });

  afterEach(async () => {
    const stopping = scheduler.stop();
    while (reconcile.inFlight > 0) await reconcile.finish();
    await stopping;
    await server?.close();
    server = undefined;
    for (const text of [...logs, ...replies]) {
      assert.ok(!text.includes(SECRET), `the secret leaked: ${text.slice(0, 200)}`);
    }
  });

  it('answers /readyz 503 until the first reconcile finishes, then 200', async () => {
    const url = await start();
    scheduler.start();
    let reply = await call(`${url}/readyz`);
    assert.equal(reply.status, 503);
    assert.equal(JSON.parse(reply.body).status, 'starting');
    await reconcile.finish(failed('transient'));
    reply = await call(`${url}/readyz`);
    assert.equal(reply.status, 200, 'a failed first reconcile still makes the replica ready');
    void scheduler.stop();
    reply = await call(`${url}/readyz`);
    assert.equal(reply.status, 503);
    assert.equal(JSON.parse(reply.body).status, 'stopping');
  });

  it('answers /readyz 200 on a standby replica', async () => {
    leading = false;
    const url = await start();
    scheduler.start();
    const reply = await call(`${url}/readyz`);
    assert.equal(reply.status, 200);
    assert.equal(JSON.parse(reply.body).status, 'standby');
    assert.equal(reconcile.calls.length, 0);
  });

  it('answers /healthz 200, and 500 once a reconcile has run too long', async () => {
    const url = await start(SECRET, 60_000);
    scheduler.start();
    let reply = await call(`${url}/healthz`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    await clock.advance(60_001);
    reply = await call(`${url}/healthz`);
    assert.equal(reply.status, 500);
    assert.match(JSON.parse(reply.body).reason, /running for 60s/);
    await reconcile.finish();
    assert.equal((await call(`${url}/healthz`)).status, 200);
  });

  it('serves every bpa_ metric on /metrics after a run', async () => {
    metrics = new BpaMetrics();
    scheduler = new Scheduler({
      reconcile: reconcile.fn,
      intervalMs: INTERVAL,
      timers: clock,
      onRun: (run) => metrics.recordRun(run),
    });
    const url = await start();
    scheduler.start();
    await reconcile.finish(ok());
    await hook(url, { 'x-hub-signature-256': `sha256=${sign(PUSH)}`, 'x-github-event': 'push' });
    const reply = await call(`${url}/metrics`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], metrics.contentType);
    for (const name of [
      'bpa_reconcile_duration_seconds_bucket',
      'bpa_reconcile_total',
      'bpa_cluster_ready',
      'bpa_source_revision_info',
      'bpa_last_reconcile_timestamp_seconds',
      'bpa_webhook_requests_total',
      'bpa_process_resident_memory_bytes',
    ]) {
      assert.match(reply.body, new RegExp(`^${name}[{ ]`, 'm'), name);
    }
    assert.match(reply.body, /^bpa_reconcile_total\{result="applied",trigger="startup"\} 1$/m);
    assert.match(reply.body, /^bpa_webhook_requests_total\{result="accepted"\} 1$/m);
    assert.match(reply.body, /^bpa_cluster_ready\{cluster="edge-1"\} 1$/m);
  });

  it('serves the site status and the scheduler state on /api/v1/status', async () => {
    leading = true;
    const url = await start();
    scheduler.start();
    let doc = JSON.parse((await call(`${url}/api/v1/status`)).body);
    assert.equal(doc.status, null);
    assert.equal(doc.lastReconcile, null);
    assert.equal(doc.running, true);
    assert.equal(doc.leader, true);
    await reconcile.finish(ok());
    scheduler.trigger('webhook');
    scheduler.trigger('webhook');
    await reconcile.finish({
      result: 'failed',
      revision: 'c'.repeat(40),
      appliedRevision: 'a'.repeat(40),
      clusters: [{ name: 'edge-1', phase: 'Degraded', ready: false }],
      error: {
        code: 'GIT_PUSH',
        message: 'push to https://bpa:tok3n@git.example/site.git failed',
        retry: 'transient',
      },
      status: { kind: 'SiteStatus', phase: 'Degraded' },
    });
    const reply = await call(`${url}/api/v1/status`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['cache-control'], 'no-store');
    doc = JSON.parse(reply.body);
    assert.deepEqual(doc.status, { kind: 'SiteStatus', phase: 'Degraded' });
    assert.equal(doc.lastReconcile.result, 'failed');
    assert.equal(doc.lastReconcile.trigger, 'webhook');
    assert.equal(doc.lastReconcile.appliedRevision, 'a'.repeat(40));
    assert.equal(
      doc.lastReconcile.error.message,
      'push to https://***@git.example/site.git failed',
    );
    assert.equal(doc.running, true, 'the queued webhook run is in flight');
    assert.equal(doc.queued, false);
    assert.equal(doc.consecutiveFailures, 1);
    assert.equal(doc.lastSuccess, new Date(clock.now()).toISOString());
    assert.equal(doc.leader, true);
    assert.ok(!reply.body.includes('tok3n'));
  });

  it('answers 404 (JSON) for unknown paths and 405 with Allow for wrong methods', async () => {
    const url = await start();
    let reply = await call(`${url}/nope`);
    assert.equal(reply.status, 404);
    assert.equal(JSON.parse(reply.body).error, 'not_found');
    reply = await call(`${url}/metrics`, { method: 'POST', body: 'x' });
    assert.equal(reply.status, 405);
    assert.equal(reply.headers.allow, 'GET');
    reply = await call(`${url}/hooks/git`, { method: 'GET' });
    assert.equal(reply.status, 405);
    assert.equal(reply.headers.allow, 'POST');
    reply = await call(`${url}/healthz`, { method: 'HEAD' });
    assert.equal(reply.status, 200);
    assert.equal(reply.body, '');
  });

  it('routes a path to its exact route, else to the longest prefix route above it', async () => {
    const TOKEN = 'api-token-7d2e';
    const routes: RouteSet[] = [
      {
        path: '/things/',
        handlers: { GET: (_q, r, path) => sendJson(r, 200, { by: 'things', path }) },
      },
      {
        path: '/things/deep/',
        handlers: { GET: (_q, r, path) => sendJson(r, 200, { by: 'deep', path }) },
      },
      {
        path: '/api/v1/secret',
        handlers: {
          POST: (q, r) => {
            if (requireBearer(q, r, TOKEN, new GuessLimiter())) sendJson(r, 200, { ok: true });
          },
        },
      },
    ];
    const url = await start(SECRET, undefined, routes);
    const body = async (path: string): Promise<unknown> =>
      JSON.parse((await call(url + path)).body);
    assert.deepEqual(await body('/things/a'), { by: 'things', path: '/things/a' });
    assert.deepEqual(await body('/things/deep/b/c'), { by: 'deep', path: '/things/deep/b/c' });
    assert.deepEqual(await body('/things/deep'), { by: 'things', path: '/things/deep' });
    assert.equal((await call(`${url}/thing`)).status, 404);
    assert.equal((await call(`${url}/healthz`)).status, 200, 'the built-in routes stay');

    let reply = await call(`${url}/api/v1/secret`, { method: 'POST' });
    assert.equal(reply.status, 401);
    assert.equal(reply.headers['www-authenticate'], 'Bearer realm="bpa"');
    reply = await call(`${url}/api/v1/secret`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}x` },
    });
    assert.equal(reply.status, 401);
    assert.ok(!reply.body.includes(TOKEN));
    reply = await call(`${url}/api/v1/secret`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(reply.status, 200);
  });

  describe('POST /hooks/git', () => {
    let url: string;

    beforeEach(async () => {
      url = await start();
      scheduler.start();
      await reconcile.finish();
    });

    async function expectRejected(headers: Record<string, string>, body = PUSH): Promise<void> {
      const before = reconcile.calls.length;
      const reply = await hook(url, headers, body);
      assert.equal(reply.status, 401, JSON.stringify(headers));
      assert.equal(JSON.parse(reply.body).error, 'unauthorized');
      await settle();
      assert.equal(reconcile.calls.length, before, 'no reconcile for a rejected webhook');
    }

    it('rejects a missing or bad signature with 401 and no reconcile', async () => {
      await expectRejected({});
      await expectRejected({ 'x-github-event': 'push' });
      await expectRejected({ 'x-hub-signature-256': `sha256=${sign(PUSH, 'another-secret')}` });
      await expectRejected({ 'x-hub-signature-256': sign(PUSH) }, PUSH);
      await expectRejected(
        { 'x-hub-signature-256': `sha256=${sign(PUSH)}` },
        PUSH.replace('main', 'evil'),
      );
      await expectRejected({ 'x-hub-signature-256': 'sha256=zz' });
      await expectRejected({
        'x-hub-signature': `sha1=${createHmac('sha1', SECRET).update(PUSH).digest('hex')}`,
      });
      await expectRejected({ 'x-gitea-signature': sign(PUSH, 'another-secret') });
      await expectRejected({ 'x-gitlab-token': 'another-secret' });
      await expectRejected({ 'x-gitlab-token': `${SECRET}x` });
      const text = await metrics.render();
      assert.match(text, /^bpa_webhook_requests_total\{result="unauthorized"\} 10$/m);
      assert.match(text, /^bpa_webhook_requests_total\{result="accepted"\} 0$/m);
    });

    it('accepts a GitHub push with 202 and triggers a reconcile', async () => {
      const reply = await hook(url, {
        'x-hub-signature-256': `sha256=${sign(PUSH)}`,
        'x-github-event': 'push',
        'x-github-delivery': 'd-1',
      });
      assert.equal(reply.status, 202);
      assert.deepEqual(JSON.parse(reply.body), {
        accepted: true,
        provider: 'github',
        event: 'push',
        outcome: 'started',
      });
      assert.deepEqual(reconcile.triggers(), ['startup', 'webhook']);
      assert.ok(logs.some((l) => l.includes('"delivery":"d-1"') && l.includes('webhook accepted')));
    });

    it('answers a GitHub ping with 202 without reconciling', async () => {
      const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
      const reply = await hook(
        url,
        { 'x-hub-signature-256': `sha256=${sign(body)}`, 'x-github-event': 'ping' },
        body,
      );
      assert.equal(reply.status, 202);
      assert.equal(JSON.parse(reply.body).outcome, 'ignored');
      assert.equal(reconcile.calls.length, 1);
    });

    it('accepts the Gitea, Forgejo and GitLab formats', async () => {
      let reply = await hook(url, { 'x-gitea-signature': sign(PUSH), 'x-gitea-event': 'push' });
      assert.equal(reply.status, 202);
      assert.equal(JSON.parse(reply.body).provider, 'gitea');
      await reconcile.finish();
      reply = await hook(url, {
        'x-forgejo-signature': sign(PUSH).toUpperCase(),
        'x-forgejo-event': 'push',
      });
      assert.equal(reply.status, 202);
      await reconcile.finish();
      reply = await hook(url, { 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Push Hook' });
      assert.equal(reply.status, 202);
      assert.deepEqual(JSON.parse(reply.body), {
        accepted: true,
        provider: 'gitlab',
        event: 'Push Hook',
        outcome: 'started',
      });
      assert.deepEqual(reconcile.triggers(), ['startup', 'webhook', 'webhook', 'webhook']);
    });

    it('refuses a body over the limit with 413, declared or streamed', async () => {
      const big = Buffer.alloc(2 * 1024 * 1024, 0x61);
      let reply = await hook(
        url,
        { 'x-hub-signature-256': `sha256=${sign(big.toString())}` },
        big.toString(),
      );
      assert.equal(reply.status, 413);
      const chunks = Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x62));
      reply = await call(`${url}/hooks/git`, {
        method: 'POST',
        headers: { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
        body: chunks,
      });
      assert.equal(reply.status, 413);
      assert.equal(JSON.parse(reply.body).error, 'payload_too_large');
      assert.equal(reconcile.calls.length, 1);
      assert.match(
        await metrics.render(),
        /^bpa_webhook_requests_total\{result="bad_request"\} 2$/m,
      );
      // The server still works afterwards.
      assert.equal((await call(`${url}/healthz`)).status, 200);
    });

    it('turns 100 webhook calls in a burst into at most 2 reconciles', async () => {
      const headers = { 'x-hub-signature-256': `sha256=${sign(PUSH)}`, 'x-github-event': 'push' };
      const burst = await Promise.all(Array.from({ length: 100 }, () => hook(url, headers)));
      assert.ok(burst.every((r) => r.status === 202));
      const outcomes = burst.map((r) => JSON.parse(r.body).outcome as string);
      assert.equal(outcomes.filter((o) => o === 'started').length, 1);
      assert.equal(outcomes.filter((o) => o === 'queued').length, 1);
      assert.equal(outcomes.filter((o) => o === 'coalesced').length, 98);
      while (reconcile.inFlight > 0) await reconcile.finish();
      await clock.advance(INTERVAL / 2);
      assert.deepEqual(reconcile.triggers(), ['startup', 'webhook', 'webhook']);
    });
  });

  describe("POST /hooks/git with the webhook secret's guess limit", () => {
    it('a wrong GitLab token or signature counts; after 5 the right one waits too (429)', async () => {
      const url = await start(SECRET, undefined, undefined, new GuessLimiter());
      scheduler.start();
      await reconcile.finish();
      assert.equal((await hook(url, { 'x-gitlab-token': SECRET })).status, 202);
      await reconcile.finish();
      // A header that is no signature at all tests no secret: refused, not counted.
      for (let i = 0; i < 5; i++)
        assert.equal((await hook(url, { 'x-hub-signature-256': 'sha256=zz' })).status, 401);
      for (const headers of [
        { 'x-gitlab-token': 'guess-1' },
        { 'x-gitlab-token': 'guess-2' },
        { 'x-hub-signature-256': `sha256=${sign(PUSH, 'guess-3')}` },
        { 'x-gitea-signature': sign(PUSH, 'guess-4') },
      ] as Record<string, string>[])
        assert.equal((await hook(url, headers)).status, 401, JSON.stringify(headers));
      const fifth = await hook(url, { 'x-gitlab-token': 'guess-5' });
      assert.equal(fifth.status, 429);
      assert.equal(fifth.headers['retry-after'], '60');
      assert.match(JSON.parse(fifth.body).message, /too many wrong tokens from this address/);
      const before = reconcile.calls.length;
      const right = await hook(url, { 'x-gitlab-token': SECRET });
      assert.equal(right.status, 429, 'the right secret waits too, uncompared');
      assert.equal(
        (await hook(url, { 'x-hub-signature-256': `sha256=${sign(PUSH)}` })).status,
        429,
      );
      await settle();
      assert.equal(reconcile.calls.length, before, 'no reconcile while blocked');
      assert.ok(logs.some((l) => l.includes('webhook rejected: too many wrong secrets')));
      assert.ok(!logs.some((l) => l.includes(SECRET)), 'the secret is never logged');
    });
  });

  for (const secret of [null, '']) {
    it(`has no webhook route without a secret (${JSON.stringify(secret)})`, async () => {
      const url = await start(secret);
      scheduler.start();
      const signature = `sha256=${sign(PUSH, '')}`;
      let reply = await hook(url, { 'x-hub-signature-256': signature, 'x-github-event': 'push' });
      assert.equal(reply.status, 404);
      reply = await hook(url, {});
      assert.equal(reply.status, 404);
      assert.equal(reconcile.calls.length, 1, 'only the startup run');
      assert.ok(logs.some((l) => l.includes('"webhook":"disabled"')));
    });
  }
});
