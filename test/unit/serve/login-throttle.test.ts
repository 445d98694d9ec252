import assert from 'node:assert/strict';
import { LoginThrottle } from '../../../src/serve/ui/login-throttle.js';

describe('serve/ui: the login throttle', () => {
  const t0 = Date.parse('2026-03-01T12:00:00Z');

  it('blocks an address after 5 failures in a minute, for a delay that doubles', () => {
    const t = new LoginThrottle();
    for (let i = 0; i < 4; i++) assert.equal(t.failed('198.51.100.7', t0 + i * 1000), 0);
    assert.equal(t.failed('198.51.100.7', t0 + 4000), 60);
    assert.equal(t.retryAfter('198.51.100.7', t0 + 34_000), 30);
    assert.equal(t.retryAfter('198.51.100.8', t0 + 4000), 0, 'another address is not blocked');
    assert.equal(t.retryAfter('198.51.100.7', t0 + 64_000), 0, 'the delay is over');
    let at = t0 + 64_000;
    for (let i = 0; i < 4; i++) assert.equal(t.failed('198.51.100.7', (at += 1000)), 0);
    assert.equal(t.failed('198.51.100.7', (at += 1000)), 120, 'the next round waits twice as long');
    at += 120_000;
    for (let i = 0; i < 4; i++) t.failed('198.51.100.7', (at += 1000));
    assert.equal(t.failed('198.51.100.7', (at += 1000)), 240);
  });

  it('forgets failures older than the window, and everything after a right token', () => {
    const t = new LoginThrottle();
    for (let i = 0; i < 4; i++) t.failed('a', t0 + i * 1000);
    assert.equal(t.failed('a', t0 + 61_000), 0, 'a new minute, a new count');
    for (let i = 0; i < 3; i++) t.failed('a', t0 + 62_000 + i);
    t.succeeded('a');
    for (let i = 0; i < 4; i++) assert.equal(t.failed('a', t0 + 63_000 + i), 0);
  });

  it('caps the delay, and the addresses it remembers (least recently seen forgotten first)', () => {
    const t = new LoginThrottle({ maxDelayMs: 300_000, maxClients: 3 });
    let at = t0;
    for (let round = 0; round < 10; round++) {
      let wait = 0;
      for (let i = 0; i < 5; i++) wait = t.failed('a', (at += 1));
      assert.ok(wait <= 300, `round ${round}: ${wait}`);
      at += wait * 1000;
    }
    for (const address of ['b', 'c', 'd']) t.failed(address, at);
    assert.equal(t.size, 3);
    for (let i = 0; i < 1000; i++) t.failed(`2001:db8::${i.toString(16)}`, at);
    assert.equal(t.size, 3);
  });
});
