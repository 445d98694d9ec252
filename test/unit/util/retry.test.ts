import assert from 'node:assert/strict';
import { backoff, retry } from '../../../src/util/retry.js';

class Busy extends Error {}

describe('retry', () => {
  it('tries again while the failure is worth it, and returns the first success', async () => {
    const seen: number[] = [];
    const result = await retry(
      async (n) => {
        seen.push(n);
        if (n < 3) throw new Busy();
        return 'done';
      },
      { attempts: 5, retryIf: (err) => err instanceof Busy },
    );
    assert.equal(result, 'done');
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('throws the last failure once the attempts run out', async () => {
    let tries = 0;
    const err = await retry(
      async () => {
        tries += 1;
        throw new Busy(`try ${tries}`);
      },
      { attempts: 3, retryIf: () => true },
    ).catch((e: unknown) => e);
    assert.ok(err instanceof Busy);
    assert.equal(err.message, 'try 3');
    assert.equal(tries, 3);
  });

  it('stops at once on a failure not worth retrying', async () => {
    let tries = 0;
    await assert.rejects(
      retry(
        async () => {
          tries += 1;
          throw new TypeError('a bug');
        },
        { attempts: 5, retryIf: (err) => err instanceof Busy },
      ),
      TypeError,
    );
    assert.equal(tries, 1);
  });

  it('waits as delayMs says between attempts, with the number of failures so far', async () => {
    const asked: number[] = [];
    await retry(
      async (n) => {
        if (n < 3) throw new Busy();
      },
      {
        attempts: 3,
        retryIf: () => true,
        delayMs: (failures) => {
          asked.push(failures);
          return 1;
        },
      },
    );
    assert.deepEqual(asked, [1, 2]);
  });

  it('ends a wait when the signal fires, throwing the last failure', async () => {
    const stop = new AbortController();
    let tries = 0;
    const started = Date.now();
    const done = retry(
      async () => {
        tries += 1;
        throw new Busy();
      },
      { attempts: Infinity, retryIf: () => true, delayMs: () => 60_000, signal: stop.signal },
    );
    stop.abort();
    await assert.rejects(done, Busy);
    assert.equal(tries, 1);
    assert.ok(Date.now() - started < 10_000, 'the 60 s wait was cut short');
  });

  it('backs off exponentially up to the cap, each wait between half and all of it', () => {
    const delay = backoff(100, 500);
    for (let i = 0; i < 50; i++) {
      const first = delay(1);
      const capped = delay(10);
      assert.ok(first >= 50 && first <= 100, `first wait ${first}`);
      assert.ok(capped >= 250 && capped <= 500, `capped wait ${capped}`);
    }
    assert.equal(backoff(0, 500)(3), 0);
  });
});
