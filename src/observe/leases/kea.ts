import { isIPv4 } from 'node:net';
import type { Lease } from '../types.js';
import { warning, type Problem } from '../../util/problem.js';
import { classifyHwAddr } from './hwaddr.js';
import type { ParsedLeases } from './types.js';
import { LEASE_FORMAT_UNKNOWN, malformed } from './problems.js';
import { newestPerMac, type Candidate } from './select.js';

/** One file of a Kea memfile series, e.g. `kea-leases4.csv.2`, `.1`, then the live file. */
export interface KeaSource {
  text: string;
  file: string;
}

const REQUIRED = ['address', 'hwaddr', 'valid_lifetime', 'expire'] as const;
const DIGITS = /^\d+$/;
/** Kea's valid lifetime for a lease that never expires (0xffffffff). */
const INFINITE_LIFETIME = 4294967295;
const STATE_DEFAULT = 0;

interface Columns {
  address: number;
  hwaddr: number;
  valid_lifetime: number;
  expire: number;
  state: number | undefined;
  hostname: number | undefined;
  count: number;
}

/** Parses one Kea lease4 CSV file. */
export function parseKea(text: string, file: string, now: number): ParsedLeases {
  return parseKeaSeries([{ text, file }], now);
}

/**
 * Replays Kea memfile lease4 files in the order Kea itself loads them (older files first):
 * Kea appends a row for every change, so the last row for an address is that address's lease,
 * and a row with valid_lifetime 0 deletes it. Each file has its own header: columns are found
 * by name because their set and order changed across Kea versions.
 */
export function parseKeaSeries(sources: KeaSource[], now: number): ParsedLeases {
  const problems: Problem[] = [];
  // Address → the lease its last row grants, or undefined when that row ends it.
  const byAddress = new Map<string, Candidate | undefined>();
  let seq = 0;
  for (const { text, file } of sources) {
    const lines = text.split('\n');
    let i = 0;
    while (i < lines.length && (lines[i] ?? '').trim() === '') i++;
    if (i === lines.length) continue;
    const columns = readHeader((lines[i] ?? '').trim(), file, i + 1, problems);
    if (!columns) continue;
    for (i++; i < lines.length; i++) {
      const line = (lines[i] ?? '').trim();
      if (line === '') continue;
      const row = readRow(line, columns, file, i + 1, problems);
      if (row) byAddress.set(row.address, row.lease && { lease: row.lease, seq: seq++ });
    }
  }
  const live: Candidate[] = [];
  for (const c of byAddress.values()) if (c) live.push(c);
  return { leases: newestPerMac(live, now), problems };
}

function readHeader(
  line: string,
  file: string,
  lineNo: number,
  problems: Problem[],
): Columns | undefined {
  const names = line.split(',');
  if (names[0] === 'address' && names[1] === 'duid') {
    problems.push(
      warning(
        LEASE_FORMAT_UNKNOWN,
        'this is a Kea DHCPv6 lease file; bpa reads DHCPv4 leases only',
        { file, line: lineNo },
      ),
    );
    return undefined;
  }
  const at = (name: string): number | undefined => {
    const k = names.indexOf(name);
    return k < 0 ? undefined : k;
  };
  const missing = REQUIRED.filter((name) => at(name) === undefined);
  if (missing.length > 0) {
    problems.push(
      malformed(file, lineNo, `Kea lease file header lacks column(s) ${missing.join(', ')}`),
    );
    return undefined;
  }
  return {
    address: at('address') ?? 0,
    hwaddr: at('hwaddr') ?? 0,
    valid_lifetime: at('valid_lifetime') ?? 0,
    expire: at('expire') ?? 0,
    state: at('state'),
    hostname: at('hostname'),
    count: names.length,
  };
}

interface Row {
  address: string;
  /** The lease the row grants; undefined when it deletes, declines, releases or reclaims it. */
  lease: Lease | undefined;
}

function readRow(
  line: string,
  cols: Columns,
  file: string,
  lineNo: number,
  problems: Problem[],
): Row | undefined {
  const fields = line.split(',');
  if (fields.length !== cols.count) {
    problems.push(
      malformed(file, lineNo, `row has ${fields.length} fields, the header has ${cols.count}`),
    );
    return undefined;
  }
  const field = (k: number | undefined): string => (k === undefined ? '' : (fields[k] ?? ''));
  const address = field(cols.address);
  const lifetime = field(cols.valid_lifetime);
  const expire = field(cols.expire);
  const state = cols.state === undefined ? String(STATE_DEFAULT) : field(cols.state);
  if (!isIPv4(address)) {
    problems.push(malformed(file, lineNo, 'column address is not an IPv4 address'));
    return undefined;
  }
  const notNumber = !DIGITS.test(lifetime)
    ? ['valid_lifetime', lifetime]
    : !DIGITS.test(expire)
      ? ['expire', expire]
      : !DIGITS.test(state)
        ? ['state', state]
        : undefined;
  if (notNumber) {
    problems.push(malformed(file, lineNo, `column ${notNumber[0]} is not a whole number`));
    return undefined;
  }
  const hw = field(cols.hwaddr);
  const addr = hw === '' ? undefined : classifyHwAddr(hw);
  if (addr?.kind === 'invalid') {
    problems.push(
      malformed(file, lineNo, 'column hwaddr is not a MAC or type-prefixed hardware address'),
    );
    return undefined;
  }
  const validLifetime = Number(lifetime);
  if (validLifetime === 0 || Number(state) !== STATE_DEFAULT || addr?.kind !== 'mac') {
    return { address, lease: undefined };
  }
  const expireSeconds = Number(expire);
  const lease: Lease = {
    mac: addr.mac,
    ip: address,
    starts: (expireSeconds - validLifetime) * 1000,
    origin: `${file}:${lineNo}`,
  };
  if (validLifetime !== INFINITE_LIFETIME) lease.expires = expireSeconds * 1000;
  const hostname = unescapeKea(field(cols.hostname));
  if (hostname !== '') lease.hostname = hostname;
  return { address, lease };
}

const ESCAPE = /&#x([0-9a-f]{2})/gi;

/**
 * Undoes Kea's CSV escaping: every byte that is a comma, `&`, a control character or non-ASCII
 * is written as `&#x` and two hex digits (no `;`). Multi-byte UTF-8 characters arrive as
 * several escapes, so bytes are collected and decoded together.
 */
export function unescapeKea(raw: string): string {
  if (!raw.includes('&#x')) return raw;
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of raw.matchAll(ESCAPE)) {
    parts.push(Buffer.from(raw.slice(last, m.index), 'utf8'), Buffer.of(parseInt(m[1] ?? '', 16)));
    last = m.index + m[0].length;
  }
  parts.push(Buffer.from(raw.slice(last), 'utf8'));
  return Buffer.concat(parts).toString('utf8');
}
