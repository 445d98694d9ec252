import { normalizeMac } from '../../util/mac.js';

/**
 * What a lease's hardware-address field holds: an Ethernet MAC (normalized), a well-formed
 * address of another hardware type (InfiniBand, IEEE 802, a dnsmasq type prefix such as
 * `06-…`), which bpa does not match hosts by, or text that is no hardware address at all.
 */
export type HwAddr = { kind: 'mac'; mac: string } | { kind: 'other' } | { kind: 'invalid' };

const OTHER: HwAddr = { kind: 'other' };
const INVALID: HwAddr = { kind: 'invalid' };

// Octets of one or two hex digits: dhcpd's parser accepts `0:1b:…`, and hand-edited files use it.
const OCTETS = /^[0-9a-f]{1,2}(?:[:-][0-9a-f]{1,2})*$/i;
// dnsmasq writes a bare type prefix for a client that sent no hardware address.
const TYPE_ONLY = /^[0-9a-f]{2}-$/i;
const BARE_HEX = /^(?:[0-9a-f]{2})+$/i;

export function classifyHwAddr(raw: string): HwAddr {
  // The common case first: most lease files hold nothing but well-formed Ethernet MACs.
  const plain = normalizeMac(raw);
  if (plain) return { kind: 'mac', mac: plain };
  // Bare hex of any length but a MAC's (normalizeMac took those): another hardware type.
  if (BARE_HEX.test(raw)) return OTHER;
  if (TYPE_ONLY.test(raw)) return OTHER;
  if (!OCTETS.test(raw)) return INVALID;
  // Mixed separators are dnsmasq's `<type>-<octets>` for non-Ethernet hardware: the type
  // byte must not be read as the first octet of a MAC.
  if (raw.includes(':') && raw.includes('-')) return OTHER;
  const octets = raw.split(/[:-]/);
  if (octets.length !== 6) return OTHER;
  const mac = normalizeMac(octets.map((o) => o.padStart(2, '0')).join(':'));
  return mac ? { kind: 'mac', mac } : INVALID;
}
