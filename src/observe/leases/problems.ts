import { warning, type Problem } from '../../util/problem.js';

/**
 * Problem codes of the lease readers. Lease files are evidence, not input a person wrote for
 * bpa: nothing here stops a plan, so every code is a warning and the host falls back to the
 * next IP source.
 */
export const LEASE_MALFORMED = 'LEASE_MALFORMED';
export const LEASE_FORMAT_UNKNOWN = 'LEASE_FORMAT_UNKNOWN';
export const LEASE_FILE_UNREADABLE = 'LEASE_FILE_UNREADABLE';

/** Longest piece of a bad entry quoted in a message: lease files may hold very long lines. */
const QUOTE_MAX = 80;

export function malformed(file: string, line: number, message: string): Problem {
  return warning(LEASE_MALFORMED, message, { file, line });
}

/** Quotes raw file text for a message, shortened. */
export function quote(raw: string): string {
  const s = raw.length > QUOTE_MAX ? `${raw.slice(0, QUOTE_MAX)}…` : raw;
  return JSON.stringify(s);
}
