/**
 * Weekly maintenance windows, as instants. Pure: the clock is an argument. A window opens on
 * each of its days at `start` (wall-clock time in its zone) and closes at `end` the same day,
 * or the next day when `end` is not after `start` (a window past midnight; equal times are a
 * whole day). Across a daylight-saving change a window keeps every moment whose wall-clock
 * time lies inside it: it opens the first time the clock reaches its start and closes the
 * last time the clock reaches its end. So a time skipped when clocks go forward opens or
 * closes the window at the jump (02:30–03:30 on a night that jumps from 02:00 to 03:00 is open
 * from 03:00 to 03:30), a start shown twice when clocks go back is its first occurrence and an
 * end shown twice its second; a window wholly inside a gap does not open that day. An instant
 * equal to an opening is inside the window; one equal to a closing is outside.
 */
import type { MaintenanceWindow, Weekday } from '../validate/model.js';

export const WEEKDAYS: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export interface WindowStatus {
  open: boolean;
  /** Open: when the window (the latest-closing of those open now) closes, epoch ms. */
  closesAt?: number;
  /** Closed: when the next window opens, epoch ms; undefined when none ever does. */
  opensAt?: number;
}

const DAY = 86_400_000;

/** Whether `now` is inside one of the windows, and when that changes. No windows: always open. */
export function windowStatus(windows: readonly MaintenanceWindow[], now: number): WindowStatus {
  if (!windows.length) return { open: true };
  let closesAt: number | undefined;
  let opensAt: number | undefined;
  for (const w of windows) {
    for (const [start, end] of occurrences(w, now)) {
      // A window the clock skips altogether that day has no moment to be open in.
      if (start >= end) continue;
      if (start <= now && now < end) closesAt = Math.max(closesAt ?? end, end);
      else if (start > now) opensAt = Math.min(opensAt ?? start, start);
    }
  }
  return closesAt !== undefined ? { open: true, closesAt } : { open: false, opensAt };
}

/**
 * The openings of one window from the day before `now` (a window past midnight may still be
 * open) to eight days after it (the next opening of a weekly window is within a week).
 */
function occurrences(w: MaintenanceWindow, now: number): Array<[number, number]> {
  const today = localDate(now, w.timezone);
  const startMin = minutes(w.start);
  const endMin = minutes(w.end);
  const out: Array<[number, number]> = [];
  for (let d = -1; d <= 8; d++) {
    const day = new Date(Date.UTC(today.y, today.m, today.d + d));
    const weekday = WEEKDAYS[day.getUTCDay()] as Weekday;
    if (w.days.length && !w.days.includes(weekday)) continue;
    const y = day.getUTCFullYear();
    const m = day.getUTCMonth();
    const dd = day.getUTCDate();
    const start = zonedInstant(y, m, dd, startMin, w.timezone, 'first');
    const end = zonedInstant(y, m, endMin > startMin ? dd : dd + 1, endMin, w.timezone, 'last');
    out.push([start, end]);
  }
  return out;
}

/** "22:30" → 1350; "24:00" → 1440. */
function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
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
    formatters.set(zone, f);
  }
  return f;
}

/** The wall clock in `zone` at an instant, as if it were UTC (epoch ms). */
function wallClock(t: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(t)) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return Date.UTC(
    parts['year'] ?? 1970,
    (parts['month'] ?? 1) - 1,
    parts['day'] ?? 1,
    parts['hour'] ?? 0,
    parts['minute'] ?? 0,
    parts['second'] ?? 0,
  );
}

function localDate(t: number, zone: string): { y: number; m: number; d: number } {
  const wall = new Date(wallClock(t, zone));
  return { y: wall.getUTCFullYear(), m: wall.getUTCMonth(), d: wall.getUTCDate() };
}

/** The UTC offset of `zone` at instant t, in ms (wall clock − UTC). */
function offsetAt(t: number, zone: string): number {
  return wallClock(Math.floor(t / 1000) * 1000, zone) - Math.floor(t / 1000) * 1000;
}

/**
 * The instant at which the wall clock in `zone` reaches the given date and minute of the day
 * (1440: midnight ending the day): with `first`, the first time it does (where a window
 * opens); with `last`, the last time (where one closes: after it the clock never shows an
 * earlier time that day). A time skipped by a jump forward is reached at the jump. Zones change
 * their offset at most once in two days, so the offsets a day before and a day after are the
 * only candidates.
 */
export function zonedInstant(
  y: number,
  m: number,
  d: number,
  minute: number,
  zone: string,
  which: 'first' | 'last' = 'first',
): number {
  const wall = Date.UTC(y, m, d, 0, minute);
  const before = offsetAt(wall - DAY, zone);
  const after = offsetAt(wall + DAY, zone);
  // Where the clock shows that time coming from an earlier one: at the moment a fall-back
  // lands on exactly that time the clock was already past it, so that is no second reaching.
  const reached = [...new Set([before, after])]
    .map((o) => wall - o)
    .filter((t) => wallClock(t, zone) === wall && wallClock(t - 1000, zone) < wall)
    .sort((a, b) => a - b);
  const t = which === 'first' ? reached[0] : reached[reached.length - 1];
  return t ?? jumpInstant(wall - after, wall - before, before, zone);
}

/**
 * The instant a zone leaves offset `before`, between `lo` (still on it) and `hi` (past the
 * change). Offsets change on whole seconds, and the clock has one-second resolution.
 */
function jumpInstant(lo: number, hi: number, before: number, zone: string): number {
  lo = Math.floor(lo / 1000);
  hi = Math.ceil(hi / 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * 1000, zone) === before) lo = mid;
    else hi = mid;
  }
  return hi * 1000;
}

/**
 * "2026-03-28T22:00:00.000Z" → "2026-03-28T22:00:00Z": what reports and plans show. Rounded up
 * to the minute, so a named opening is never a moment before the window opens.
 */
export function isoMinute(t: number): string {
  return new Date(Math.ceil(t / 60_000) * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
