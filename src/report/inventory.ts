import { yamlText } from '../util/yaml-text.js';
import type { ExecutionSettings } from '../config/execution.js';
import { resolveIp, type IpSource } from '../observe/inventory/ip.js';
import type { HardwareFacts, Host, Lease } from '../observe/types.js';
import { INVENTORY_REPORT } from '../source/site-path.js';
import { redact } from '../util/redact.js';

export { INVENTORY_REPORT };

/** One host as the controller observed it: what placement and addressing use, nothing secret. */
export interface ObservedHost {
  name: string;
  namespace?: string;
  bootMAC?: string;
  nics: Array<{ mac: string; name?: string; model?: string }>;
  cpu?: number;
  memoryMiB?: number;
  sriov: boolean;
  qat: boolean;
  /** The BareMetalHost's labels, which hostSelector terms read. */
  labels?: Record<string, string>;
  /** metal3's inspected hardware as placement terms read it (no serial numbers). */
  hardware?: HardwareFacts;
  eligible: boolean;
  /** Why the host cannot be used, when it is not eligible. */
  reason?: string;
  /** Who holds the host (`spec.consumerRef`). */
  consumer?: string;
  /** The address bpa reaches the host at, and where it came from. */
  address?: { ip: string; from: IpSource; mac: string };
}

export interface InventoryStatusDoc {
  apiVersion: string;
  kind: 'InventoryStatus';
  metadata: { name: string };
  status: {
    /** When this observation was first made: it is carried over while nothing changes. */
    observedAt: string;
    /** "12 BareMetalHosts from the Kubernetes API (namespaces metal3)". */
    inventory: string;
    /**
     * How the controller plans: a plan made offline with these gets the hash the controller
     * computes (the settings, flavour and pruning are part of what would run).
     */
    controller: PlanningSettings;
    hosts: ObservedHost[];
  };
}

export interface PlanningSettings {
  flavour: string;
  prune: boolean;
  /** The order in which addresses were looked for (leases, then the inventory). */
  ipOrder: IpSource[];
  /** How the controller acts on the nodes (installer, mirror, SSH user and port). */
  settings?: ExecutionSettings;
}

export interface InventoryReportInput {
  site: string;
  hosts: readonly Host[];
  leases: ReadonlyMap<string, Lease>;
  controller: PlanningSettings;
  inventory: string;
  /** The previous `status/inventory.yaml`, parsed: its time is kept when nothing changed. */
  previous: unknown;
  now: string;
}

/**
 * `status/inventory.yaml`: the world as the controller last observed it (hosts, their
 * hardware, eligibility, addresses, holders), so that a plan can be made offline, in a pull
 * request job, against the same inventory the controller plans with. Pure and deterministic:
 * hosts sorted by key, fixed key order, and the time of the previous report when the content
 * is the same, so an unchanged world makes no commit. BMC addresses, credentials and
 * annotations are never written: only what role assignment (labels and hardware facts
 * included, for placement terms) and addressing read.
 */
export function buildInventoryReport(input: InventoryReportInput): string {
  const hosts = [...input.hosts]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((h) => observedHost(h, input.leases, input.controller.ipOrder));
  const c = input.controller;
  const body = {
    inventory: input.inventory,
    controller: {
      flavour: c.flavour,
      prune: c.prune,
      ipOrder: [...c.ipOrder],
      ...(c.settings ? { settings: c.settings } : {}),
    },
    hosts,
  };
  const prev = input.previous as InventoryStatusDoc | undefined;
  const same =
    prev?.kind === 'InventoryStatus' &&
    typeof prev.status?.observedAt === 'string' &&
    JSON.stringify(withoutTime(prev.status)) === JSON.stringify(body);
  const doc: InventoryStatusDoc = {
    apiVersion: 'bpa.akraino.org/v1alpha1',
    kind: 'InventoryStatus',
    metadata: { name: input.site },
    status: { observedAt: same ? prev.status.observedAt : input.now, ...body },
  };
  return `# written by bpa; do not edit\n${yamlText(doc)}`;
}

function withoutTime(status: InventoryStatusDoc['status']): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...status };
  delete rest['observedAt'];
  return rest;
}

function observedHost(
  h: Host,
  leases: ReadonlyMap<string, Lease>,
  order: readonly IpSource[],
): ObservedHost {
  const ip = resolveIp(h, leases, order);
  return {
    name: h.name,
    ...(h.namespace ? { namespace: h.namespace } : {}),
    ...(h.bootMac ? { bootMAC: h.bootMac } : {}),
    nics: h.nics.map((n) => ({
      mac: n.mac,
      ...(n.name ? { name: n.name } : {}),
      ...(n.model ? { model: n.model } : {}),
    })),
    ...(h.cpuCount !== undefined ? { cpu: h.cpuCount } : {}),
    ...(h.ramMebibytes !== undefined ? { memoryMiB: h.ramMebibytes } : {}),
    sriov: h.sriov,
    qat: h.qat,
    ...(Object.keys(h.labels).length ? { labels: sortedLabels(h.labels) } : {}),
    ...reportedHardware(h.hardware),
    eligible: h.eligible,
    // An error text from the BMC can carry anything: redacted like every report message.
    ...(h.ineligibleReason ? { reason: redact(h.ineligibleReason) } : {}),
    ...(h.consumer !== undefined ? { consumer: h.consumer } : {}),
    ...(ip ? { address: { ip: ip.ip, from: ip.source, mac: ip.mac } } : {}),
  };
}

function sortedLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(labels).sort()) out[k] = labels[k] as string;
  return out;
}

/** The hardware facts without cpu.count and ramMebibytes, which `cpu` and `memoryMiB` carry. */
function reportedHardware(hw: HardwareFacts | undefined): { hardware?: HardwareFacts } {
  if (!hw) return {};
  const out: HardwareFacts = { ...hw };
  delete out.ramMebibytes;
  if (hw.cpu) {
    const cpu = { ...hw.cpu };
    delete cpu.count;
    if (Object.keys(cpu).length) out.cpu = cpu;
    else delete out.cpu;
  }
  return Object.keys(out).length ? { hardware: out } : {};
}
