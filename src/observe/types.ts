/**
 * What the observe stage knows about the real world. Produced by inventory sources and lease
 * readers; consumed by the pure plan stage.
 */
import { namesAHost } from '../util/mac.js';

/** One network interface of a host. */
export interface Nic {
  /** Normalized MAC: lowercase, colon-separated. */
  mac: string;
  name?: string;
  model?: string;
  /** Addresses reported by the inventory for this NIC (IPv4 and IPv6 entries merged). */
  ips: string[];
}

/** A bare-metal host as bpa sees it, from a BareMetalHost (+ HardwareData). */
export interface Host {
  name: string;
  namespace?: string;
  /** `namespace/name`, or the name alone (inventory/hosts.ts hostKey): made once, with the host. */
  key: string;
  /** Normalized boot MAC (spec.bootMACAddress), when given. */
  bootMac?: string;
  /** NICs by normalized MAC; a NIC listed twice (IPv4 and IPv6 entries) appears once. */
  nics: Nic[];
  cpuCount?: number;
  ramMebibytes?: number;
  sriov: boolean;
  qat: boolean;
  labels: Record<string, string>;
  eligible: boolean;
  /** Why the host cannot be used, when it is not eligible. */
  ineligibleReason?: string;
  /** Who holds the host (`spec.consumerRef`): "Machine ns/name"; such a host is never placed. */
  consumer?: string;
  /**
   * Every MAC that identifies the host (identityMacs of its boot MAC and NICs): what a
   * pinned node names and what leases are looked up by. Made once, with the host.
   */
  macs: readonly string[];
  /** Where the host's data came from (file:line or namespace/name), for messages. */
  origin: string;
  /** What metal3's inspection reported (status.hardware or HardwareData), for placement. */
  hardware?: HardwareFacts;
}

/** metal3's HardwareDetails as placement reads them: its field names, unknown left out. */
export interface HardwareFacts {
  cpu?: {
    arch?: string;
    model?: string;
    count?: number;
    clockMegahertz?: number;
    flags?: string[];
  };
  ramMebibytes?: number;
  nics?: NicFacts[];
  storage?: DiskFacts[];
  systemVendor?: { manufacturer?: string; productName?: string };
  firmware?: { bios?: { vendor?: string; version?: string; date?: string } };
}

export interface NicFacts {
  name?: string;
  model?: string;
  mac?: string;
  speedGbps?: number;
  pxe?: boolean;
  vlans?: number[];
}

export interface DiskFacts {
  name?: string;
  type?: string;
  sizeBytes?: number;
  rotational?: boolean;
  vendor?: string;
  model?: string;
}

/**
 * Every MAC that identifies a host: its boot MAC first, then its NICs' MACs, each once, except
 * the null MAC and group (multicast, broadcast) MACs, which no NIC carries as its own (no node
 * can name one). The MACs are normalized already, as a Host's are.
 */
export function identityMacs(bootMac: string | undefined, nics: readonly Nic[]): string[] {
  // A host has a handful of MACs: a list is cheaper than a Set.
  const macs: string[] = [];
  if (bootMac && namesAHost(bootMac)) macs.push(bootMac);
  for (const nic of nics) {
    if (namesAHost(nic.mac) && !macs.includes(nic.mac)) macs.push(nic.mac);
  }
  return macs;
}

/** An active DHCP lease. */
export interface Lease {
  mac: string;
  ip: string;
  /** Expiry in ms since the epoch; undefined for infinite leases. */
  expires?: number;
  /** When the lease was granted or last renewed, ms since the epoch, when the format says. */
  starts?: number;
  hostname?: string;
  /** file:line of the entry. */
  origin: string;
}
