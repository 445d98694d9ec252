import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { SiteView } from '../../../src/reconcile/view.js';
import type { ReconcileSummary } from '../../../src/reconcile/summary.js';
import { startHttpServer, type HttpServer } from '../../../src/serve/http.js';
import { BpaMetrics } from '../../../src/serve/metrics.js';
import { Scheduler } from '../../../src/serve/scheduler.js';
import { LiveBus } from '../../../src/serve/ui/live.js';
import { UiModel } from '../../../src/serve/ui/model.js';
import { CSP, statusPageRoutes } from '../../../src/serve/ui/routes.js';
import { createLogger } from '../../../src/util/log.js';
import { FakeTimers, ManualReconcile } from './fake-timers.js';

const EVIL = '<script>alert("x")</script>';

function conditions(ready: boolean, message: string): unknown[] {
  const t = '2026-01-01T00:00:00.000Z';
  return [
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'UpToDate' : 'ApplyFailed',
      message,
      lastTransitionTime: t,
    },
    { type: 'Reconciling', status: 'False', reason: 'Idle', message: '', lastTransitionTime: t },
    { type: 'Stalled', status: 'False', reason: 'None', message: '', lastTransitionTime: t },
  ];
}

function summary(hosts: number): ReconcileSummary {
  const view: SiteView = {
    plan: {
      hash: 'f'.repeat(64),
      clusters: [
        {
          cluster: 'edge-1',
          actions: [
            {
              kind: 'fix-drift',
              state: 'pending',
              nodes: ['m1'],
              reason: 'htop drifted',
              packages: [{ node: 'm1', name: 'htop', from: '3.0', to: '3.2' }],
            },
          ],
          notes: ['remove-nodes w9 waits for --prune'],
          nodes: [],
        },
      ],
      problems: [{ code: 'NO_HOST', message: 'cluster edge-2: worker-2: needs cpu≥20' }],
    },
    inventory: {
      from: `${hosts} BareMetalHosts from the site`,
      hosts: Array.from({ length: hosts }, (_, i) => ({
        key: `metal3/node-${String(i).padStart(5, '0')}`,
        macs: [
          `52:54:00:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
        ],
        cpu: 16,
        ramMebibytes: 65536,
        sriov: i % 2 === 0,
        qat: false,
        eligible: i % 3 !== 0,
        ...(i % 3 === 0 ? { reason: 'powered off' } : {}),
        ...(i === 1 ? { heldBy: 'edge-1/m1' } : {}),
      })),
    },
  };
  return {
    result: 'failed',
    revision: 'a'.repeat(40),
    clusters: [{ name: 'edge-1', phase: 'Degraded', ready: false }],
    error: { code: 'APPLY_FAILED', message: `fix-drift: ${EVIL}`, retry: 'transient' },
    status: {
      site: {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'SiteStatus',
        metadata: { name: 'edge-lab-1' },
        status: {
          phase: 'Degraded',
          conditions: conditions(false, 'edge-1: Degraded'),
          source: { revision: 'a'.repeat(40) },
          clusters: [{ name: 'edge-1', phase: 'Degraded' }],
        },
      },
      clusters: [
        {
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'ClusterStatus',
          metadata: { name: 'edge-1' },
          status: {
            phase: 'Degraded',
            conditions: conditions(false, `fix-drift failed: ${EVIL}`),
            source: { revision: 'a'.repeat(40), planHash: 'f'.repeat(64) },
            nodes: [
              {
                name: 'm1',
                roles: ['master'],
                host: 'metal3/node-00001',
                mac: '52:54:00:00:00:01',
                ip: '192.0.2.11',
                reachable: true,
                packages: { htop: '3.0' },
              },
            ],
            plugins: [],
          },
        },
      ],
    },
    view,
  };
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body.toString() });
        });
      })
      .on('error', reject);
  });
}

/** Reads an SSE stream until `until` holds for what arrived; then closes it. */
function events(
  url: string,
  headers: Record<string, string>,
  until: (text: string) => boolean,
  act?: () => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
        if (until(text)) {
          req.destroy();
          resolve(text);
        }
      });
      act?.();
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

describe('serve/ui: the status page', () => {
  let server: HttpServer | undefined;
  let scheduler: Scheduler;
  let reconcile: ManualReconcile;
  let bus: LiveBus;
  let model: UiModel;
  let url = '';

  beforeEach(async () => {
    reconcile = new ManualReconcile();
    scheduler = new Scheduler({
      reconcile: reconcile.fn,
      intervalMs: 300_000,
      timers: new FakeTimers(),
    });
    bus = new LiveBus(5);
    model = new UiModel({ scheduler, bus, pollMs: 60_000 });
    server = await startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      scheduler,
      metrics: new BpaMetrics({ defaultMetrics: false }),
      log: createLogger('silent', new Writable({ write: (_c, _e, done) => done() })),
      routes: statusPageRoutes({
        model,
        bus,
        now: () => Date.parse('2026-01-01T00:05:00Z'),
        maxStreams: 2,
      }),
    });
    url = server.url;
    scheduler.start();
    model.start();
    await reconcile.finish(summary(250));
    model.poll();
  });
  afterEach(async () => {
    model.stop();
    await scheduler.stop();
    await server?.close();
  });

  it('serves the overview with a strict CSP, every value escaped, no asset from elsewhere', async () => {
    const r = await get(`${url}/`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-security-policy'], CSP);
    assert.match(CSP, /default-src 'none'/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.ok(!r.body.includes(EVIL), 'a report message is HTML-escaped');
    assert.match(r.body, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
    // One script, one stylesheet, both ours; no inline script, style or event handler.
    assert.deepEqual(
      [...r.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]),
      ['<script src="/ui/app.js" defer>'],
    );
    assert.doesNotMatch(r.body, /\sstyle=|\son[a-z]+=|https?:\/\//);
    assert.match(r.body, /site\/?|edge-lab-1/);
    assert.match(r.body, /<tr data-cluster="edge-1">/);
    // A commit links to its row in the history.
    assert.match(
      r.body,
      new RegExp(
        `<a href="/history#c-${'a'.repeat(40)}"><code title="${'a'.repeat(40)}">aaaaaaa</code></a>`,
      ),
    );
    assert.match(r.body, /fix-drift<\/strong> m1/);
    assert.match(r.body, /remove-nodes w9 waits for --prune/);
    assert.match(r.body, /cluster edge-2: worker-2: needs cpu≥20/);
  });

  it('a cluster: its nodes with drift and packages; an unknown one is a 404 page', async () => {
    const r = await get(`${url}/clusters/edge-1`);
    assert.equal(r.status, 200);
    assert.match(r.body, /<td>m1<\/td>/);
    assert.match(r.body, /htop 3\.0→3\.2/);
    assert.match(r.body, /<pre class="log" id="log" data-cluster="edge-1"/);
    const missing = await get(`${url}/clusters/${encodeURIComponent('<b>')}`);
    assert.equal(missing.status, 404);
    assert.match(missing.body, /No cluster named &lt;b&gt; is reported/);
  });

  it('a failed operation: step, code and exit from the report, the tail from the last run, a link to its log', async () => {
    const failed = summary(3);
    const log = 'edge-1/provision-2026-01-01T00-01-00-000Z.log';
    const status = failed.status as { clusters: Array<{ status: Record<string, unknown> }> };
    const doc = status.clusters[0];
    if (doc)
      doc.status['lastOperation'] = [
        {
          action: 'provision-cluster',
          nodes: ['m1'],
          startedAt: '2026-01-01T00:01:00.000Z',
          endedAt: '2026-01-01T00:02:00.000Z',
          result: 'failed',
          step: 'installer',
          code: 'INSTALLER_FAILED',
          exitCode: 3,
          log,
        },
      ];
    failed.view?.plan?.clusters[0]?.actions.push({
      kind: 'provision-cluster',
      state: 'failed',
      nodes: ['m1'],
      reason: 'new cluster',
      error: {
        code: 'INSTALLER_FAILED',
        message: `installer provision for cluster edge-1 exited 3 (log ${log}): fatal: no quorum`,
        step: 'installer',
        exitCode: 3,
        log,
      },
    });
    scheduler.trigger('webhook');
    await reconcile.finish(failed);
    model.poll();
    const r = await get(`${url}/clusters/edge-1`);
    assert.equal(r.status, 200);
    assert.match(r.body, /<code>INSTALLER_FAILED<\/code\s*> at step installer, exit 3/);
    assert.match(
      r.body,
      /<a href="\/api\/v1\/logs\/edge-1\/provision-2026-01-01T00-01-00-000Z\.log">log edge-1\//,
    );
    assert.match(r.body, /fatal: no quorum/);
  });

  it('the inventory is paged and filtered on the server: 100 rows of 10 000 hosts', async () => {
    scheduler.trigger('webhook');
    await reconcile.finish(summary(10_000));
    model.poll();
    const first = await get(`${url}/inventory`, { 'accept-encoding': 'gzip' });
    assert.equal(first.headers['content-encoding'], 'gzip');
    assert.equal([...first.body.matchAll(/<td>\s*metal3\/node-\d+\s*<\/td>/g)].length, 100);
    assert.match(first.body, /10000 hosts · page 1 of 100/);
    const inel = await get(`${url}/inventory?show=ineligible&page=2`);
    assert.match(inel.body, /3334 hosts · page 2 of 34/);
    assert.match(inel.body, /metal3\/node-00300/);
    assert.match(inel.body, /powered off/);
    const one = await get(`${url}/inventory?q=52:54:00:00:00:01`);
    assert.match(one.body, /1 host · page 1 of 1/);
    assert.match(one.body, /edge-1\/m1/);
  });

  it('streams installer lines with cluster and node, replays after Last-Event-ID, and announces state changes', async () => {
    bus.line('[edge-1] PLAY [all]');
    const first = bus.recent().at(-1)?.seq ?? 0;
    bus.line('[edge-1] ok: [m1]');
    bus.line('[edge-1] fatal: [w2]: UNREACHABLE!');
    bus.line('[edge-1] m1                         : ok=3    changed=1');
    const text = await events(
      `${url}/ui/events`,
      { 'last-event-id': String(first) },
      (t) => /event: state/.test(t),
      () => setTimeout(() => bus.changed(), 20),
    );
    const lines = [...text.matchAll(/^data: (\{.*"text".*\})$/gm)].map(
      (m) =>
        JSON.parse(m[1] ?? '') as { seq: number; cluster?: string; node?: string; text: string },
    );
    assert.deepEqual(
      lines.map((l) => [l.seq, l.cluster, l.node, l.text]),
      [
        [first + 1, 'edge-1', 'm1', 'ok: [m1]'],
        [first + 2, 'edge-1', 'w2', 'fatal: [w2]: UNREACHABLE!'],
        [first + 3, 'edge-1', 'm1', 'm1                         : ok=3    changed=1'],
      ],
    );
    assert.match(text, new RegExp(`^id: ${first + 1}$`, 'm'));
    // The bus keeps 5 lines here: older ones are dropped, not held forever.
    for (let i = 0; i < 10; i++) bus.line(`[edge-1] line ${i}`);
    assert.deepEqual(
      bus.recent().map((l) => l.text),
      ['line 5', 'line 6', 'line 7', 'line 8', 'line 9'],
    );
  });

  it('event streams are bounded: one more than allowed is answered 503', async () => {
    // The model holds one subscription; the limit here is 2, so one stream fits.
    const open = await new Promise<http.ClientRequest>((resolve) => {
      const req = http.get(`${url}/ui/events`, { agent: false }, (res) => {
        assert.equal(res.statusCode, 200);
        resolve(req);
      });
    });
    try {
      const second = await get(`${url}/ui/events`);
      assert.equal(second.status, 503);
      assert.equal(second.headers['retry-after'], '30');
    } finally {
      open.destroy();
    }
  });

  it('when bpa stops, open streams end at once (the server need not cut them)', async () => {
    const ended = await new Promise<boolean>((resolve) => {
      http.get(`${url}/ui/events`, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(true));
        setTimeout(() => bus.end(), 20);
      });
    });
    assert.equal(ended, true);
  });

  it('assets: revalidated by ETag, gzip when asked', async () => {
    const js = await get(`${url}/ui/app.js`, { 'accept-encoding': 'gzip' });
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(js.body, /new EventSource\('\/ui\/events'\)/);
    const again = await get(`${url}/ui/app.js`, { 'if-none-match': String(js.headers.etag) });
    assert.equal(again.status, 304);
    const css = await get(`${url}/ui/app.css`);
    assert.match(css.body, /@media \(max-width: 640px\)/);
  });
});
