import { isIPv4 } from 'node:net';
import type { Lease } from '../types.js';
import type { Problem } from '../../util/problem.js';
import { classifyHwAddr } from './hwaddr.js';
import { IscLexer, decodeIscString, type Token } from './isc-lexer.js';
import { malformed } from './problems.js';
import { newestPerMac, type Candidate } from './select.js';
import type { ParsedLeases } from './types.js';

/**
 * Top-level declarations dhcpd writes or accepts in its lease file that carry no IPv4 lease:
 * skipped without a word. DHCPv6 leases live in `ia-*` blocks.
 */
const SKIPPED = new Set([
  'authoring-byte-order',
  'server-duid',
  'failover',
  'host',
  'group',
  'class',
  'subclass',
  'ia-na',
  'ia-ta',
  'ia-pd',
]);

/** `never`, or ms since the epoch. */
type Time = number | 'never';

interface Entry {
  ip: string;
  line: number;
  state?: string;
  mac?: string;
  starts?: Time;
  ends?: Time;
  hostname?: string;
}

/**
 * ISC dhcpd's dhcpd.leases. dhcpd appends a new `lease` block whenever a lease changes, so the
 * last block for an address is its current state; only `binding state active` is a lease.
 */
export function parseIsc(text: string, file: string, now: number): ParsedLeases {
  const lx = new IscLexer(text);
  const problems: Problem[] = [];
  const byIp = new Map<string, Candidate | undefined>();
  let seq = 0;
  for (let t = lx.next(); t; t = lx.next()) {
    if (t.kind === ';') continue;
    if (t.kind === 'word' && t.text === 'lease') {
      const entry = readLease(lx, t, file, problems);
      if (entry) byIp.set(entry.ip, toCandidate(entry, file, seq++));
      continue;
    }
    const known = t.kind === 'word' && SKIPPED.has(t.text);
    if (!known)
      problems.push(
        malformed(
          file,
          t.line,
          'unexpected text outside a lease block (expected "lease <IPv4> { … }")',
        ),
      );
    if (!skipStatement(lx, t) && known) {
      problems.push(malformed(file, t.line, `"${t.text}" block is not closed`));
    }
  }
  const live: Candidate[] = [];
  for (const c of byIp.values()) if (c) live.push(c);
  return { leases: newestPerMac(live, now), problems };
}

function toCandidate(e: Entry, file: string, seq: number): Candidate | undefined {
  if (e.state !== 'active' || !e.mac) return undefined;
  const lease: Lease = { mac: e.mac, ip: e.ip, origin: `${file}:${e.line}` };
  if (typeof e.ends === 'number') lease.expires = e.ends;
  if (typeof e.starts === 'number') lease.starts = e.starts;
  if (e.hostname) lease.hostname = e.hostname;
  return { lease, seq };
}

/**
 * Skips one statement: up to its `;`, or to the end of its block. Stops before a `lease`
 * keyword outside any block, so a stray line never swallows the lease after it. Returns false
 * when the text ends inside a block.
 */
function skipStatement(lx: IscLexer, first: Token): boolean {
  if (first.kind === ';' || first.kind === '}') return true;
  if (first.kind === '{') return skipBlock(lx);
  for (let t = lx.next(); t; t = lx.next()) {
    if (t.kind === ';') return true;
    if (t.kind === '{') return skipBlock(lx);
    if (t.kind === '}') return true;
    if (t.kind === 'word' && t.text === 'lease') {
      lx.pushBack(t);
      return true;
    }
  }
  return true;
}

/** Skips to the `}` that closes a block whose `{` was just read. */
function skipBlock(lx: IscLexer): boolean {
  let depth = 1;
  for (let t = lx.next(); t; t = lx.next()) {
    if (t.kind === '{') depth++;
    else if (t.kind === '}' && --depth === 0) return true;
  }
  return false;
}

/**
 * Reads `lease <ip> { … }` after the `lease` keyword. Returns undefined (with a problem) for an
 * entry that cannot be trusted; the whole block is consumed either way.
 */
