import assert from 'node:assert/strict';
import { windowStatus, zonedInstant } from '../../../src/plan/windows.js';
import type { MaintenanceWindow } from '../../../src/validate/model.js';

const t = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();
const win = (over: Partial<MaintenanceWindow>): MaintenanceWindow => ({
  days: [],
  start: '22:00',
  end: '04:00',
  timezone: 'UTC',
  ...over,
});

describe('maintenance windows (pure, injected clock)', () => {
  it('no windows: always open', () => {
    assert.deepEqual(windowStatus([], t('2026-11-24T10:00:00Z')), { open: true });
  });

  it('a Saturday-only window is closed on a Tuesday and opens on Saturday', () => {
    const w = [win({ days: ['sat'], start: '01:00', end: '05:00' })];
    const s = windowStatus(w, t('2026-11-24T10:00:00Z')); // a Tuesday
    assert.equal(s.open, false);
    assert.equal(iso(s.opensAt), '2026-11-28T01:00:00.000Z');
  });

  it('the boundary minute: open at the opening instant, closed at the closing instant', () => {
    const w = [win({ days: ['sat'], start: '01:00', end: '05:00' })];
    assert.equal(windowStatus(w, t('2026-11-28T00:59:59.999Z')).open, false);
    const at = windowStatus(w, t('2026-11-28T01:00:00Z'));
    assert.equal(at.open, true);
    assert.equal(iso(at.closesAt), '2026-11-28T05:00:00.000Z');
    assert.equal(windowStatus(w, t('2026-11-28T04:59:59.999Z')).open, true);
    const closed = windowStatus(w, t('2026-11-28T05:00:00Z'));
    assert.equal(closed.open, false);
    assert.equal(iso(closed.opensAt), '2026-12-05T01:00:00.000Z');
  });

  it('a window past midnight belongs to the day it opens on', () => {
    const w = [win({ days: ['tue'], start: '22:00', end: '04:00' })];
    // Wednesday 02:00 is inside Tuesday's window …
    const wed = windowStatus(w, t('2026-11-25T02:00:00Z'));
    assert.equal(wed.open, true);
    assert.equal(iso(wed.closesAt), '2026-11-25T04:00:00.000Z');
    // … Tuesday 02:00 is not (Monday has no window).
    const tue = windowStatus(w, t('2026-11-24T02:00:00Z'));
    assert.equal(tue.open, false);
    assert.equal(iso(tue.opensAt), '2026-11-24T22:00:00.000Z');
  });

  it('end "24:00" is midnight, and equal start and end is a whole day', () => {
    const w = [win({ days: ['mon'], start: '20:00', end: '24:00' })];
    assert.equal(
      iso(windowStatus(w, t('2026-11-23T21:00:00Z')).closesAt),
      '2026-11-24T00:00:00.000Z',
    );
    const day = [win({ days: ['mon'], start: '06:00', end: '06:00' })];
    assert.equal(windowStatus(day, t('2026-11-24T05:59:00Z')).open, true);
    assert.equal(windowStatus(day, t('2026-11-24T06:00:00Z')).open, false);
  });

  it('reads start and end in the window time zone', () => {
    // 22:00 in Berlin in winter (UTC+1) is 21:00 UTC.
    const w = [win({ days: ['tue'], start: '22:00', end: '23:00', timezone: 'Europe/Berlin' })];
    assert.equal(
      iso(windowStatus(w, t('2026-11-24T12:00:00Z')).opensAt),
      '2026-11-24T21:00:00.000Z',
    );
    assert.equal(windowStatus(w, t('2026-11-24T21:30:00Z')).open, true);
    // The weekday is the zone's: 16:00 UTC Monday is already Tuesday 01:00 in Tokyo.
    const tokyo = [win({ days: ['tue'], start: '00:00', end: '06:00', timezone: 'Asia/Tokyo' })];
    assert.equal(windowStatus(tokyo, t('2026-11-23T16:00:00Z')).open, true); // Tue 01:00 JST
    assert.equal(windowStatus(tokyo, t('2026-11-23T14:00:00Z')).open, false); // Mon 23:00 JST
  });

  it('DST forward (Europe/Berlin, 2026-03-29 02:00 → 03:00): a skipped time opens or closes the window at the jump', () => {
    assert.equal(iso(zonedInstant(2026, 2, 29, 150, 'Europe/Berlin')), '2026-03-29T01:00:00.000Z');
    const w = [win({ days: ['sun'], start: '02:30', end: '04:00', timezone: 'Europe/Berlin' })];
    const s = windowStatus(w, t('2026-03-28T12:00:00Z'));
    // 02:30 does not exist that night: the window opens when the clock jumps to 03:00 CEST
    // (01:00 UTC) and closes at 04:00 CEST (02:00 UTC): the hour the wall clock shows.
    assert.equal(iso(s.opensAt), '2026-03-29T01:00:00.000Z');
    assert.equal(
      iso(windowStatus(w, t('2026-03-29T01:00:00Z')).closesAt),
      '2026-03-29T02:00:00.000Z',
    );
    // An end the clock skips closes the window at the jump: 01:00–02:30 is 01:00–02:00 CET.
    const early = [win({ days: ['sun'], start: '01:00', end: '02:30', timezone: 'Europe/Berlin' })];
    assert.equal(
      iso(windowStatus(early, t('2026-03-29T00:30:00Z')).closesAt),
      '2026-03-29T01:00:00.000Z',
    );
    // The Sunday before and after, the same wall-clock window in the zone's other offset.
    assert.equal(
      iso(windowStatus(w, t('2026-03-21T12:00:00Z')).opensAt),
      '2026-03-22T01:30:00.000Z',
    );
    assert.equal(
      iso(windowStatus(w, t('2026-03-30T12:00:00Z')).opensAt),
      '2026-04-05T00:30:00.000Z',
    );
  });

  it('DST back (Europe/Berlin, 2026-10-25 03:00 → 02:00): a repeated start is its first occurrence', () => {
    const w = [win({ days: ['sun'], start: '02:30', end: '03:30', timezone: 'Europe/Berlin' })];
    const s = windowStatus(w, t('2026-10-24T12:00:00Z'));
    // 02:30 CEST (00:30 UTC) comes first; 03:30 CET is 02:30 UTC: two hours of real time.
    assert.equal(iso(s.opensAt), '2026-10-25T00:30:00.000Z');
    assert.equal(
      iso(windowStatus(w, t('2026-10-25T02:00:00Z')).closesAt),
      '2026-10-25T02:30:00.000Z',
    );
  });

  it('DST in America/New_York (2026-03-08): a nightly window keeps its wall-clock hours', () => {
    const w = [win({ start: '01:00', end: '05:00', timezone: 'America/New_York' })];
    // Saturday night: EST (UTC−5); Sunday night: EDT (UTC−4).
    assert.equal(
      iso(windowStatus(w, t('2026-03-07T12:00:00Z')).opensAt),
      '2026-03-08T06:00:00.000Z',
    );
    assert.equal(
      iso(windowStatus(w, t('2026-03-08T07:00:00Z')).closesAt),
      '2026-03-08T09:00:00.000Z',
    );
    assert.equal(
      iso(windowStatus(w, t('2026-03-08T12:00:00Z')).opensAt),
      '2026-03-09T05:00:00.000Z',
    );
  });

  it('with several windows: open if any is, closing with the last open one; the earliest opening next', () => {
    const w = [
      win({ days: ['sat'], start: '01:00', end: '03:00' }),
      win({ days: ['sat'], start: '02:00', end: '06:00' }),
      win({ days: ['wed'], start: '12:00', end: '13:00', timezone: 'Europe/Berlin' }),
    ];
    assert.equal(
      iso(windowStatus(w, t('2026-11-28T02:30:00Z')).closesAt),
      '2026-11-28T06:00:00.000Z',
    );
    assert.equal(
      iso(windowStatus(w, t('2026-11-24T10:00:00Z')).opensAt),
      '2026-11-25T11:00:00.000Z',
    );
  });
});
