import assert from 'node:assert/strict';
import { gateCluster } from '../../../src/plan/gate.js';
import type { ClusterPlan } from '../../../src/plan/types.js';
import { WEEKDAYS, windowStatus } from '../../../src/plan/windows.js';
import type { Day2Settings, MaintenanceWindow, Weekday } from '../../../src/validate/model.js';

/**
 * Maintenance windows against an oracle that knows nothing of instants: the wall clock of the
 * zone, read moment by moment. Random zones, dates and windows, drawn near the zones'
 * daylight-saving changes, from a seeded generator (a failing case names its seed).
 */

const ZONES = [
  'UTC',
  'Europe/Berlin', // 02:00 → 03:00 forward, 03:00 → 02:00 back
  'Europe/London', // 01:00 → 02:00
  'America/New_York',
  'America/St_Johns', // −03:30, DST
  'America/Havana', // changes at midnight
  'America/Santiago', // southern hemisphere, changes at midnight
  'Australia/Sydney', // southern hemisphere
  'Australia/Adelaide', // +09:30, southern DST
  'Australia/Lord_Howe', // +10:30 / +11: a 30-minute DST
  'Pacific/Auckland', // southern hemisphere
  'Pacific/Chatham', // +12:45 / +13:45
  'Asia/Kolkata', // +05:30, no DST
  'Asia/Kathmandu', // +05:45, no DST
  'Asia/Tehran', // +03:30, DST until 2022
] as const;

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's wall clock at t: its calendar day (as a UTC midnight) and the second of that day. */
function wall(t: number, zone: string): { day: number; second: number } {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(t)) if (part.type !== 'literal') p[part.type] = +part.value;
  return {
    day: Date.UTC(p['year'] ?? 0, (p['month'] ?? 1) - 1, p['day'] ?? 1),
    second: (p['hour'] ?? 0) * 3600 + (p['minute'] ?? 0) * 60 + (p['second'] ?? 0),
  };
}

const minuteOf = (hhmm: string): number => +hhmm.slice(0, 2) * 60 + +hhmm.slice(3);
const onDay = (w: MaintenanceWindow, day: number): boolean =>
  !w.days.length || w.days.includes(WEEKDAYS[new Date(day).getUTCDay()] as Weekday);

/** Whether the zone's wall clock at t reads a time inside the window (no instants involved). */
function wallInside(w: MaintenanceWindow, t: number): boolean {
  const { day, second } = wall(t, w.timezone);
  const start = minuteOf(w.start) * 60;
  const end = minuteOf(w.end) * 60;
  if (end > start) return onDay(w, day) && start <= second && second < end;
  // Past midnight (or a whole day): the evening of its own day, the morning of the next.
  return (onDay(w, day) && second >= start) || (onDay(w, day - DAY) && second < end);
}

/** The instants in [from, to) at which a zone's UTC offset changes (found to the second). */
function changes(zone: string, from: number, to: number): number[] {
  const offset = (t: number): number => {
    const w = wall(t, zone);
    return w.day + w.second * 1000 - Math.floor(t / 1000) * 1000;
  };
  const out: number[] = [];
  for (let t = from; t < to; t += 6 * HOUR) {
    const o = offset(t);
    if (offset(t + 6 * HOUR) === o) continue;
    let lo = t / 1000;
    let hi = (t + 6 * HOUR) / 1000;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (offset(mid * 1000) === o) lo = mid;
      else hi = mid;
    }
    out.push(hi * 1000);
  }
  return out;
}

const changeCache = new Map<string, number[]>();
function changesIn(zone: string, year: number): number[] {
  const key = `${zone} ${year}`;
  let c = changeCache.get(key);
  if (!c) changeCache.set(key, (c = changes(zone, Date.UTC(year, 0, 1), Date.UTC(year + 1, 0, 1))));
  return c;
}

const hhmm = (minute: number): string => {
  const m = ((minute % 1440) + 1440) % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
};

