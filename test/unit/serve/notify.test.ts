import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { ReconcileSummary } from '../../../src/reconcile/summary.js';
import type { SiteView } from '../../../src/reconcile/view.js';
import { Deliverer, SIGNATURE_HEADER, bodyFor } from '../../../src/serve/notify/deliver.js';
import { emptyMemory, transitions, type NotifyEvent } from '../../../src/serve/notify/events.js';
import { Notifier } from '../../../src/serve/notify/notifier.js';
import { createLogger } from '../../../src/util/log.js';

const SECRET = 'notify-secret-7c2e9b41';
const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));

function cond(phase: string, message: string): unknown[] {
  const t = '2026-01-01T00:00:00.000Z';
  return [
    {
      type: 'Ready',
      status: phase === 'Ready' ? 'True' : 'False',
      reason: phase === 'Ready' ? 'UpToDate' : `Why${phase}`,
      message,
      lastTransitionTime: t,
    },
  ];
}

/** A reconcile's summary with these cluster phases (and the site's worst). */
function run(
  phases: Record<string, string>,
  extra: Partial<ReconcileSummary> & {
    failedOp?: { cluster: string; action: string; message: string };
  } = {},
): ReconcileSummary {
  const worst =
    ['Failed', 'Blocked', 'Degraded', 'Provisioning'].find((p) =>
      Object.values(phases).includes(p),
    ) ?? 'Ready';
  const { failedOp, ...rest } = extra;
  return {
    result: 'applied',
    revision: 'b'.repeat(40),
    clusters: [],
    status: {
      site: {
        kind: 'SiteStatus',
        metadata: { name: 'edge-lab-1' },
        status: {
          phase: worst,
          conditions: cond(worst, `site is ${worst}`),
          source: {},
          clusters: [],
        },
      },
      clusters: Object.entries(phases).map(([name, phase]) => ({
        kind: 'ClusterStatus',
        metadata: { name },
        status: {
          phase,
          conditions: cond(phase, `${name} is ${phase}`),
          source: { revision: 'b'.repeat(40) },
          nodes: [],
          plugins: [],
          ...(failedOp?.cluster === name
            ? {
                lastOperation: [
                  {
                    action: failedOp.action,
                    nodes: ['w1'],
                    startedAt: '2026-01-01T00:00:00Z',
                    result: 'failed',
                    message: failedOp.message,
                  },
                ],
              }
            : {}),
        },
      })),
    },
    ...rest,
  };
}

function drift(changes: Array<[string, string, string]>): SiteView {
  return {
    plan: {
      hash: 'f'.repeat(64),
      problems: [],
      clusters: [
        {
          cluster: 'a',
          notes: [],
          nodes: [],
          actions: changes.length
            ? [
                {
                  kind: 'fix-drift',
                  state: 'done',
                  nodes: ['w1'],
                  reason: 'drift',
                  packages: changes.map(([name, from, to]) => ({ node: 'w1', name, from, to })),
                },
              ]
            : [],
        },
      ],
    },
  };
}

