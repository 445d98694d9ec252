import type { Lease } from '../../../../src/observe/types.js';
import type { LeaseFormat } from '../../../../src/observe/leases/index.js';

/** The clock of every case: Thursday 2026-11-19 12:00:00 UTC. */
export const NOW = Date.UTC(2026, 10, 19, 12, 0, 0);
const at = (hour: number): number => Date.UTC(2026, 10, 19, hour, 0, 0);
export const T10 = at(10);
export const T22 = at(22);
export const T23 = at(23);

export interface Expected {
  mac: string;
  ip: string;
  line: number;
  /** undefined: an infinite lease. */
  expires: number | undefined;
  starts?: number;
  hostname?: string;
}

export interface ParseCase {
  name: string;
  /** File under fixtures/. */
  fixture: string;
  format: LeaseFormat;
  /** The leases, in file order of the entries that won. */
  leases: Expected[];
  /** code and line of every problem, in order. */
  problems: Array<{ code: string; line: number }>;
}

const M = 'LEASE_MALFORMED';

export const PARSE_CASES: ParseCase[] = [
  {
    name: 'ISC: active only, later entries supersede, newest per MAC, IPv6 and non-Ethernet ignored',
    fixture: 'isc-basic.leases',
    format: 'isc',
    leases: [
      {
        mac: '52:54:00:aa:bb:01',
        ip: '10.0.0.5',
        line: 21,
        starts: T10,
        expires: T22,
        hostname: 'node-a',
      },
      { mac: '52:54:00:aa:bb:07', ip: '10.0.0.21', line: 90, expires: T23 },
      { mac: '52:54:00:aa:bb:08', ip: '10.0.0.22', line: 95, expires: T23 },
      { mac: '52:54:00:aa:bb:0a', ip: '10.0.0.30', line: 100, expires: T22 },
      { mac: '52:54:00:aa:bb:0b', ip: '10.0.0.31', line: 105, starts: T10, expires: T22 },
      { mac: '52:54:00:aa:bb:0c', ip: '10.0.0.32', line: 111, starts: T10, expires: undefined },
      { mac: '52:54:00:aa:bb:0d', ip: '10.0.0.33', line: 117, expires: T22, hostname: 'odd{name}' },
      { mac: '52:54:00:aa:bb:0e', ip: '10.0.0.40', line: 128, expires: T22 },
      { mac: '52:54:00:aa:bb:0f', ip: '10.0.0.43', line: 144, expires: T22 },
      { mac: '52:54:00:aa:bb:11', ip: '10.0.0.52', line: 158, expires: T22 },
    ],
    problems: [],
  },
  {
    name: 'ISC: malformed entries are reported at their line and skipped',
    fixture: 'isc-malformed.leases',
    format: 'isc',
    leases: [
      { mac: '52:54:00:cc:00:04', ip: '10.0.1.4', line: 18, expires: T22 },
      { mac: '52:54:00:cc:00:06', ip: '10.0.1.6', line: 29, expires: T22 },
      { mac: '52:54:00:cc:00:09', ip: '10.0.1.9', line: 43, expires: T22 },
    ],
    problems: [
      { code: M, line: 4 }, // month 13
      { code: M, line: 11 }, // MAC with "zz"
      { code: M, line: 13 }, // 10.0.1.300
      { code: M, line: 23 }, // not dhcpd syntax
      { code: M, line: 25 }, // epoch soon
      { code: M, line: 34 }, // active without ends
      { code: M, line: 39 }, // block never closed before the next lease
      { code: M, line: 48 }, // string runs to the end of the file
    ],
  },
  {
    name: 'dnsmasq: expired, infinite, uppercase, non-Ethernet, duplicates, DUID and IPv6 lines',
    fixture: 'dnsmasq-basic.leases',
    format: 'dnsmasq',
    leases: [
      { mac: '52:54:00:dd:00:01', ip: '10.0.2.1', line: 1, expires: T22, hostname: 'node-a' },
      {
        mac: '52:54:00:dd:00:04',
        ip: '10.0.2.4',
        line: 4,
        expires: undefined,
        hostname: 'forever',
      },
      { mac: '52:54:00:dd:00:05', ip: '10.0.2.5', line: 5, expires: T22, hostname: 'upper' },
      { mac: '52:54:00:dd:00:08', ip: '10.0.2.9', line: 9, expires: T23, hostname: 'moved' },
      { mac: '52:54:00:dd:00:09', ip: '10.0.2.11', line: 11, expires: T23, hostname: 'twin' },
      { mac: '52:54:00:dd:00:0a', ip: '10.0.2.12', line: 12, expires: T22, hostname: 'dashes' },
      // DHCPv6: node-a's DUID-LLT ties line 14 to a MAC with an IPv4 lease, which wins; the
      // DUID-LL of line 15 ties it to a MAC whose IPv4 lease has ended.
      { mac: '52:54:00:dd:00:02', ip: 'fd00::6', line: 15, expires: T22 },
    ],
    problems: [],
  },
  {
    name: 'dnsmasq DHCPv6: leases tied to a MAC by DUID-LLT, DUID-LL or an RFC 4361 client id; each other one reported',
    fixture: 'dnsmasq-dhcpv6.leases',
    format: 'dnsmasq',
    leases: [
      { mac: '52:54:00:66:00:03', ip: '10.0.6.3', line: 1, expires: T22, hostname: 'dual' },
      { mac: '52:54:00:66:00:0b', ip: '10.0.6.11', line: 3, expires: T22, hostname: 'plain' },
      { mac: '52:54:00:66:00:01', ip: 'fd00:6::1', line: 5, expires: T22, hostname: 'llt' },
      { mac: '52:54:00:66:00:02', ip: 'fd00:6::2', line: 6, expires: T23, hostname: 'll' },
      // DUID-EN, tied through the (ended) IPv4 lease whose client id carries it.
      { mac: '52:54:00:66:00:04', ip: 'fd00:6::4', line: 8, expires: T22, hostname: 'networkd' },
      {
        mac: '52:54:00:66:00:0a',
        ip: 'fd00:6::a',
        line: 16,
        expires: undefined,
        hostname: 'forever',
      },
    ],
    problems: [
      { code: 'LEASE_IPV6_UNUSED', line: 9 }, // DUID-EN no IPv4 lease carries
      { code: 'LEASE_IPV6_UNUSED', line: 10 }, // DUID-UUID
      { code: 'LEASE_IPV6_UNUSED', line: 11 }, // temporary address
      { code: 'LEASE_IPV6_UNUSED', line: 12 }, // no client DUID
      { code: 'LEASE_IPV6_UNUSED', line: 13 }, // DUID-LL of an InfiniBand address
      { code: M, line: 15 }, // an IPv4 address among the DHCPv6 leases
    ],
  },
  {
    name: 'dnsmasq: malformed lines are reported at their line and skipped',
    fixture: 'dnsmasq-malformed.leases',
    format: 'dnsmasq',
    leases: [
      { mac: '52:54:00:ee:00:01', ip: '10.0.3.1', line: 1, expires: T22, hostname: 'ok' },
      { mac: '52:54:00:ee:00:08', ip: '10.0.3.8', line: 8, expires: T22, hostname: 'ok2' },
    ],
    problems: [2, 3, 4, 5, 6].map((line) => ({ code: M, line })),
  },
  {
    name: 'Kea: states, deleted rows, supersession, escapes, infinite lifetime, non-Ethernet',
    fixture: 'kea-leases4.csv',
    format: 'kea',
    leases: [
      {
        mac: '52:54:00:ff:00:01',
        ip: '10.0.4.1',
        line: 2,
        starts: T10,
        expires: T22,
        hostname: 'node-a',
      },
      {
        mac: '52:54:00:ff:00:07',
        ip: '10.0.4.7',
        line: 11,
        starts: T10 + 3600_000,
        expires: T23,
        hostname: 'renew',
      },
      {
        mac: '52:54:00:ff:00:08',
        ip: '10.0.4.8',
        line: 12,
        starts: T10,
        expires: T22,
        hostname: 'web,db.example',
      },
      {
        mac: '52:54:00:ff:00:09',
        ip: '10.0.4.9',
        line: 13,
        starts: T10,
        expires: undefined,
        hostname: 'pinned',
      },
      {
        mac: '52:54:00:ff:00:0a',
        ip: '10.0.4.10',
        line: 14,
        starts: T10,
        expires: T22,
        hostname: 'réseau',
      },
    ],
    problems: [],
  },
  {
    name: 'Kea: columns found by name in another order, with an extra column',
    fixture: 'kea-reordered.csv',
    format: 'kea',
    leases: [
      {
        mac: '52:54:00:ab:00:01',
        ip: '10.0.5.1',
        line: 2,
        starts: T10,
        expires: T22,
        hostname: 'node-x',
      },
    ],
    problems: [],
  },
  {
    name: 'Kea: an old file without a state column',
    fixture: 'kea-no-state.csv',
    format: 'kea',
    leases: [
      {
        mac: '52:54:00:ac:00:01',
        ip: '10.0.6.1',
        line: 2,
        starts: T10,
        expires: T22,
        hostname: 'old',
      },
    ],
    problems: [],
  },
  {
    name: 'Kea: malformed rows are reported at their line and skipped',
    fixture: 'kea-malformed.csv',
    format: 'kea',
    leases: [
      {
        mac: '52:54:00:ba:00:01',
        ip: '10.0.7.1',
        line: 2,
        starts: T10,
        expires: T22,
        hostname: 'ok',
      },
      {
        mac: '52:54:00:ba:00:08',
        ip: '10.0.7.8',
        line: 9,
        starts: T10,
        expires: T22,
        hostname: 'ok2',
      },
    ],
    problems: [3, 4, 5, 6, 7].map((line) => ({ code: M, line })),
  },
  {
    name: 'Kea: a header without the needed columns',
    fixture: 'kea-bad-header.csv',
    format: 'kea',
    leases: [],
    problems: [{ code: M, line: 1 }],
  },
  {
    name: 'Kea: a DHCPv6 lease file is not read',
    fixture: 'kea-leases6.csv',
    format: 'kea',
    leases: [],
    problems: [{ code: 'LEASE_FORMAT_UNKNOWN', line: 1 }],
  },
];

/** The Lease a case expects, as the parser must build it. */
export function expectedLease(file: string, e: Expected): Lease {
  const lease: Lease = { mac: e.mac, ip: e.ip, origin: `${file}:${e.line}` };
  if (e.expires !== undefined) lease.expires = e.expires;
  if (e.starts !== undefined) lease.starts = e.starts;
  if (e.hostname !== undefined) lease.hostname = e.hostname;
  return lease;
}