interface Case {
  seed: number;
  windows: MaintenanceWindow[];
  now: number;
  /** Offset changes near `now`: the moments most worth looking at. */
  edges: number[];
}

/** A case drawn near a daylight-saving change of a random zone (or anywhere in the year). */
function drawCase(seed: number): Case {
  const rand = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const zone = pick(ZONES);
  const year = 2016 + Math.floor(rand() * 20);
  const zoneChanges = changesIn(zone, year);
  const near = zoneChanges.length && rand() < 0.85 ? pick(zoneChanges) : undefined;
  const now =
    near !== undefined
      ? near + Math.round(((rand() * 8 - 6) * DAY) / MIN) * MIN + (rand() < 0.5 ? 0 : 1)
      : Date.UTC(year, 0, 1) + Math.floor(rand() * 365 * DAY);
  // Windows whose times sit on, around or across the change's wall-clock times.
  const anchor = near !== undefined ? wall(near - 1000, zone) : wall(now, zone);
  const anchorMin = Math.round((anchor.second + 1) / 60);
  const anchorDay = WEEKDAYS[new Date(anchor.day).getUTCDay()] as Weekday;
  const windows: MaintenanceWindow[] = [];
  const count = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < count; i++) {
    const around = (): number =>
      rand() < 0.6
        ? anchorMin + pick([-90, -60, -45, -30, -15, 0, 15, 30, 45, 60, 90, 120])
        : Math.floor(rand() * 96) * 15;
    const start = around();
    let end = rand() < 0.2 ? start + 1440 : around(); // equal: a whole day
    if (rand() < 0.15) end = 1440; // "24:00"
    const days = WEEKDAYS.filter(() => rand() < 0.3);
    if (rand() < 0.7 && !days.includes(anchorDay)) days.push(anchorDay);
    windows.push({
      days: rand() < 0.15 ? [] : days,
      start: hhmm(start),
      end: end === 1440 ? '24:00' : hhmm(end),
      timezone: rand() < 0.9 ? zone : pick(ZONES),
    });
  }
  const edges = changesIn(zone, year)
    .concat(changesIn(zone, year + 1))
    .filter((c) => c > now - 2 * DAY && c < now + 10 * DAY);
  return { seed, windows, now, edges };
}

/** Moments in [from, to): a spread of them, and each offset change ± a second within it. */
function moments(c: Case, from: number, to: number, rand: () => number, n: number): number[] {
  const out = [from];
  for (let i = 0; i < n; i++) out.push(from + Math.floor(rand() * (to - from)));
  for (const e of c.edges) for (const t of [e - 1000, e - 1, e, e + 1000]) out.push(t);
  return out.filter((t) => t >= from && t < to);
}

