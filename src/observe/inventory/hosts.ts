import { isNullMac, normalizeMac } from '../../util/mac.js';
import { identityMacs, type Host, type Nic } from '../types.js';
import { isSriovModel } from './sriov.js';
import { hardwareFacts } from './hardware.js';
import { keepsDerived, ObjectMemo } from '../../util/memo.js';

/** A BareMetalHost or HardwareData object as plain data (from the site, a directory or the API). */
export interface Metal3Object {
  kind: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  /** Where it came from, for messages (file, or namespace/name in the API). */
  origin?: string;
}

export const SRIOV_LABEL = 'bpa.akraino.org/sriov';
export const QAT_LABEL = 'bpa.akraino.org/qat';

/** Provisioning states in which the host's OS is installed and usable. */
const READY_STATES = new Set(['provisioned', 'externally provisioned']);

/** `namespace/name`, or the name alone: how hosts are named in plans, state and messages. */
export function hostKey(obj: { name: string; namespace?: string }): string {
  return obj.namespace ? `${obj.namespace}/${obj.name}` : obj.name;
}

/**
 * Turns BareMetalHost (+ HardwareData of the same namespace/name) objects into hosts, each
 * with its eligibility and, when not eligible, the reason. Pure.
 */
export function hostsFromObjects(objects: readonly Metal3Object[]): Host[] {
  const patched = last && patchHosts(objects, last);
  if (patched) return patched;
  const hardwareData = new Map<string, Record<string, unknown>>();
  for (const o of objects) {
    if (o.kind !== 'HardwareData') continue;
    const hw = o.spec?.['hardware'];
    if (isRecord(hw)) hardwareData.set(hostKey(meta(o)), hw);
  }
  const hosts: Array<{ host: Host; at: number }> = [];
  const keys: Array<string | undefined> = [];
  objects.forEach((o, at) => {
    if (o.kind !== 'BareMetalHost') {
      keys.push(undefined);
      return;
    }
    const key = hostKey(meta(o));
    keys.push(key);
    hosts.push({ host: hostOf(o, key, hardwareData.get(key)), at });
  });
  hosts.sort((a, b) => cmp(a.host.key, b.host.key));
  const place = new Int32Array(objects.length).fill(-1);
  hosts.forEach((h, i) => (place[h.at] = i));
  const out = hosts.map((h) => h.host);
  // A full build is kept for the next call only where there is one (util/memo.ts): in a
  // one-shot command it would only outlive its use, for the garbage collector to move.
  if (keepsDerived()) last = { objects: [...objects], keys, hardwareData, place, hosts: out };
  return [...out];
}

function hostOf(o: Metal3Object, key: string, hw: Record<string, unknown> | undefined): Host {
  if (!keepsDerived()) return hostFromObject(o, key, hw); // a one-shot command (util/memo.ts)
  const inputs: HostInputs = { spec: o.spec, status: o.status, origin: o.origin, hw };
  const known = o.metadata ? built.get(o.metadata) : undefined;
  // The key comes from the metadata, which the memo is keyed by: the same for the same entry.
  if (known && sameInputs(known, inputs)) return known.host;
  const host = hostFromObject(o, key, hw);
  if (o.metadata) built.set(o.metadata, { ...inputs, host });
  return host;
}

/**
 * The objects and hosts of the last call (`bpa serve` makes one per reconcile), with each
 * object's host key and place among the hosts: a call with the same objects but a few
 * BareMetalHosts, each keeping its name, replaces those hosts in place instead of building
 * and sorting 10,000 again.
 */
let last:
  | {
      objects: readonly Metal3Object[];
      keys: ReadonlyArray<string | undefined>;
      hardwareData: ReadonlyMap<string, Record<string, unknown>>;
      /** Index in `hosts` of each object's host; -1 for HardwareData. */
      place: Int32Array;
      hosts: readonly Host[];
    }
  | undefined;

