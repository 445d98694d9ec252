import type { Lease } from '../types.js';
import type { Problem } from '../../util/problem.js';

export type LeaseFormat = 'isc' | 'dnsmasq' | 'kea';

/** What one format parser found: the newest active lease per MAC, in file order. */
export interface ParsedLeases {
  leases: Lease[];
  problems: Problem[];
  /**
   * When a problem reported about an entry in force ends with it (ms since the epoch): from
   * then on the same text gives fewer problems. Absent: no such problem.
   */
  until?: number;
}

export interface LeaseReadResult extends ParsedLeases {
  /** The format read; undefined when it could not be told (see LEASE_FORMAT_UNKNOWN). */
  format: LeaseFormat | undefined;
}
