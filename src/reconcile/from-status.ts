import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/options.js';
import type { FactsMap } from '../observe/facts.js';
import { factsKey } from '../observe/facts.js';
import type { Observations } from '../observe/index.js';
import { identityMacs, type HardwareFacts, type Host, type Lease } from '../observe/types.js';
import { hardwareFacts } from '../observe/inventory/hardware.js';
import { hostKey } from '../observe/inventory/hosts.js';
import type { InventoryStatusDoc, PlanningSettings } from '../report/inventory.js';
import type { ClusterStatusDoc } from '../report/status.js';
import { INVENTORY_REPORT } from '../source/site-path.js';
import type { AppliedState } from '../state/applied.js';
import { StalledError } from '../util/errors.js';
import { normalizeMac } from '../util/mac.js';
import type { SiteModel } from '../validate/model.js';
import { appliedFromReports } from './rebuild.js';

/** The world as the controller last reported it in the site's `status/`. */
export interface StatusWorld {
  observations: Observations;
  facts: FactsMap;
  /** How the controller plans; absent in a file without it: the command's own settings then. */
  controller?: PlanningSettings;
  /** When the controller made this observation (ISO time). */
  observedAt: string;
}

/**
 * Whether `bpa plan` plans against `status/` without being asked: the site has
 * `status/inventory.yaml`, and the person gave no inventory or lease source of their own
 * (flag or environment). BPA_FROM_STATUS=false turns it off.
 */
export async function useStatus(cfg: Config, siteDir: string): Promise<boolean> {
  if (cfg.fromStatus === true) return true;
  if (cfg.sources.fromStatus !== 'default') return false;
  const own = (name: 'inventoryDir' | 'kubeconfig' | 'leases'): boolean =>
    cfg.sources[name] === 'flag' || cfg.sources[name] === 'env';
  if (own('inventoryDir') || own('kubeconfig') || own('leases')) return false;
  const file = await lstat(join(siteDir, INVENTORY_REPORT)).catch(() => undefined);
  return file?.isFile() === true;
}

/**
 * Reads `status/`: the hosts of `status/inventory.yaml` as the inventory (their addresses as
 * the controller resolved them), the cluster reports as the applied state and the node facts
 * (installed packages), and how the controller plans. Nothing is asked of the network.
 */
export async function readStatusWorld(siteDir: string, model: SiteModel): Promise<StatusWorld> {
  // Loaded only here: it reads YAML with the yaml package, which a plain bpa plan never needs.
  const { parseReports, readReportTexts } = await import('../source/site-source.js');
  const reports = parseReports(await readReportTexts(siteDir));
  const doc = reports.get(INVENTORY_REPORT) as InventoryStatusDoc | undefined;
  if (doc?.kind !== 'InventoryStatus' || !Array.isArray(doc.status?.hosts)) {
    throw new StalledError(
      'STATUS_INVENTORY_MISSING',
      `${join(siteDir, INVENTORY_REPORT)} is missing or is not an InventoryStatus written by bpa: there is no observed inventory to plan against; it is written by bpa serve on its next full reconcile (or plan without --from-status)`,
    );
  }
  const origin = INVENTORY_REPORT;
  const leases = new Map<string, Lease>();
  const hosts: Host[] = doc.status.hosts.map((h) => {
    const address = h.address;
    const addrMac = address ? normalizeMac(address.mac) : undefined;
    if (address && addrMac && address.from === 'lease')
      leases.set(addrMac, { mac: addrMac, ip: address.ip, origin });
    const bootMac = h.bootMAC ? (normalizeMac(h.bootMAC) ?? h.bootMAC) : undefined;
    const nics = (h.nics ?? []).map((n) => {
      const mac = normalizeMac(n.mac) ?? n.mac;
      return {
        mac,
        ...(n.name ? { name: n.name } : {}),
        ...(n.model ? { model: n.model } : {}),
        ips: address?.from === 'inventory' && addrMac === mac ? [address.ip] : [],
      };
    });
    return {
      name: h.name,
      ...(h.namespace ? { namespace: h.namespace } : {}),
      key: hostKey(h),
      ...(bootMac ? { bootMac } : {}),
      nics,
      ...(typeof h.cpu === 'number' ? { cpuCount: h.cpu } : {}),
      ...(typeof h.memoryMiB === 'number' ? { ramMebibytes: h.memoryMiB } : {}),
      sriov: h.sriov === true,
      qat: h.qat === true,
      labels: stringMap(h.labels),
      ...hardwareOf(h.hardware),
      eligible: h.eligible === true,
      ...(h.eligible === true ? {} : { ineligibleReason: h.reason ?? 'not eligible' }),
      ...(h.consumer !== undefined ? { consumer: h.consumer } : {}),
      macs: identityMacs(bootMac, nics),
      origin: `${origin} (${h.namespace ? `${h.namespace}/` : ''}${h.name})`,
    };
  });
  const applied: AppliedState = {
    clusters: new Map(appliedFromReports(reports, model).map((c) => [c.cluster, c])),
  };
  const facts: FactsMap = new Map();
  for (const r of reports.values()) {
    const report = r as ClusterStatusDoc | undefined;
    if (report?.kind !== 'ClusterStatus' || !Array.isArray(report.status?.nodes)) continue;
    for (const n of report.status.nodes) {
      if (typeof n.reachable !== 'boolean') continue;
      facts.set(factsKey(report.metadata.name, n.name), {
        reachable: n.reachable,
        installed: n.reachable ? { ...(n.packages ?? {}) } : {},
      });
    }
  }
  return {
    observations: {
      hosts,
      leases,
      applied,
      problems: [],
      inventory: `${hosts.length} BareMetalHosts from ${INVENTORY_REPORT} (${doc.status.inventory})`,
    },
    facts,
    ...(doc.status.controller ? { controller: doc.status.controller } : {}),
    observedAt: doc.status.observedAt,
  };
}

export { observedAge } from './observed-age.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The string entries of a map written by bpa (anything else is left out). */
function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function hardwareOf(v: unknown): { hardware?: HardwareFacts } {
  const hardware = isRecord(v) ? hardwareFacts(v) : undefined;
  return hardware ? { hardware } : {};
}
