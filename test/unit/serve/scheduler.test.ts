import assert from 'node:assert/strict';
import { Scheduler, type SchedulerOptions } from '../../../src/serve/scheduler.js';
import type { RunRecord } from '../../../src/serve/types.js';
import { BpaError, StalledError, TransientError } from '../../../src/util/errors.js';
import { FakeTimers, ManualReconcile, failed, ok, settle } from './fake-timers.js';

const INTERVAL = 30_000;
const BASE = 5_000;

describe('serve/scheduler', () => {
  let clock: FakeTimers;
  let reconcile: ManualReconcile;
  let runs: RunRecord[];
  let scheduler: Scheduler | undefined;

  function make(extra: Partial<SchedulerOptions> = {}): Scheduler {
    scheduler = new Scheduler({
      reconcile: reconcile.fn,
      intervalMs: INTERVAL,
      jitter: 0,
      backoffBaseMs: BASE,
      graceMs: 60_000,
      timers: clock,
      onRun: (run) => runs.push(run),
      ...extra,
    });
    return scheduler;
  }

  /** Advances to just before `ms` (no new run), then onto it (exactly one new run). */
  async function expectRunAfter(ms: number): Promise<void> {
    const before = reconcile.calls.length;
    await clock.advance(ms - 1);
    assert.equal(reconcile.calls.length, before, `no run before ${ms} ms`);
    await clock.advance(1);
    assert.equal(reconcile.calls.length, before + 1, `one run at ${ms} ms`);
  }

  beforeEach(() => {
    clock = new FakeTimers();
    reconcile = new ManualReconcile();
    runs = [];
  });

  afterEach(async () => {
    const s = scheduler;
    scheduler = undefined;
    if (!s) return;
    const stopping = s.stop();
    // Release anything still in flight so stop() resolves.
    while (reconcile.inFlight > 0) await reconcile.finish();
    await stopping;
    assert.deepEqual(clock.delays(), [], 'no timer left behind');
  });

  it('starts with a startup run and then runs on the interval', async () => {
    const s = make();
    s.start();
    assert.deepEqual(reconcile.triggers(), ['startup']);
    assert.equal(s.state().running, true);
    await reconcile.finish();
    assert.equal(s.state().running, false);
    assert.equal(s.state().completedRuns, 1);
    assert.equal(s.state().lastSuccessAt, clock.now());
    assert.equal(s.state().nextRunAt, clock.now() + INTERVAL);
    await expectRunAfter(INTERVAL);
    assert.deepEqual(reconcile.triggers(), ['startup', 'interval']);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.trigger, 'startup');
  });

  it('reconciles when a maintenance window opens, if that comes before the interval', async () => {
    const s = make();
    s.start();
    await reconcile.finish({ ...ok(), wakeAt: clock.now() + 7_000 });
    assert.equal(s.state().nextRunAt, clock.now() + 7_000);
    await expectRunAfter(7_000);
    assert.deepEqual(reconcile.triggers(), ['startup', 'window']);
    // An opening later than the interval: the interval comes first.
    await reconcile.finish({ ...ok(), wakeAt: clock.now() + 10 * INTERVAL });
    await expectRunAfter(INTERVAL);
    assert.deepEqual(reconcile.triggers(), ['startup', 'window', 'interval']);
    // An opening already past (a slow run): at once.
    await reconcile.finish({ ...ok(), wakeAt: clock.now() - 1 });
    await clock.advance(0);
    assert.deepEqual(reconcile.triggers(), ['startup', 'window', 'interval', 'window']);
  });

  it('coalesces a burst of 100 triggers during a run into exactly one more run', async () => {
    const s = make();
    s.start();
    const outcomes = Array.from({ length: 100 }, () => s.trigger('webhook'));
    assert.equal(outcomes[0], 'queued');
    assert.ok(outcomes.slice(1).every((o) => o === 'coalesced'));
    assert.equal(s.state().queued, true);
    await reconcile.finish();
    assert.deepEqual(reconcile.triggers(), ['startup', 'webhook']);
    assert.equal(s.state().queued, false);
    await reconcile.finish();
    await clock.advance(INTERVAL - 1);
    assert.equal(reconcile.calls.length, 2, 'at most 2 reconciles for the burst');
  });

  it('runs a trigger at once when idle and restarts the interval after it', async () => {
    const s = make();
    s.start();
    await reconcile.finish();
    await clock.advance(10_000);
    assert.equal(s.trigger('watch'), 'started');
    assert.deepEqual(reconcile.triggers(), ['startup', 'watch']);
    await reconcile.finish();
    await expectRunAfter(INTERVAL);
  });

  it('varies the interval by the jitter fraction with the injected random', async () => {
    const cases: Array<[number, number]> = [
      [0, INTERVAL * 0.9],
      [0.25, INTERVAL * 0.95],
      [0.5, INTERVAL],
      [0.999999, Math.round(INTERVAL * (1 + 0.1 * (2 * 0.999999 - 1)))],
    ];
    let r = 0;
    const s = make({ jitter: 0.1, random: () => cases[r]?.[0] ?? 0.5 });
    s.start();
    for (const [value, expected] of cases) {
      assert.equal(cases[r]?.[0], value);
      await reconcile.finish();
      const delay = (s.state().nextRunAt ?? 0) - clock.now();
      assert.equal(delay, expected, `random ${value}`);
      assert.ok(delay >= INTERVAL * 0.9 && delay <= INTERVAL * 1.1);
      r += 1;
      await expectRunAfter(expected);
    }
  });

  it('backs off exponentially after transient failures, capped at the interval, reset by a success', async () => {
    const s = make();
    s.start();
    for (const delay of [5_000, 10_000, 20_000, 30_000, 30_000]) {
      await reconcile.finish(failed('transient'));
      assert.equal((s.state().nextRunAt ?? 0) - clock.now(), delay);
      await expectRunAfter(delay);
      assert.equal(reconcile.calls.at(-1)?.trigger, 'retry');
    }
    assert.equal(s.state().consecutiveFailures, 5);
    assert.equal(s.state().lastSuccessAt, undefined);
    await reconcile.finish(ok());
    assert.equal(s.state().consecutiveFailures, 0);
    await expectRunAfter(INTERVAL);
    await reconcile.finish(failed('transient'));
    await expectRunAfter(BASE);
  });

  it('treats a thrown error as a failure with its retry kind', async () => {
    const s = make();
    s.start();
    await reconcile.fail(new Error('boom'));
    assert.equal(runs[0]?.summary.result, 'failed');
    assert.equal(runs[0]?.summary.error?.code, 'RECONCILE_CRASHED');
    await expectRunAfter(BASE);
    await reconcile.fail(new TransientError('GIT_UNAVAILABLE', 'git host down'));
    assert.equal(runs[1]?.summary.error?.code, 'GIT_UNAVAILABLE');
    await expectRunAfter(2 * BASE);
    await reconcile.fail(new StalledError('SITE_INVALID', 'bad input'));
    await expectRunAfter(INTERVAL);
    assert.ok(
      runs.every((run) => !(run.summary.error instanceof BpaError)),
      'plain JSON errors',
    );
  });

  it('retries a waiting failure after its retryAfterMs, at most the interval', async () => {
    const s = make();
    s.start();
    await reconcile.finish(failed('waiting', 7_000));
    await expectRunAfter(7_000);
    assert.equal(reconcile.calls.at(-1)?.trigger, 'retry');
    await reconcile.finish(failed('waiting', 10 * INTERVAL));
    assert.equal((s.state().nextRunAt ?? 0) - clock.now(), INTERVAL);
  });

  it('does not retry a stalled failure before the interval, but runs on a new trigger', async () => {
    const s = make();
    s.start();
    await reconcile.finish(failed('stalled'));
    await clock.advance(INTERVAL - 1);
    assert.equal(reconcile.calls.length, 1);
    assert.equal(s.trigger('webhook'), 'started');
    await reconcile.finish({ result: 'rejected', clusters: [] });
    assert.equal(s.state().consecutiveFailures, 2);
    await expectRunAfter(INTERVAL);
    assert.equal(reconcile.calls.at(-1)?.trigger, 'interval');
  });

  it('stops gracefully: aborts the run in flight, waits for it, starts nothing after', async () => {
    const s = make();
    s.start();
    s.trigger('webhook');
    const call = reconcile.calls[0];
    assert.ok(call);
    let stopped: { timedOut: boolean } | undefined;
    void s.stop().then((r) => (stopped = r));
    await settle();
    assert.equal(call.signal.aborted, true);
    assert.equal((call.signal.reason as BpaError).code, 'SHUTDOWN');
    assert.equal(stopped, undefined, 'stop() waits for the run in flight');
    assert.equal(s.state().stopping, true);
    assert.equal(s.trigger('webhook'), 'stopped');
    await reconcile.finish();
    assert.deepEqual(stopped, { timedOut: false });
    await clock.advance(10 * INTERVAL);
    assert.equal(reconcile.calls.length, 1, 'neither the queued nor a timed run started');
    assert.deepEqual(clock.delays(), []);
  });

  it('gives up waiting after the grace period', async () => {
    const s = make({ graceMs: 1_000 });
    s.start();
    let stopped: { timedOut: boolean } | undefined;
    void s.stop().then((r) => (stopped = r));
    await clock.advance(999);
    assert.equal(stopped, undefined);
    await clock.advance(1);
    assert.deepEqual(stopped, { timedOut: true });
  });

  it('runs only while leader', async () => {
    let leading = false;
    const s = make({ isLeader: () => leading, leaderPollMs: 1_000 });
    s.start();
    assert.equal(reconcile.calls.length, 0);
    assert.equal(s.state().paused, true);
    assert.equal(s.trigger('webhook'), 'paused');
    await clock.advance(5 * INTERVAL);
    assert.equal(reconcile.calls.length, 0, 'a standby never reconciles');

    leading = true;
    await clock.advance(1_000);
    assert.deepEqual(reconcile.triggers(), ['startup'], 'the poll notices leadership');
    assert.equal(s.state().paused, false);
    s.trigger('webhook');

    leading = false;
    s.leadershipChanged();
    const call = reconcile.calls[0];
    assert.equal(call?.signal.aborted, true, 'a former leader aborts its run at once');
    assert.equal((call?.signal.reason as BpaError).code, 'LEADERSHIP_LOST');
    await reconcile.finish(failed('transient'));
    await clock.advance(5 * INTERVAL);
    assert.equal(reconcile.calls.length, 1, 'neither the queued nor a retry ran');

    leading = true;
    s.leadershipChanged();
    assert.deepEqual(reconcile.triggers(), ['startup', 'startup']);
  });

  it('reports itself wedged when a run takes too long or a timed run is overdue', async () => {
    const s = make();
    s.start();
    assert.equal(s.wedged(60_000), undefined);
    await clock.advance(60_001);
    assert.match(s.wedged(60_000) ?? '', /running for 60s/);
    await reconcile.finish();
    assert.equal(s.wedged(60_000), undefined);
  });

  it('rejects nonsense settings', () => {
    assert.throws(() => make({ intervalMs: 0 }), RangeError);
    assert.throws(() => make({ jitter: 1 }), RangeError);
    assert.throws(() => make({ backoffBaseMs: -1 }), RangeError);
    scheduler = undefined;
  });
});