/** More changed objects than this and the hosts are built again. */
const PATCH_LIMIT = 256;

function patchHosts(
  objects: readonly Metal3Object[],
  prev: NonNullable<typeof last>,
): Host[] | undefined {
  if (objects.length !== prev.objects.length) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < objects.length; i++) {
    if (objects[i] === prev.objects[i]) continue;
    const o = objects[i] as Metal3Object;
    // A HardwareData changes the host of its name, wherever it is: built again.
    if (o.kind !== 'BareMetalHost' || prev.keys[i] === undefined) return undefined;
    if (hostKey(meta(o)) !== prev.keys[i] || changed.push(i) > PATCH_LIMIT) return undefined;
  }
  const hosts = [...prev.hosts];
  for (const i of changed) {
    const o = objects[i] as Metal3Object;
    const key = prev.keys[i] as string;
    hosts[prev.place[i] as number] = hostOf(o, key, prev.hardwareData.get(key));
  }
  last = { ...prev, objects: [...objects], hosts };
  return [...hosts];
}

interface HostInputs {
  spec: Metal3Object['spec'];
  status: Metal3Object['status'];
  origin: string | undefined;
  hw: Record<string, unknown> | undefined;
}

/**
 * Hosts already built, by their object's metadata, with what else they were built from. Under
 * `bpa serve` an unchanged file's documents are the same objects from one reconcile to the
 * next (load/cache.ts), so a host whose objects are all the same is not built again; objects
 * are never changed once read, and a host is never changed once built. A WeakMap: an entry
 * lives only as long as the document it came from.
 */
const built = new ObjectMemo<object, HostInputs & { host: Host }>();

function sameInputs(a: HostInputs, b: HostInputs): boolean {
  return a.spec === b.spec && a.status === b.status && a.origin === b.origin && a.hw === b.hw;
}

function hostFromObject(
  o: Metal3Object,
  key: string,
  hardwareData: Record<string, unknown> | undefined,
): Host {
  const m = meta(o);
  const status = o.status ?? {};
  const hw = hardwareData ?? (isRecord(status['hardware']) ? status['hardware'] : {});
  const labels = o.metadata?.labels ?? {};
  const nics = nicsOf(hw['nics']);
  const cpu = isRecord(hw['cpu']) ? hw['cpu'] : {};
  const bootMac =
    typeof o.spec?.['bootMACAddress'] === 'string'
      ? normalizeMac(o.spec['bootMACAddress'])
      : undefined;
  const consumer = consumerOf(o.spec?.['consumerRef']);
  const reason = ineligibility(o, consumer);
  const hardware = hardwareFacts(hw);
  return {
    name: m.name,
    namespace: m.namespace,
    key,
    bootMac,
    nics,
    cpuCount: typeof cpu['count'] === 'number' ? cpu['count'] : undefined,
    ramMebibytes: typeof hw['ramMebibytes'] === 'number' ? hw['ramMebibytes'] : undefined,
    sriov:
      flag(labels[SRIOV_LABEL]) ?? nics.some((n) => n.model !== undefined && isSriovModel(n.model)),
    qat: flag(labels[QAT_LABEL]) ?? false,
    // The document's own labels: documents are never changed once read, nor are hosts.
    labels,
    eligible: reason === undefined,
    ineligibleReason: reason,
    // Every field written, undefined or not: one literal, no spread to copy field by field.
    consumer,
    macs: identityMacs(bootMac, nics),
    origin: o.origin ?? key,
    hardware,
  };
}

/**
 * "Machine ns/name" for a `spec.consumerRef`; undefined when there is none. Like metal3, any
 * reference (even an incomplete one) means the host is taken.
 */
function consumerOf(ref: unknown): string | undefined {
  if (ref === undefined || ref === null) return undefined;
  if (!isRecord(ref)) return '';
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const name = [text(ref['namespace']), text(ref['name'])].filter(Boolean).join('/');
  return [text(ref['kind']), name].filter(Boolean).join(' ');
}

