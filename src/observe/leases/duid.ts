/**
 * DHCPv6 client DUIDs (RFC 8415 §11) and what ties one to a MAC. DUID-LLT (type 1) and DUID-LL
 * (type 3) carry a link-layer address: with hardware type 1 (Ethernet), a MAC of the host,
 * though not always of the interface the address is on (a DUID is made once, from one NIC).
 * DUID-EN (type 2) and DUID-UUID (type 4) carry none; such a client is tied to a MAC only when
 * its DHCPv4 client identifier is the same DUID (RFC 4361, as systemd-networkd sends by default).
 */

export type DuidReading = { mac: string } | { untied: string };

const HEX_OCTET = /^[0-9a-f]{2}$/i;

/** Octets of `aa:bb:…` (as dnsmasq writes client ids and DUIDs), lowercase; undefined if not that. */
export function hexOctets(text: string): string[] | undefined {
  const octets = text.toLowerCase().split(':');
  return octets.every((o) => HEX_OCTET.test(o)) ? octets : undefined;
}

const KINDS: Record<string, string> = {
  '0001': 'DUID-LLT (type 1)',
  '0002': 'DUID-EN (type 2)',
  '0003': 'DUID-LL (type 3)',
  '0004': 'DUID-UUID (type 4)',
};

/** The MAC a DUID embeds, or why it embeds none (a phrase: "its DUID is …"). */
export function duidMac(octets: readonly string[]): DuidReading {
  const type = octets.slice(0, 2).join('');
  const kind = KINDS[type] ?? `of unknown type ${parseInt(type || '0', 16)}`;
  // Type, hardware type, [time,] address: where the address starts.
  const at = type === '0001' ? 8 : type === '0003' ? 4 : undefined;
  if (at === undefined) return { untied: `its DUID is ${kind}, which holds no MAC` };
  const hwType = parseInt(octets.slice(2, 4).join(''), 16);
  if (hwType !== 1 || octets.length !== at + 6)
    return {
      untied: `its DUID is ${kind} with a link-layer address of hardware type ${hwType}, not an Ethernet MAC`,
    };
  return { mac: octets.slice(at).join(':') };
}

/**
 * The DUID inside a DHCPv4 client identifier of RFC 4361's form (type 255, a 4-octet IAID,
 * then the DUID), as `aa:bb:…`; undefined for any other client identifier.
 */
export function duidOfClientId(clientId: string): string | undefined {
  if (!clientId.startsWith('ff:')) return undefined;
  const octets = hexOctets(clientId);
  return octets && octets.length > 7 ? octets.slice(5).join(':') : undefined;
}
