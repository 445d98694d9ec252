import { isIPv4, isIPv6 } from 'node:net';
import type { Lease } from '../types.js';
import type { Problem } from '../../util/problem.js';
import { duidMac, duidOfClientId, hexOctets } from './duid.js';
import { classifyHwAddr } from './hwaddr.js';
import { ipv6Unused, malformed } from './problems.js';
import { newestPerMac, type Candidate } from './select.js';
import type { ParsedLeases } from './types.js';

const DIGITS = /^\d+$/;
// dnsmasq writes a temporary address's (IA_TA) IAID with a T before it.
const IAID = /^T?\d+$/;
const FIELD_SEP = /[ \t]+/;

/** A DHCPv6 line, read once the DHCPv4 ones have told which DUIDs belong to which MACs. */
interface V6Line {
  seq: number;
  fields: string[];
}

/**
 * dnsmasq's lease file: DHCPv4 leases, one per line, `<expiry> <hwaddr> <ip> <hostname|*>
 * <client-id|*>`; then, with DHCPv6 on, a line `duid <server DUID>` and the DHCPv6 leases,
 * `<expiry> <iaid> <ipv6> <hostname|*> <client DUID|*>`. dnsmasq rewrites the whole file on
 * every change, so lines never supersede each other. A DHCPv6 lease counts for the MAC its
 * client's DUID ties it to (duid.ts); one that cannot be tied is reported, not dropped silently.
 */
export function parseDnsmasq(text: string, file: string, now: number): ParsedLeases {
  const problems: Problem[] = [];
  const candidates: Candidate[] = [];
  // RFC 4361 client identifiers of the DHCPv4 leases: DUID → MAC.
  const macOfDuid = new Map<string, string>();
  const v6: V6Line[] = [];
  let inV6 = false;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('duid ')) {
      inV6 = true;
      continue;
    }
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
    if (inV6) {
      v6.push({ seq: i, fields });
      continue;
    }
    // Indexed reads: destructuring goes through the iterator protocol, measurably slower here.
    const expiry = fields[0] ?? '';
    const hw = fields[1] ?? '';
    const ip = fields[2] ?? '';
    const hostname = fields[3] ?? '';
    if (!DIGITS.test(expiry)) {
      problems.push(
        malformed(file, lineNo, 'field 1 (expiry) is not a number of seconds since the epoch'),
      );
      continue;
    }
    if (!isIPv4(ip)) {
      const why = isIPv6(ip)
        ? 'an IPv6 address before the "duid" line, where dnsmasq writes DHCPv4 leases only'
        : 'field 3 (address) is not an IPv4 address';
      problems.push(malformed(file, lineNo, why));
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
    const duid = fields[4] === undefined ? undefined : duidOfClientId(fields[4]);
    if (duid !== undefined) macOfDuid.set(duid, addr.mac);
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
  const until = readV6(v6, macOfDuid, file, now, candidates, problems);
  return {
    leases: newestPerMac(candidates, now),
    problems,
    ...(until !== undefined ? { until } : {}),
  };
}

/**
 * The DHCPv6 leases: a candidate for each one tied to a MAC, a problem for each other one
 * still in force. Returns when the first of those problems ends (its lease expires).
 */
function readV6(
  lines: readonly V6Line[],
  macOfDuid: ReadonlyMap<string, string>,
  file: string,
  now: number,
  candidates: Candidate[],
  problems: Problem[],
): number | undefined {
  let until: number | undefined;
  for (const { seq, fields } of lines) {
    const lineNo = seq + 1;
    const expiry = fields[0] ?? '';
    const iaid = fields[1] ?? '';
    const ip = fields[2] ?? '';
    const hostname = fields[3] ?? '';
    const client = fields[4] ?? '*';
    const fault = !DIGITS.test(expiry)
      ? 'field 1 (expiry) is not a number of seconds since the epoch'
      : !IAID.test(iaid)
        ? 'field 2 (IAID) of a DHCPv6 lease is not a number'
        : !isIPv6(ip)
          ? 'field 3 (address) of a DHCPv6 lease is not an IPv6 address'
          : client !== '*' && !hexOctets(client)
            ? 'field 5 (client DUID) is not colon-separated hex octets'
            : undefined;
    if (fault) {
      problems.push(malformed(file, lineNo, fault));
      continue;
    }
    const seconds = Number(expiry);
    const expires = seconds === 0 ? undefined : seconds * 1000;
    if (expires !== undefined && expires <= now) continue;
    const duid = client === '*' ? undefined : client.toLowerCase();
    let why: string | undefined;
    let mac: string | undefined;
    if (iaid.startsWith('T'))
      why =
        'it is a temporary address (IA_TA), which the host replaces; it is not one to reach a host at';
    else if (duid === undefined) why = 'dnsmasq recorded no client DUID for it';
    else {
      const read = duidMac(hexOctets(duid) ?? []);
      mac = 'mac' in read ? read.mac : macOfDuid.get(duid);
      if (mac === undefined && 'untied' in read)
        why = `${read.untied}, and no DHCPv4 lease of this file carries that DUID in its client identifier (RFC 4361)`;
    }
    if (why !== undefined || mac === undefined) {
      problems.push(ipv6Unused(file, lineNo, ip, why ?? 'no MAC'));
      if (expires !== undefined) until = Math.min(until ?? expires, expires);
      continue;
    }
    const lease: Lease = { mac, ip, origin: `${file}:${lineNo}` };
    if (expires !== undefined) lease.expires = expires;
    if (hostname !== '*' && hostname !== '') lease.hostname = hostname;
    candidates.push({ lease, seq });
  }
  return until;
}