describe('serve/notify: one event per transition', () => {
  let n = 0;
  const ctx = {
    now: '2026-01-01T00:00:00.000Z',
    pageUrl: 'https://bpa.site.example/',
    nextId: () => `e${++n}`,
  };
  const kinds = (events: NotifyEvent[]): string[] =>
    events.map((e) => `${e.type} ${e.cluster ?? '(site)'} ${e.phase ?? ''}`.trim());

  it('phase changes: announced once, not on every poll; Ready at start is not news, a failure at start is', () => {
    const m = emptyMemory();
    assert.deepEqual(kinds(transitions(run({ a: 'Ready', b: 'Failed' }), m, ctx)), [
      'phase-changed b Failed',
      'phase-changed (site) Failed',
    ]);
    assert.deepEqual(transitions(run({ a: 'Ready', b: 'Failed' }), m, ctx), []);
    const events = transitions(run({ a: 'Degraded', b: 'Failed' }), m, ctx);
    assert.deepEqual(kinds(events), ['phase-changed a Degraded']);
    assert.equal(events[0]?.previousPhase, 'Ready');
    assert.equal(events[0]?.reason, 'WhyDegraded');
    assert.equal(events[0]?.link, 'https://bpa.site.example/clusters/a');
    assert.equal(events[0]?.site, 'edge-lab-1');
    assert.deepEqual(kinds(transitions(run({ a: 'Ready', b: 'Ready' }), m, ctx)), [
      'phase-changed a Ready',
      'phase-changed b Ready',
      'phase-changed (site) Ready',
    ]);
    assert.deepEqual(transitions(run({ a: 'Ready', b: 'Ready' }), m, ctx), []);
  });

  it('a failure once per code and revision, a rejected revision once, both again after a success', () => {
    const m = emptyMemory();
    const fail = (code: string, revision: string): ReconcileSummary => ({
      result: 'failed',
      revision,
      clusters: [],
      error: { code, message: 'git host down: token=abc123secret', retry: 'transient' },
    });
    const first = transitions(fail('GIT_UNREACHABLE', 'r1'), m, ctx);
    assert.deepEqual(kinds(first), ['reconcile-failed (site)']);
    assert.equal(first[0]?.message, 'git host down: token=***', 'messages are redacted');
    assert.deepEqual(transitions(fail('GIT_UNREACHABLE', 'r1'), m, ctx), []);
    assert.deepEqual(kinds(transitions(fail('GIT_AUTH', 'r1'), m, ctx)), [
      'reconcile-failed (site)',
    ]);
    transitions({ result: 'unchanged', clusters: [] }, m, ctx);
    assert.deepEqual(kinds(transitions(fail('GIT_AUTH', 'r1'), m, ctx)), [
      'reconcile-failed (site)',
    ]);
    const rejected: ReconcileSummary = {
      result: 'rejected',
      revision: 'r2',
      clusters: [],
      error: { code: 'REVISION_REJECTED', message: '2 errors', retry: 'stalled' },
    };
    assert.deepEqual(kinds(transitions(rejected, m, ctx)), ['revision-rejected (site)']);
    assert.deepEqual(transitions(rejected, m, ctx), []);
    assert.deepEqual(kinds(transitions({ ...rejected, revision: 'r3' }, m, ctx)), [
      'revision-rejected (site)',
    ]);
    // A plan that cannot be applied is `rejected` as well, but the site is Blocked: its phase
    // change is the news, not each new revision that is still blocked.
    const blocked = (revision: string): ReconcileSummary => ({
      ...run({ b: 'Blocked' }),
      result: 'rejected',
      revision,
      error: rejected.error,
    });
    assert.deepEqual(kinds(transitions(blocked('r4'), m, ctx)), [
      'phase-changed b Blocked',
      'phase-changed (site) Blocked',
    ]);
    assert.deepEqual(transitions(blocked('r5'), m, ctx), []);
  });

  it('drift once per set of changes; a halted rollout once per failed operation', () => {
    const m = emptyMemory();
    transitions(run({ a: 'Ready' }), m, ctx);
    const d = transitions(run({ a: 'Ready' }, { view: drift([['htop', '3.0', '3.2']]) }), m, ctx);
    assert.deepEqual(kinds(d), ['drift-found a']);
    assert.match(d[0]?.message ?? '', /w1: htop 3\.0 → 3\.2/);
    assert.deepEqual(
      transitions(run({ a: 'Ready' }, { view: drift([['htop', '3.0', '3.2']]) }), m, ctx),
      [],
    );
    assert.deepEqual(
      kinds(
        transitions(
          run(
            { a: 'Ready' },
            {
              view: drift([
                ['htop', '3.0', '3.2'],
                ['jq', '1.6', '1.5'],
              ]),
            },
          ),
          m,
          ctx,
        ),
      ),
      ['drift-found a'],
    );
    transitions(run({ a: 'Ready' }, { view: drift([]) }), m, ctx);
    assert.deepEqual(
      kinds(transitions(run({ a: 'Ready' }, { view: drift([['htop', '3.0', '3.2']]) }), m, ctx)),
      ['drift-found a'],
    );
    const halted = run(
      { a: 'Degraded' },
      { failedOp: { cluster: 'a', action: 'upgrade-packages', message: 'apt failed' } },
    );
    assert.deepEqual(kinds(transitions(halted, m, ctx)), [
      'phase-changed a Degraded',
      'rollout-halted a Degraded',
      'phase-changed (site) Degraded',
    ]);
    assert.deepEqual(transitions(halted, m, ctx), []);
  });
});