function ineligibility(o: Metal3Object, consumer: string | undefined): string | undefined {
  const status = o.status ?? {};
  const reasons: string[] = [];
  if (consumer !== undefined)
    reasons.push(`consumed${consumer ? ` by ${consumer}` : ''} (spec.consumerRef)`);
  if (o.spec?.['online'] !== true) reasons.push('not online (spec.online is not true)');
  if (!isRecord(o.status) || isEmpty(o.status)) {
    // Written by hand or exported without status: metal3 has not reported on it.
    reasons.push('no status (metal3 has not reported on it)');
    return reasons.join('; ');
  }
  if (status['poweredOn'] === undefined)
    reasons.push('power state not reported (status.poweredOn)');
  else if (status['poweredOn'] !== true) reasons.push('powered off');
  const errorMessage = typeof status['errorMessage'] === 'string' ? status['errorMessage'] : '';
  const errorType = typeof status['errorType'] === 'string' ? status['errorType'] : '';
  if (errorMessage !== '' || errorType !== '') {
    // errorType alone is enough: metal3 may clear the message and keep the type.
    reasons.push(`error: ${[errorType, errorMessage].filter(Boolean).join(': ').slice(0, 160)}`);
  } else if (status['operationalStatus'] === 'error') {
    reasons.push('operational status error');
  }
  const provisioning = isRecord(status['provisioning']) ? status['provisioning'] : {};
  const state = typeof provisioning['state'] === 'string' ? provisioning['state'] : undefined;
  if (!state || !READY_STATES.has(state)) {
    reasons.push(
      state
        ? `provisioning state '${state}' (needs provisioned or externally provisioned)`
        : 'no provisioning state',
    );
  }
  return reasons.length ? reasons.join('; ') : undefined;
}

/**
 * NICs by MAC: a NIC listed twice (one entry per IPv4 and IPv6 address) is one NIC. NICs with
 * the null MAC (metal3's "unknown") are told apart by name instead.
 */
function nicsOf(raw: unknown): Nic[] {
  if (!Array.isArray(raw)) return [];
  // A host has a handful of NICs: a scan of those found so far is cheaper than a Map.
  const nics: Nic[] = [];
  const keys: string[] = [];
  for (const entry of raw) {
    if (!isRecord(entry) || typeof entry['mac'] !== 'string') continue;
    const mac = normalizeMac(entry['mac']);
    if (!mac) continue;
    const key = isNullMac(mac) ? `${mac}/${String(entry['name'] ?? nics.length)}` : mac;
    const ip = entry['ip'];
    const hasIp = typeof ip === 'string' && ip !== '';
    const nic = nics[keys.indexOf(key)];
    if (nic) {
      if (hasIp && !nic.ips.includes(ip)) nic.ips.push(ip);
      continue;
    }
    const name = entry['name'];
    const model = entry['model'];
    const ips = hasIp ? [ip] : [];
    // Made whole in one literal when it has both (nearly every NIC): a field added later
    // costs the object a second allocation.
    if (typeof name === 'string' && typeof model === 'string') {
      nics.push({ mac, ips, name, model });
    } else {
      const made: Nic = { mac, ips };
      if (typeof name === 'string') made.name = name;
      if (typeof model === 'string') made.model = model;
      nics.push(made);
    }
    keys.push(key);
  }
  return nics;
}

function meta(o: Metal3Object): { name: string; namespace?: string } {
  return { name: o.metadata?.name ?? '', namespace: o.metadata?.namespace };
}

function flag(label: string | undefined): boolean | undefined {
  if (label === undefined) return undefined;
  return label.toLowerCase() === 'true';
}

/** No own field, found without listing them (one list per host otherwise). */
function isEmpty(o: Record<string, unknown>): boolean {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) return false;
  return true;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
