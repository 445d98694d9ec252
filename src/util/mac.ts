/**
 * MAC addresses as bpa compares them: lowercase and colon-separated, whatever form a site, an
 * inventory or a lease file writes them in.
 */

/**
 * What metal3 reports as the MAC of a NIC it could not identify. Many hosts carry it, so it
 * names none of them.
 */
export const NULL_MAC = '00:00:00:00:00:00';

/**
 * Whether a normalized MAC is NULL_MAC. Three characters rule out nearly every other MAC
 * before the strings are compared: a MAC read from a site is a slice of its file's text, and
 * comparing such a string with another of the same length costs a call into the runtime
 * (a 10,000-host plan made ~60,000 such comparisons).
 */
export function isNullMac(mac: string): boolean {
  return (
    mac.charCodeAt(1) === 0x30 &&
    mac.charCodeAt(4) === 0x30 &&
    mac.charCodeAt(16) === 0x30 &&
    mac === NULL_MAC
  );
}

/** `aa:bb:cc:dd:ee:ff` in lowercase hex, checked without a regular expression (the hot case). */
export function isCanonical(raw: string): boolean {
  if (raw.length !== 17) return false;
  for (let i = 0; i < 17; i++) {
    const c = raw.charCodeAt(i);
    if (i % 3 === 2) {
      if (c !== 0x3a) return false;
    } else if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** Normalizes a MAC address to lowercase colon-separated form; undefined if malformed. */
export function normalizeMac(raw: string): string | undefined {
  // Most MACs are written as they are compared: nothing to build (a 10,000-host site and its
  // leases normalise ~40,000 of them per plan).
  if (isCanonical(raw)) return raw;
  const s = raw.trim().toLowerCase();
  if (/^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/.test(s)) return s.replace(/-/g, ':');
  if (/^[0-9a-f]{12}$/.test(s)) return s.match(/../g)?.join(':');
  return undefined;
}
