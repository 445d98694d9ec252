import type { Lease } from '../types.js';
import type { Problem } from '../../util/problem.js';

export type LeaseFormat = 'isc' | 'dnsmasq' | 'kea';

/** What one format parser found: the newest active lease per MAC, in file order. */
export interface ParsedLeases {
  leases: Lease[];
  problems: Problem[];
}

export interface LeaseReadResult extends ParsedLeases {
  /** The format read; undefined when it could not be told (see LEASE_FORMAT_UNKNOWN). */
  format: LeaseFormat | undefined;
}