interface Received {
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A webhook receiver on loopback that answers what `reply` says for each request. */
async function receiver(
  reply: (n: number) => number,
): Promise<{ url: string; got: Received[]; attempts: () => number; close: () => Promise<void> }> {
  const got: Received[] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = reply(++n);
      if (status >= 200 && status < 300)
        got.push({ body: Buffer.concat(chunks).toString(), headers: req.headers });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    attempts: () => n,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function event(i: number): NotifyEvent {
  return {
    id: `id-${i}`,
    type: 'phase-changed',
    at: '2026-01-01T00:00:00.000Z',
    site: 's',
    cluster: `c${i}`,
    phase: 'Degraded',
    reason: 'R',
    message: `m${i}`,
    link: 'http://127.0.0.1/',
  };
}

function verify(r: Received): boolean {
  const header = String(r.headers[SIGNATURE_HEADER] ?? '');
  const want = `sha256=${createHmac('sha256', SECRET).update(r.body).digest('hex')}`;
  return header.length === want.length && timingSafeEqual(Buffer.from(header), Buffer.from(want));
}

describe('serve/notify: delivery', () => {
  it('signs every body; retries after 500 with backoff; loses nothing and keeps the order when the receiver comes back', async () => {
    let down = true;
    const rx = await receiver(() => (down ? 500 : 204));
    const d = new Deliverer({
      target: { url: rx.url, format: 'json' },
      secret: SECRET,
      log,
      backoffMs: 20,
      maxBackoffMs: 100,
    });
    try {
      for (let i = 0; i < 5; i++) d.enqueue(event(i));
      await until('a few failed attempts', () => rx.attempts() >= 3);
      assert.equal(rx.got.length, 0);
      assert.equal(d.pending, 5);
      down = false;
      await until('all five delivered', () => rx.got.length === 5);
      assert.deepEqual(
        rx.got.map((r) => (JSON.parse(r.body) as NotifyEvent).id),
        ['id-0', 'id-1', 'id-2', 'id-3', 'id-4'],
      );
      assert.ok(rx.got.every(verify), 'each signature verifies with the shared secret');
      assert.equal(rx.got[0]?.headers['x-bpa-event'], 'phase-changed');
      assert.equal(rx.got[0]?.headers['x-bpa-delivery'], 'id-0');
      assert.ok(
        rx.got.every((r) => !r.body.includes(SECRET)),
        'no secret in any event',
      );
      assert.equal(d.dropped, 0);
    } finally {
      await d.stop(0);
      await rx.close();
    }
  });

  it('a 4xx answer is final; a full queue drops the oldest; enqueueing never waits on a dead receiver', async () => {
    const rx = await receiver(() => 400);
    const refused: string[] = [];
    const d = new Deliverer({
      target: { url: rx.url, format: 'json' },
      log,
      onOutcome: (e, o) => refused.push(`${e.id} ${o}`),
    });
    d.enqueue(event(1));
    await until('the refusal', () => refused.length === 1);
    assert.deepEqual(refused, ['id-1 rejected']);
    assert.equal(rx.attempts(), 1);
    await d.stop(0);
    await rx.close();

    // Nothing listens there: every attempt fails, and the queue stays bounded.
    const gone = new Deliverer({
      target: { url: rx.url, format: 'json' },
      log,
      maxQueue: 3,
      backoffMs: 60_000,
    });
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 10; i++) gone.enqueue(event(i));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    assert.ok(ms < 50, `10 enqueues took ${ms} ms`);
    assert.equal(gone.pending, 3);
    assert.equal(gone.dropped, 7);
    await gone.stop(0);
  });

  it('a redirect is not followed (the signature stays with the receiver given) and is final, so later events are not held behind it', async () => {
    const elsewhere = await receiver(() => 204);
    let hits = 0;
    const redirecting = http.createServer((req, res) => {
      hits += 1;
      req.resume();
      res.writeHead(307, { location: elsewhere.url }).end();
    });
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
    const outcomes: string[] = [];
    const d = new Deliverer({
      target: {
        url: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`,
        format: 'json',
      },
      secret: SECRET,
      log,
      backoffMs: 10,
      maxBackoffMs: 20,
      onOutcome: (e, o) => outcomes.push(`${e.id} ${o}`),
    });
    try {
      d.enqueue(event(1));
      d.enqueue(event(2));
      await until('both events given up', () => outcomes.length === 2, 3_000);
      assert.deepEqual(outcomes, ['id-1 rejected', 'id-2 rejected']);
      assert.equal(hits, 2, 'one attempt per event');
      assert.equal(elsewhere.attempts(), 0, 'nothing reached the host redirected to');
      assert.equal(d.pending, 0);
    } finally {
      await d.stop(0);
      await new Promise<void>((r) => redirecting.close(() => r()));
      await elsewhere.close();
    }
  });

  it('slack format: one text line with the link; a notifier sends each transition to every receiver once', async () => {
    const body = JSON.parse(bodyFor(event(3), 'slack')) as { text: string };
    assert.equal(body.text, '*s*: cluster c3 is Degraded: R — m3 <http://127.0.0.1/|open>');
    const a = await receiver(() => 200);
    const b = await receiver(() => 200);
    const notifier = new Notifier({
      urls: [a.url, `slack+${b.url}`],
      secret: SECRET,
      pageUrl: 'http://bpa.example',
      log,
    });
    try {
      notifier.observe(run({ x: 'Ready' }));
      notifier.observe(run({ x: 'Failed' }));
      notifier.observe(run({ x: 'Failed' }));
      notifier.observe(run({ x: 'Failed' }));
      await until('deliveries', () => a.got.length === 2 && b.got.length === 2);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(a.got.length, 2);
      const first = JSON.parse(a.got[0]?.body ?? '{}') as NotifyEvent;
      assert.equal(first.type, 'phase-changed');
      assert.equal(first.cluster, 'x');
      assert.equal(first.link, 'http://bpa.example/clusters/x');
      assert.ok(a.got.every(verify));
      assert.match(
        (JSON.parse(b.got[0]?.body ?? '{}') as { text: string }).text,
        /cluster x is Failed \(was Ready\)/,
      );
    } finally {
      await notifier.stop(0);
      await a.close();
      await b.close();
    }
  });
});
