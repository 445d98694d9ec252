import { isIP, isIPv4 } from 'node:net';
import { hostMacs, type Host, type Lease } from '../types.js';

export type IpSource = 'lease' | 'inventory';
export const DEFAULT_IP_ORDER: IpSource[] = ['lease', 'inventory'];

export interface ResolvedIp {
  ip: string;
  source: IpSource;
  mac: string;
  /** file:line of the lease, or the host's origin. */
  origin: string;
}

/**
 * The address bpa uses to reach a host, first match wins in `order`: an active lease for one
 * of its MACs (boot MAC first), then an address the inventory reports for one of its NICs
 * (IPv4 first). Leases are expected already filtered to active ones.
 */
export function resolveIp(
  host: Host,
  leases: ReadonlyMap<string, Lease>,
  order: readonly IpSource[] = DEFAULT_IP_ORDER,
): ResolvedIp | undefined {
  const macs = hostMacs(host);
  for (const source of order) {
    if (source === 'lease') {
      for (const mac of macs) {
        const lease = leases.get(mac);
        if (lease && isIP(lease.ip)) return { ip: lease.ip, source, mac, origin: lease.origin };
      }
    } else {
      const nics = [...host.nics].sort(
        (a, b) => Number(b.mac === host.bootMac) - Number(a.mac === host.bootMac),
      );
      for (const wantV4 of [true, false]) {
        for (const nic of nics) {
          // Inventory data is free text: only plain addresses (no zone ids) are used.
          const ip = nic.ips.find(
            (a) => /^[0-9a-fA-F:.]+$/.test(a) && isIP(a) !== 0 && isIPv4(a) === wantV4,
          );
          if (ip) return { ip, source, mac: nic.mac, origin: host.origin };
        }
      }
    }
  }
  return undefined;
}