function readLease(
  lx: IscLexer,
  start: Token,
  file: string,
  problems: Problem[],
): Entry | undefined {
  const head: Token[] = [];
  let t = lx.next();
  for (; t && t.kind !== '{' && t.kind !== ';' && t.kind !== '}'; t = lx.next()) {
    if (t.kind === 'word' && t.text === 'lease') break;
    head.push(t);
  }
  if (!t || t.kind !== '{') {
    if (t?.kind === 'word') lx.pushBack(t);
    problems.push(malformed(file, start.line, 'lease without a { … } block'));
    return undefined;
  }
  const ip = head.length === 1 && head[0]?.kind === 'word' ? head[0].text : '';
  const entry: Entry = { ip, line: start.line };
  // What is not an address is not repeated in messages.
  const lease = isIPv4(ip) ? `lease ${ip}` : 'lease';
  let bad: Problem | undefined = isIPv4(ip)
    ? undefined
    : malformed(
        file,
        start.line,
        'the lease address is not an IPv4 address (expected "lease <IPv4> {")',
      );
  let stmt: Token[] = [];
  for (;;) {
    const tok = lx.next();
    if (!tok) {
      const str = lx.unterminatedStringLine;
      problems.push(
        malformed(
          file,
          start.line,
          `${lease} is not closed${str ? ` (string opened at line ${str} never ends)` : ''}`,
        ),
      );
      return undefined;
    }
    if (tok.kind === 'word' && tok.text === 'lease' && stmt.length === 0) {
      // dhcpd never nests leases: the previous block lost its `}` (a truncated write).
      lx.pushBack(tok);
      problems.push(malformed(file, start.line, `${lease} is not closed before line ${tok.line}`));
      return undefined;
    }
    if (tok.kind === '}' || tok.kind === ';') {
      const message = stmt.length > 0 ? applyStatement(entry, stmt) : undefined;
      if (message && !bad)
        bad = malformed(file, stmt[0]?.line ?? start.line, `${lease}: ${message}`);
      stmt = [];
      if (tok.kind === '}') break;
    } else if (tok.kind === '{') {
      // `on commit { … }` and the like: actions, not lease data.
      stmt = [];
      if (!skipBlock(lx)) {
        problems.push(malformed(file, start.line, `${lease} is not closed`));
        return undefined;
      }
    } else stmt.push(tok);
  }
  if (!bad && entry.state === 'active' && entry.mac && entry.ends === undefined) {
    bad = malformed(file, start.line, `${lease}: active lease without "ends"`);
  }
  if (bad) {
    problems.push(bad);
    return undefined;
  }
  return entry;
}

/** Applies one statement of a lease block; returns what is wrong with it, if anything. */
function applyStatement(entry: Entry, stmt: Token[]): string | undefined {
  const first = stmt[0];
  const second = stmt[1];
  const third = stmt[2];
  switch (first?.text) {
    case 'starts':
    case 'ends': {
      const time = parseTime(stmt.slice(1));
      if (time === undefined) {
        return `${first.text} is not a time (expected W YYYY/MM/DD HH:MM:SS, epoch N or never)`;
      }
      entry[first.text] = time;
      return undefined;
    }
    case 'binding':
      if (second?.text !== 'state' || !third) return 'binding without a state';
      entry.state = third.text;
      return undefined;
    case 'abandoned':
      entry.state = 'abandoned';
      return undefined;
    case 'hardware': {
      if (second?.text !== 'ethernet') return undefined;
      const addr = classifyHwAddr(third?.text ?? '');
      if (addr.kind !== 'mac')
        return 'hardware ethernet is not a MAC address (expected six hex pairs)';
      entry.mac = addr.mac;
      return undefined;
    }
    case 'client-hostname':
      if (second?.kind === 'string' && second.text !== '')
        entry.hostname = decodeIscString(second.text);
      return undefined;
    default:
      return undefined;
  }
}

const DATE = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/;
const CLOCK = /^(\d{1,2}):(\d{2}):(\d{2})$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS[month - 1] ?? 0);
}

/** dhcpd times: `W YYYY/MM/DD HH:MM:SS` in UTC, `epoch <seconds>`, or `never`. */
function parseTime(args: Token[]): Time | undefined {
  const a = args[0];
  const b = args[1];
  const c = args[2];
  if (args.length === 1) return a?.text === 'never' ? 'never' : undefined;
  if (args.length === 2)
    return a?.text === 'epoch' && b && /^\d+$/.test(b.text) ? Number(b.text) * 1000 : undefined;
  if (args.length !== 3 || !a || !b || !c || !/^[0-6]$/.test(a.text)) return undefined;
  const d = DATE.exec(b.text);
  const k = CLOCK.exec(c.text);
  if (!d || !k) return undefined;
  const y = Number(d[1]);
  const mo = Number(d[2]);
  const day = Number(d[3]);
  const h = Number(k[1]);
  const mi = Number(k[2]);
  const s = Number(k[3]);
  // Date.UTC would roll 2026/02/30 over into March; dhcpd never writes such a date.
  if (mo < 1 || mo > 12 || day < 1 || day > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59)
    return undefined;
  return Date.UTC(y, mo - 1, day, h, mi, s);
}
