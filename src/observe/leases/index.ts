/**
 * DHCP lease file readers: ISC dhcpd, dnsmasq (DHCPv4, and DHCPv6 leases tied to a MAC) and
 * Kea memfile (lease4 CSV). Pure: text in,
 * leases out, `now` passed in. Reading files (and Kea's rotated companions) is in
 * read-lease-files.ts.
 */
import { warning } from '../../util/problem.js';
import { parseDnsmasq } from './dnsmasq.js';
import { detectLeaseFormat } from './detect.js';
import { parseIsc } from './isc.js';
import { parseKea } from './kea.js';
import { LEASE_FORMAT_UNKNOWN } from './problems.js';
import type { LeaseFormat, LeaseReadResult } from './types.js';

export { detectLeaseFormat } from './detect.js';
export { mergeLeases } from './select.js';
export {
  LEASE_FILE_UNREADABLE,
  LEASE_FORMAT_UNKNOWN,
  LEASE_IPV6_UNUSED,
  LEASE_MALFORMED,
} from './problems.js';
export type { LeaseFormat, LeaseReadResult } from './types.js';

export interface ParseLeasesOptions {
  /** Path used in problems and in each lease's `origin`. */
  file: string;
  /** ms since the epoch: leases that end at or before it do not count. */
  now: number;
  /** Skips detection. */
  format?: LeaseFormat;
}

/**
 * Parses one lease file: the active, unexpired leases, the newest per MAC, in file order, and
 * a problem per entry that could not be read (the entry is skipped; nothing is fatal).
 */
export function parseLeases(text: string, opts: ParseLeasesOptions): LeaseReadResult {
  const { file, now } = opts;
  const format = opts.format ?? detectLeaseFormat(text, file);
  switch (format) {
    case 'isc':
      return { format, ...parseIsc(text, file, now) };
    case 'dnsmasq':
      return { format, ...parseDnsmasq(text, file, now) };
    case 'kea':
      return { format, ...parseKea(text, file, now) };
    case undefined: {
      // An empty file holds no leases whatever its format.
      if (text.trim() === '') return { format, leases: [], problems: [] };
      const hint = text.trimStart().startsWith('address,duid')
        ? 'this is a Kea DHCPv6 lease file; bpa reads DHCPv4 leases only'
        : 'not an ISC dhcpd, dnsmasq or Kea lease4 lease file';
      return {
        format,
        leases: [],
        problems: [warning(LEASE_FORMAT_UNKNOWN, hint, { file, line: 1 })],
      };
    }
  }
}
