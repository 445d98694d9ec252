/**
 * metal3's HardwareDetails (a BareMetalHost's status.hardware, or a HardwareData's
 * spec.hardware) read into the facts placement compares: metal3's field names, values of
 * the wrong type left out, a NIC listed once per address (IPv4 and IPv6) listed once.
 */
import { normalizeMac } from '../../util/mac.js';
import type { DiskFacts, HardwareFacts, NicFacts } from '../types.js';

type Rec = Record<string, unknown>;

export function hardwareFacts(hw: Rec): HardwareFacts | undefined {
  const out: HardwareFacts = {};
  const cpu = rec(hw['cpu']);
  if (cpu) {
    const c: NonNullable<HardwareFacts['cpu']> = {};
    put(c, 'arch', str(cpu['arch']));
    put(c, 'model', str(cpu['model']));
    put(c, 'count', num(cpu['count']));
    put(c, 'clockMegahertz', num(cpu['clockMegahertz']));
    if (Array.isArray(cpu['flags'])) c.flags = cpu['flags'].filter(isStr);
    out.cpu = c;
  }
  put(out, 'ramMebibytes', num(hw['ramMebibytes']));
  if (Array.isArray(hw['nics'])) out.nics = nicsOf(hw['nics']);
  if (Array.isArray(hw['storage'])) out.storage = hw['storage'].map(rec).filter(isRec).map(diskOf);
  const sv = rec(hw['systemVendor']);
  if (sv) {
    const s: NonNullable<HardwareFacts['systemVendor']> = {};
    put(s, 'manufacturer', str(sv['manufacturer']));
    put(s, 'productName', str(sv['productName']));
    out.systemVendor = s;
  }
  const bios = rec(rec(hw['firmware'])?.['bios']);
  if (bios) {
    const b: NonNullable<NonNullable<HardwareFacts['firmware']>['bios']> = {};
    put(b, 'vendor', str(bios['vendor']));
    put(b, 'version', str(bios['version']));
    put(b, 'date', str(bios['date']));
    out.firmware = { bios: b };
  }
  return Object.keys(out).length ? out : undefined;
}

/** NICs by MAC and name: a NIC listed once per address is one NIC. */
function nicsOf(raw: unknown[]): NicFacts[] {
  const out: NicFacts[] = [];
  // The MAC and name of each NIC kept. A host has a handful of NICs: a scan of them is cheaper
  // than a Map of joined keys (10,000 hosts).
  const macs: string[] = [];
  const names: string[] = [];
  for (const r of raw) {
    const n = rec(r);
    if (!n) continue;
    const mac = typeof n['mac'] === 'string' ? (normalizeMac(n['mac']) ?? n['mac']) : undefined;
    const macKey = mac ?? '';
    const nameKey = String(n['name'] ?? '');
    if (macs.some((m, i) => m === macKey && names[i] === nameKey)) continue;
    const nic: NicFacts = {};
    put(nic, 'name', str(n['name']));
    put(nic, 'model', str(n['model']));
    put(nic, 'mac', mac);
    put(nic, 'speedGbps', num(n['speedGbps']));
    if (typeof n['pxe'] === 'boolean') nic.pxe = n['pxe'];
    if (Array.isArray(n['vlans'])) {
      const vlans = n['vlans'] // metal3 writes {id, name}; status/inventory.yaml the ids
        .map((v) => num(typeof v === 'number' ? v : rec(v)?.['id']))
        .filter((v): v is number => v !== undefined);
      if (vlans.length) nic.vlans = vlans;
    }
    macs.push(macKey);
    names.push(nameKey);
    out.push(nic);
  }
  return out;
}

function diskOf(d: Rec): DiskFacts {
  const out: DiskFacts = {};
  put(out, 'name', str(d['name']));
  put(out, 'type', str(d['type']));
  put(out, 'sizeBytes', num(d['sizeBytes']));
  if (typeof d['rotational'] === 'boolean') out.rotational = d['rotational'];
  put(out, 'vendor', str(d['vendor']));
  put(out, 'model', str(d['model']));
  return out;
}

function put<T, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function rec(v: unknown): Rec | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined;
}

function isRec(v: Rec | undefined): v is Rec {
  return v !== undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function isStr(v: unknown): v is string {
  return typeof v === 'string';
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
