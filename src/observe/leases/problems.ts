import { warning, type Problem } from '../../util/problem.js';

/**
 * Problem codes of the lease readers. Lease files are evidence, not input a person wrote for
 * bpa: nothing here stops a plan, so every code but one is a warning and the host falls back
 * to the next IP source. Messages never quote a line that could not be read: a lease file may
 * be something else than it claims, and its text is not bpa's to repeat.
 */
export const LEASE_MALFORMED = 'LEASE_MALFORMED';
export const LEASE_FORMAT_UNKNOWN = 'LEASE_FORMAT_UNKNOWN';
export const LEASE_FILE_UNREADABLE = 'LEASE_FILE_UNREADABLE';
export const LEASE_IPV6_UNUSED = 'LEASE_IPV6_UNUSED';
/** The one error: a lease file the site names leads outside the site (read nothing of it). */
export const LEASE_FILE_OUTSIDE_SITE = 'LEASE_FILE_OUTSIDE_SITE';

export function malformed(file: string, line: number, message: string): Problem {
  return warning(LEASE_MALFORMED, message, { file, line });
}

/** A DHCPv6 lease in force that no MAC, so no host, can be tied to: said, not dropped silently. */
export function ipv6Unused(file: string, line: number, ip: string, why: string): Problem {
  return warning(LEASE_IPV6_UNUSED, `DHCPv6 lease of ${ip} not used: ${why}`, { file, line });
}
