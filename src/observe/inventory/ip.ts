import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Host, Lease } from '../types.js';
import { keepsDerived } from '../../util/memo.js';

export type IpSource = 'lease' | 'inventory';
export const DEFAULT_IP_ORDER: IpSource[] = ['lease', 'inventory'];

export interface ResolvedIp {
  ip: string;
  source: IpSource;
  mac: string;
  /** file:line of the lease, or the host's origin. */
  origin: string;
}

/** An address a source offered for a host that cannot be a node address, and why. */
export interface SkippedAddress {
  ip: string;
  mac: string;
  source: IpSource;
  why: string;
}

export interface IpResolution {
  resolved?: ResolvedIp;
  /** Addresses passed over before the one chosen (all of them when none was). */
  skipped: readonly SkippedAddress[];
}

/** Address ranges, checked as a BlockList built on first use. */
interface Ranges {
  check(address: string, family: 'ipv4' | 'ipv6'): boolean;
}

const LINK_LOCAL_V6 = ranges(['fe80::', 10, 'ipv6']);

/** Ranges that are never a node's address, IPv4-mapped IPv6 forms included. */
const NEVER: ReadonlyArray<readonly [string, Ranges]> = [
  ['unspecified', ranges(['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6'])],
  ['loopback', ranges(['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6'])],
  ['multicast', ranges(['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6'])],
  ['broadcast', ranges(['255.255.255.255', 32, 'ipv4'])],
  ['link-local without a zone: it names no interface, so it cannot be reached', LINK_LOCAL_V6],
  ['IPv4 link-local (no DHCP answer): not reachable from bpa', ranges(['169.254.0.0', 16, 'ipv4'])],
];

/** Built on first use, not when the module loads. */
function ranges(...subnets: Array<[string, number, 'ipv4' | 'ipv6']>): Ranges {
  let list: BlockList | undefined;
  return {
    check(address, family) {
      if (!list) {
        list = new BlockList();
        for (const [net, prefix, type] of subnets) list.addSubnet(net, prefix, type);
      }
      return list.check(address, family);
    },
  };
}

/**
 * Why `ip` can never be the address bpa reaches a node at (SSH, the installer inventory);
 * undefined when it can. Link-local addresses with a zone, as metal3 reports them
 * (`fe80::1%enp1s0`), name an interface of the host itself, not of the machine bpa runs on.
 */
export function unusableAddress(ip: string): string | undefined {
  const zone = ip.indexOf('%');
  if (zone !== -1) {
    const bare = ip.slice(0, zone);
    if (isIP(bare) === 6 && LINK_LOCAL_V6.check(bare, 'ipv6'))
      return `link-local with a zone: reachable only through the host's own ${ip.slice(zone + 1) || 'interface'}`;
    return 'not an IP address';
  }
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 4) return unusableV4(ip);
  for (const [why, list] of NEVER) if (list.check(ip, 'ipv6')) return why;
  return undefined;
}

const [UNSPECIFIED, LOOPBACK, MULTICAST, BROADCAST, , LINK_LOCAL_V4] = NEVER.map(([why]) => why);

/**
 * NEVER's IPv4 ranges, read from the first two octets: a BlockList check builds a
 * SocketAddress for every call, which cost ~80 ms for a plan of 10,000 hosts. `ip` is a valid
 * dotted quad (isIP: no leading zeros), and no IPv6 range of NEVER holds an IPv4 address.
 */
function unusableV4(ip: string): string | undefined {
  const dot = ip.indexOf('.');
  const a = Number(ip.slice(0, dot));
  const b = Number(ip.slice(dot + 1, ip.indexOf('.', dot + 1)));
  if (a === 0) return UNSPECIFIED;
  if (a === 127) return LOOPBACK;
  if (a >= 224 && a <= 239) return MULTICAST;
  if (ip === '255.255.255.255') return BROADCAST;
  if (a === 169 && b === 254) return LINK_LOCAL_V4;
  return undefined;
}

