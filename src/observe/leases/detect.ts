import type { LeaseFormat } from './types.js';

/** Lines looked at from the top of a file; enough to pass dnsmasq's `duid` line and a bad line. */
const HEAD_LINES = 20;

// Kea writes `address,hwaddr,…`; columns are matched by name, so any order is accepted.
const CSV_HEADER = /^[a-z_0-9]+(,[a-z_0-9]+)+$/;
const DNSMASQ_LINE = /^\d+ [0-9a-f:-]+ \S+ /i;
const DNSMASQ_DUID = /^duid [0-9a-f:]+$/i;
const ISC_LEASE = /^[ \t]*lease[ \t]+\S+[ \t]*\{/m;
const ISC_MARKER =
  /^[ \t]*(authoring-byte-order|server-duid|failover[ \t]+peer|ia-na|ia-ta|ia-pd)[ \t]/m;

/**
 * Tells the lease file format from its content, falling back on its name (an empty
 * `dnsmasq.leases` is still dnsmasq's). Undefined when neither tells.
 */
export function detectLeaseFormat(text: string, fileName?: string): LeaseFormat | undefined {
  return byContent(text) ?? (fileName === undefined ? undefined : byName(fileName));
}

function byContent(text: string): LeaseFormat | undefined {
  let first = true;
  let pos = 0;
  for (let n = 0; n < HEAD_LINES && pos < text.length; pos++) {
    const eol = text.indexOf('\n', pos);
    const end = eol < 0 ? text.length : eol;
    const line = text.slice(pos, end).trim();
    pos = end;
    if (line === '' || line.startsWith('#')) continue;
    n++;
    if (first && isKeaHeader(line)) return 'kea';
    first = false;
    if (DNSMASQ_LINE.test(line) || DNSMASQ_DUID.test(line)) return 'dnsmasq';
  }
  if (ISC_LEASE.test(text) || ISC_MARKER.test(text)) return 'isc';
  return undefined;
}

function isKeaHeader(line: string): boolean {
  if (!CSV_HEADER.test(line)) return false;
  const names = line.split(',');
  return names.includes('address') && names.includes('hwaddr');
}

function byName(path: string): LeaseFormat | undefined {
  const name = (path.split(/[\\/]/).pop() ?? '').toLowerCase();
  if (name.includes('dnsmasq')) return 'dnsmasq';
  if (name.includes('kea') || /\.csv(\.(1|2|completed))?$/.test(name)) return 'kea';
  if (name.includes('dhcpd') || name.endsWith('.leases')) return 'isc';
  return undefined;
}
