import assert from 'node:assert/strict';
import { clientKey, GuessLimiter, type GuessBlock } from '../../../src/serve/guess-limit.js';

describe('serve: the guess limiter', () => {
  const t0 = Date.parse('2026-03-01T12:00:00Z');
  const wrong = (): boolean => false;
  const right = (): boolean => true;
  /** Seconds of the block a wrong token from `address` at `at` leads to (0: none). */
  const miss = (l: GuessLimiter, address: string, at: number): number => {
    const g = l.check(address, at, wrong);
    return g.ok ? -1 : (g.blocked?.seconds ?? 0);
  };

  it('blocks an address after 5 failures in a minute, for a delay that doubles', () => {
    const l = new GuessLimiter();
    for (let i = 0; i < 4; i++) assert.equal(miss(l, '198.51.100.7', t0 + i * 1000), 0);
    assert.equal(miss(l, '198.51.100.7', t0 + 4000), 60);
    assert.equal(l.blocked('198.51.100.7', t0 + 34_000)?.seconds, 30);
    assert.equal(l.blocked('198.51.100.8', t0 + 4000), undefined, 'another address is not');
    let compared = false;
    const refused = l.check('198.51.100.7', t0 + 34_000, () => (compared = true));
    assert.deepEqual(refused, {
      ok: false,
      blocked: { scope: 'client', client: '198.51.100.7', seconds: 30 },
    });
    assert.equal(compared, false, 'while blocked, a token is not even compared');
    assert.equal(l.blocked('198.51.100.7', t0 + 64_000), undefined, 'the delay is over');
    let at = t0 + 64_000;
    for (let i = 0; i < 4; i++) assert.equal(miss(l, '198.51.100.7', (at += 1000)), 0);
    assert.equal(miss(l, '198.51.100.7', (at += 1000)), 120, 'the next round waits twice as long');
    at += 120_000;
    for (let i = 0; i < 4; i++) miss(l, '198.51.100.7', (at += 1000));
    assert.equal(miss(l, '198.51.100.7', (at += 1000)), 240);
  });

  it('forgets failures older than the window, and the address after a right token', () => {
    const l = new GuessLimiter();
    for (let i = 0; i < 4; i++) miss(l, 'a', t0 + i * 1000);
    assert.equal(miss(l, 'a', t0 + 61_000), 0, 'a new minute, a new count');
    for (let i = 0; i < 3; i++) miss(l, 'a', t0 + 62_000 + i);
    assert.deepEqual(l.check('a', t0 + 62_500, right), { ok: true });
    for (let i = 0; i < 4; i++) assert.equal(miss(l, 'a', t0 + 63_000 + i), 0);
  });

  it('holds across addresses: 20 wrong tokens a minute from anywhere block checks of the token', () => {
    const blocks: GuessBlock[] = [];
    const l = new GuessLimiter({ onBlock: (b) => blocks.push(b) });
    // 4 each from 50 addresses: no address alone reaches its 5.
    const seen: number[] = [];
    for (let i = 0; i < 200; i++) seen.push(miss(l, `127.0.0.${(i % 50) + 2}`, t0 + i * 10));
    assert.deepEqual(seen.slice(0, 19), Array<number>(19).fill(0));
    assert.equal(seen[19], 30, 'the 20th wrong token starts a 30 s block for everyone');
    assert.ok(seen.slice(20).every((s) => s > 0 && s <= 30));
    assert.deepEqual(blocks, [{ scope: 'everyone', client: '127.0.0.21', seconds: 30 }]);
    // The right token of an address that never guessed is refused too, uncompared.
    let compared = false;
    const g = l.check('192.0.2.1', t0 + 5_000, () => (compared = true));
    assert.equal(g.ok, false);
    assert.equal(compared, false);
    assert.equal(g.ok === false && g.blocked?.scope, 'everyone');
    // After the block the right token gets in; a right token does not clear everyone's count.
    const after = t0 + 2_000 + 30_000;
    assert.deepEqual(l.check('192.0.2.1', after, right), { ok: true });
    for (let i = 0; i < 19; i++) assert.equal(miss(l, `10.0.${i}.1`, after + i), 0);
    assert.equal(miss(l, '10.0.99.1', after + 100), 60, 'the next round for everyone: twice');
  });

  it("everyone's block does not hold an address that gave the right token within a day; its own does", () => {
    const l = new GuessLimiter();
    assert.deepEqual(l.check('192.0.2.1', t0, right), { ok: true }, 'a client that uses the token');
    assert.deepEqual(l.check('2001:db8:5:6::1', t0, right), { ok: true });
    let at = t0 + 3_600_000;
    // A botnet keeps everyone blocked: 20 wrong tokens, again each time the block ends.
    for (let round = 0; round < 6; round++) {
      let wait = 0;
      for (let i = 0; i < 20; i++) wait = Math.max(wait, miss(l, `10.${round}.${i}.1`, at + i));
      assert.ok(wait > 0, `round ${round} blocks everyone`);
      assert.equal(l.blocked('198.51.100.9', at + 100)?.scope, 'everyone', 'a new address waits');
      // The clients that gave the right token are not locked out, their /64 alike.
      assert.deepEqual(l.check('192.0.2.1', at + 100, right), { ok: true }, `round ${round}`);
      assert.deepEqual(l.check('2001:db8:5:6::2', at + 100, right), { ok: true });
      at += wait * 1000 + 1000;
    }
    // Its own budget still holds for a trusted address: 5 wrong tokens block it.
    const mine = '192.0.2.1';
    for (let i = 0; i < 4; i++) assert.equal(miss(l, mine, at + i), 0);
    assert.equal(miss(l, mine, at + 4), 60);
    assert.equal(l.check(mine, at + 5, right).ok, false);
    // A day after its last right token, everyone's block holds it again.
    const later = t0 + 3_600_000 + 25 * 3_600_000;
    for (let i = 0; i < 20; i++) miss(l, `10.99.${i}.1`, later + i);
    assert.equal(l.blocked('2001:db8:5:6::1', later + 100)?.scope, 'everyone');
  });

  it('remembers at most maxTrusted addresses that gave the right token', () => {
    const l = new GuessLimiter({ maxTrusted: 3 });
    for (let i = 0; i < 100; i++) l.check(`198.51.100.${i}`, t0 + i, right);
    assert.equal(l.trustedSize, 3);
    for (let i = 0; i < 20; i++) miss(l, `10.0.${i}.1`, t0 + 200);
    assert.equal(l.blocked('198.51.100.99', t0 + 300), undefined, 'the most recent is kept');
    assert.equal(l.blocked('198.51.100.0', t0 + 300)?.scope, 'everyone', 'the oldest forgotten');
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as IPv4', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8:1:2::ffff'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:DB8::1'), '2001:db8:0:0::/64');
    assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(clientKey('::1'), '0:0:0:0::/64');
    assert.equal(clientKey('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(clientKey('198.51.100.7'), '198.51.100.7');
    const l = new GuessLimiter();
    for (let i = 0; i < 4; i++) assert.equal(miss(l, `2001:db8:1:2::${i + 1}`, t0 + i), 0);
    assert.equal(miss(l, '2001:db8:1:2:ffff:ffff:ffff:ffff', t0 + 5), 60);
    assert.equal(l.blocked('2001:db8:1:3::1', t0 + 6), undefined, 'another /64 is not blocked');
  });

  it('caps the delay, and the addresses it remembers (least recently seen forgotten first)', () => {
    const l = new GuessLimiter({
      perClient: { maxDelayMs: 300_000 },
      everyone: { maxFailures: 1e9 },
      maxClients: 3,
    });
    let at = t0;
    for (let round = 0; round < 10; round++) {
      let wait = 0;
      for (let i = 0; i < 5; i++) wait = miss(l, 'a', (at += 1));
      assert.ok(wait <= 300, `round ${round}: ${wait}`);
      at += wait * 1000;
    }
    for (const address of ['b', 'c', 'd']) miss(l, address, at);
    assert.equal(l.size, 3);
    for (let i = 0; i < 1000; i++) miss(l, `198.51.${i >> 8}.${i & 255}`, at);
    assert.equal(l.size, 3);
  });
});