function check(c: Case): void {
  const rand = rng(c.seed ^ 0x5bd1e995);
  const where = `seed ${c.seed}: ${JSON.stringify(c.windows)} at ${new Date(c.now).toISOString()}`;
  const open = (t: number): boolean => windowStatus(c.windows, t).open;
  const wallOpen = (t: number): boolean => c.windows.some((w) => wallInside(w, t));

  // Every moment whose wall clock reads a time inside a window is inside it.
  for (const t of moments(c, c.now - DAY, c.now + 9 * DAY, rand, 40)) {
    if (wallOpen(t))
      assert.ok(open(t), `${where}: wall clock inside at ${new Date(t).toISOString()}, but closed`);
  }

  const s = windowStatus(c.windows, c.now);
  if (s.open) {
    assert.ok(s.closesAt !== undefined && s.closesAt > c.now, `${where}: open, closing after now`);
    for (const t of moments(c, c.now, s.closesAt, rand, 12))
      assert.ok(
        open(t),
        `${where}: open now, closed at ${new Date(t).toISOString()} before closesAt`,
      );
    return;
  }
  assert.ok(s.opensAt !== undefined, `${where}: a weekly window opens within a week`);
  const opensAt = s.opensAt;
  assert.ok(opensAt > c.now && opensAt <= c.now + 8 * DAY, `${where}: opensAt within a week`);
  const at = windowStatus(c.windows, opensAt);
  assert.ok(
    at.open,
    `${where}: closed at the opening it named, ${new Date(opensAt).toISOString()}`,
  );
  assert.ok(!open(opensAt - 1), `${where}: already open just before opensAt`);
  for (const t of moments(c, c.now, opensAt, rand, 16))
    assert.ok(
      !open(t),
      `${where}: open at ${new Date(t).toISOString()}, before the opening it named`,
    );
  assert.ok(at.closesAt !== undefined && at.closesAt > opensAt);
  for (const t of moments(c, opensAt, at.closesAt, rand, 12))
    assert.ok(
      open(t),
      `${where}: closed at ${new Date(t).toISOString()}, between opensAt and its close`,
    );

  // What a plan names as the opening (to the minute) is a moment the window is open.
  const plan = {
    cluster: 'east',
    actions: [{ kind: 'upgrade-packages' }],
  } as unknown as ClusterPlan;
  const day2: Day2Settings = { windows: c.windows, gate: 'running', suspend: false };
  gateCluster(plan, day2, { now: c.now });
  assert.equal(plan.gate?.state, 'deferred', where);
  const named = Date.parse(plan.gate?.opensAt ?? '');
  assert.ok(open(named), `${where}: the plan names ${plan.gate?.opensAt}, when it is closed`);
}

describe('maintenance windows: properties across zones and daylight-saving changes', () => {
  it('Europe/Berlin 2026-03-29, 02:30–03:30 across the jump: open 03:00–03:30, and the plan names 03:00', () => {
    const c: Case = {
      seed: 0,
      windows: [{ days: ['sun'], start: '02:30', end: '03:30', timezone: 'Europe/Berlin' }],
      now: Date.parse('2026-03-28T12:00:00Z'),
      edges: [Date.parse('2026-03-29T01:00:00Z')],
    };
    check(c);
    const s = windowStatus(c.windows, c.now);
    assert.equal(new Date(s.opensAt ?? 0).toISOString(), '2026-03-29T01:00:00.000Z');
    assert.equal(
      new Date(
        windowStatus(c.windows, Date.parse('2026-03-29T01:15:00Z')).closesAt ?? 0,
      ).toISOString(),
      '2026-03-29T01:30:00.000Z',
    );
  });

  it('a window wholly inside a jump does not open that day; the plan names the next week', () => {
    const w: MaintenanceWindow[] = [
      { days: ['sun'], start: '02:15', end: '02:45', timezone: 'Europe/Berlin' },
    ];
    check({ seed: 1, windows: w, now: Date.parse('2026-03-28T12:00:00Z'), edges: [] });
    const s = windowStatus(w, Date.parse('2026-03-28T12:00:00Z'));
    assert.equal(new Date(s.opensAt ?? 0).toISOString(), '2026-04-05T00:15:00.000Z');
  });

  it('a window ending inside a repeated hour stays open until the clock shows its end the second time', () => {
    // Europe/Berlin 2026-10-25: 03:00 CEST → 02:00 CET; 02:00–02:59 happens twice.
    const w: MaintenanceWindow[] = [
      { days: ['sun'], start: '01:00', end: '02:30', timezone: 'Europe/Berlin' },
    ];
    const s = windowStatus(w, Date.parse('2026-10-25T00:10:00Z'));
    assert.equal(s.open, true);
    assert.equal(new Date(s.closesAt ?? 0).toISOString(), '2026-10-25T01:30:00.000Z'); // 02:30 CET
  });

  it('holds on 250 random zones, dates and windows, drawn near daylight-saving changes', function () {
    this.timeout(60_000);
    for (let seed = 1; seed <= 250; seed++) check(drawCase(seed));
  });
});
