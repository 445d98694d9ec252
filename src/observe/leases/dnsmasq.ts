import { isIPv4 } from 'node:net';
import type { Lease } from '../types.js';
import type { Problem } from '../../util/problem.js';
import { classifyHwAddr } from './hwaddr.js';
import { malformed } from './problems.js';
import { newestPerMac, type Candidate } from './select.js';
import type { ParsedLeases } from './types.js';

const DIGITS = /^\d+$/;
const FIELD_SEP = /[ \t]+/;

/**
 * dnsmasq's lease file: one lease per line, `<expiry> <hwaddr> <ip> <hostname|*> <client-id|*>`.
 * dnsmasq rewrites the whole file on every change, so lines never supersede each other; a
 * `duid` line and the DHCPv6 lines after it (IAID in the hwaddr field) are skipped.
 */
export function parseDnsmasq(text: string, file: string, now: number): ParsedLeases {
  const problems: Problem[] = [];
  const candidates: Candidate[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '' || line.startsWith('duid ') || line.startsWith('#')) continue;
    const lineNo = i + 1;
    // dnsmasq separates fields by one space; a regex split only for hand-edited lines.
    const fields =
      line.includes('\t') || line.includes('  ') ? line.split(FIELD_SEP) : line.split(' ');
    if (fields.length < 4 || fields.length > 5) {
      problems.push(
        malformed(
          file,
          lineNo,
          `expected 4 or 5 fields "<expiry> <mac> <ip> <hostname> <client-id>", found ${fields.length}`,
        ),
      );
      continue;
    }
    // Indexed reads: destructuring goes through the iterator protocol, measurably slower here.
    const expiry = fields[0] ?? '';
    const hw = fields[1] ?? '';
    const ip = fields[2] ?? '';
    const hostname = fields[3] ?? '';
    if (ip.includes(':')) continue;
    if (!DIGITS.test(expiry)) {
      problems.push(
        malformed(file, lineNo, 'field 1 (expiry) is not a number of seconds since the epoch'),
      );
      continue;
    }
    if (!isIPv4(ip)) {
      problems.push(malformed(file, lineNo, 'field 3 (address) is not an IPv4 address'));
      continue;
    }
    const addr = classifyHwAddr(hw);
    if (addr.kind === 'invalid') {
      problems.push(
        malformed(file, lineNo, 'field 2 (hardware address) is not a MAC or type-prefixed address'),
      );
      continue;
    }
    if (addr.kind === 'other') continue;
    const seconds = Number(expiry);
    const origin = `${file}:${lineNo}`;
    // dnsmasq writes 0 for a lease without end. A lease with both an end and a host name (most
    // of them) is made whole in one literal: a field added later costs a second allocation.
    const named = hostname !== '*' && hostname !== '';
    let lease: Lease;
    if (seconds !== 0 && named)
      lease = { mac: addr.mac, ip, origin, expires: seconds * 1000, hostname };
    else {
      lease = { mac: addr.mac, ip, origin };
      if (seconds !== 0) lease.expires = seconds * 1000;
      if (named) lease.hostname = hostname;
    }
    candidates.push({ lease, seq: i });
  }
  return { leases: newestPerMac(candidates, now), problems };
}