/**
 * The address bpa uses to reach a host: IPv4 first, and within a family, first match wins in
 * `order`: an active lease for one of its MACs (boot MAC first), then an address the inventory
 * reports for one of its NICs (boot NIC first). Leases are expected already filtered to
 * active ones.
 */
export function resolveIp(
  host: Host,
  leases: ReadonlyMap<string, Lease>,
  order: readonly IpSource[] = DEFAULT_IP_ORDER,
): ResolvedIp | undefined {
  return resolveNodeIp(host, leases, order).resolved;
}

/**
 * Resolutions by lease map, then by host. Under `bpa serve` an unchanged host document gives
 * the same host object (observe/inventory/hosts.ts) and unchanged lease files the same map
 * (observe/leases/lease-cache.ts), so a host's address is not looked for again; a host and a
 * map are never changed once made. WeakMaps: a map's resolutions go with the map, and an
 * entry lives no longer than its host.
 */
const resolutions = new WeakMap<
  ReadonlyMap<string, Lease>,
  WeakMap<Host, { order: readonly IpSource[]; result: IpResolution }>
>();

/**
 * `resolveIp`, with the addresses it passed over and why. The same host, map and order give
 * the same result object (read it, never change it).
 */
export function resolveNodeIp(
  host: Host,
  leases: ReadonlyMap<string, Lease>,
  order: readonly IpSource[] = DEFAULT_IP_ORDER,
): IpResolution {
  if (!keepsDerived()) return resolve(host, leases, order); // a one-shot command (util/memo.ts)
  let byHost = resolutions.get(leases);
  if (!byHost) {
    byHost = new WeakMap();
    resolutions.set(leases, byHost);
  }
  const held = byHost.get(host);
  if (held && held.order.length === order.length && held.order.every((s, i) => s === order[i]))
    return held.result;
  const result = resolve(host, leases, order);
  byHost.set(host, { order: [...order], result });
  return result;
}

function resolve(
  host: Host,
  leases: ReadonlyMap<string, Lease>,
  order: readonly IpSource[],
): IpResolution {
  // Made only when an address is passed over: nearly every host's first address is usable.
  let skipped: SkippedAddress[] | undefined;
  let nics: Host['nics'] | undefined;
  // IPv4 first, whatever the source: an IPv6 address (a DHCPv6 lease, or one the inventory
  // reports) is the address of a host only when no source has a usable IPv4 one for it.
  for (const wantV4 of [true, false]) {
    for (const source of order) {
      if (source === 'lease') {
        for (const mac of host.macs) {
          const lease = leases.get(mac);
          // A MAC's lease is an IPv6 one only when it has no IPv4 lease (select.ts).
          if (!lease || lease.ip.includes(':') === wantV4) continue;
          const why = unusableAddress(lease.ip);
          if (why === undefined)
            return {
              resolved: { ip: lease.ip, source, mac, origin: lease.origin },
              skipped: skipped ?? NONE_SKIPPED,
            };
          (skipped ??= []).push({ ip: lease.ip, mac, source, why });
        }
        continue;
      }
      nics ??= [...host.nics].sort(
        (a, b) => Number(b.mac === host.bootMac) - Number(a.mac === host.bootMac),
      );
      for (const nic of nics) {
        for (const ip of nic.ips) {
          if (isIPv4(ip) !== wantV4) continue;
          const why = unusableAddress(ip);
          if (why === undefined)
            return {
              resolved: { ip, source, mac: nic.mac, origin: host.origin },
              skipped: skipped ?? NONE_SKIPPED,
            };
          (skipped ??= []).push({ ip, mac: nic.mac, source, why });
        }
      }
    }
  }
  return { skipped: skipped ?? NONE_SKIPPED };
}

/** The `skipped` of a resolution that passed nothing over, shared (never changed). */
const NONE_SKIPPED: readonly SkippedAddress[] = Object.freeze([]);
