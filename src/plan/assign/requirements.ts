/**
 * A node's placement terms compiled once into checks over a host: the required ones (the ICN
 * shorthands cpu, memory, sriov and qat, then hostSelector and hardware) and the weighted
 * preferred ones. One mechanism serves filtering, ranking, keeping a node on its host and
 * explaining why a host does not do. Regular expressions were checked at validation
 * (util/safe-regex.ts) and are compiled once per pattern.
 */
import type { DiskFacts, Host, NicFacts } from '../../observe/types.js';
import { formatBytes, mebibytesToBytes } from '../../util/quantity.js';
import type {
  DiskRequirement,
  HardwareRequirements,
  HostSelector,
  NicRequirement,
  NodeSpec,
  NumberRange,
  StringMatch,
} from '../../validate/model.js';
import { needOf, type Need } from './need.js';
import { ObjectMemo } from '../../util/memo.js';

/** One unmet requirement: which, what the host has, what the node needs. */
export interface Failure {
  requirement: string;
  has: string;
  needs: string;
}

export interface Check {
  /** "cpu.model matches /Gold/", for the summary of what a node needs. */
  text: string;
  ok(host: Host): boolean;
  /** Only for a host `ok` refused. */
  failure(host: Host): Failure;
}

export interface Requirements {
  /** Nodes with the same key have the same requirements. */
  key: string;
  /** The ICN shorthands (cpu, memory, sriov, qat): the same for every node sharing these. */
  need: Need;
  /** Terms beyond the ICN shorthands (hostSelector, hardware, preferred). */
  extended: boolean;
  required: Check[];
  /**
   * Sets with the same required checks have the same one (the shorthands and the identity of
   * the hostSelector and hardware objects): whether a host passes is asked once per such set.
   */
  requiredKey: string;
  preferred: Array<{ weight: number; checks: Check[] }>;
  /**
   * A label every passing host carries with one of these values (the first of
   * hostSelector.matchLabels, else its first `In` expression): assignment looks only at the
   * hosts with it, so nodes that each select one host by a label cost a lookup, not a pass
   * over the inventory.
   */
  anchor?: { key: string; values: string[] };
}

const compiled = new ObjectMemo<NodeSpec, Requirements>();

/**
 * Requirement sets already compiled, by the node's shorthands and the identity of its term
 * objects (validation hands nodes with the same terms the same objects): compiled once per
 * distinct set, not once per node. Emptied past a bound.
 */
const shared = new Map<string, Requirements>();
const SHARED_LIMIT = 4096;
const ids = new WeakMap<object, number>();
let nextId = 1;

function idOf(o: object | undefined): number {
  if (o === undefined) return 0;
  let id = ids.get(o);
  if (id === undefined) {
    id = nextId++;
    ids.set(o, id);
  }
  return id;
}

export function requirementsOf(node: NodeSpec): Requirements {
  let r = compiled.get(node);
  if (r) return r;
  const need = needOf(node);
  const k = `${need.cpu}/${need.memMib}/${need.memText}/${need.sriov}/${need.qat}/${idOf(node.hostSelector)}/${idOf(node.hardware)}/${idOf(node.preferred)}`;
  r = shared.get(k);
  if (!r) {
    r = compile(node, need);
    if (shared.size >= SHARED_LIMIT) shared.clear();
    shared.set(k, r);
  }
  compiled.set(node, r);
  return r;
}

export function passes(req: Requirements, host: Host): boolean {
  for (const c of req.required) if (!c.ok(host)) return false;
  return true;
}

/** The preference weight a host scores (0 when it passes none). */
export function weightOf(req: Requirements, host: Host): number {
  let w = 0;
  for (const p of req.preferred) if (p.checks.every((c) => c.ok(host))) w += p.weight;
  return w;
}

/** "cpu.count >=8, cpu.model matches /Gold/; preferred: 2 terms" */
export function describeRequirements(req: Requirements): string {
  const text = req.required.map((c) => c.text).join(', ') || 'any eligible host';
  const n = req.preferred.length;
  return n ? `${text}; ${n} preferred term${n === 1 ? '' : 's'}` : text;
}

export function failures(req: Requirements, host: Host): Failure[] {
  const out: Failure[] = [];
  for (const c of req.required) if (!c.ok(host)) out.push(c.failure(host));
  return out;
}

/** `cpu.model: has "Intel(R) Xeon(R) Silver 4210", needs matches /Gold/` */
export function describeFailure(f: Failure): string {
  return f.has === 'not reported'
    ? `${f.requirement}: not reported, needs ${f.needs}`
    : `${f.requirement}: has ${f.has}, needs ${f.needs}`;
}

function compile(node: NodeSpec, need: Need): Requirements {
  const required: Check[] = [];
  if (need.cpu >= 0) required.push(rangeCheck('cpu.count', (h) => h.cpuCount, { min: need.cpu }));
  if (need.memMib >= 0) {
    required.push(
      check(
        'ramMebibytes',
        (h) => h.ramMebibytes !== undefined && h.ramMebibytes >= need.memMib,
        (h) => (h.ramMebibytes === undefined ? 'not reported' : mib(h.ramMebibytes)),
        `>=${need.memText}`,
      ),
    );
  }
  if (need.sriov)
    required.push(
      check(
        'sriov',
        (h) => h.sriov,
        () => 'no',
        'yes',
      ),
    );
  if (need.qat)
    required.push(
      check(
        'qat',
        (h) => h.qat,
        () => 'no',
        'yes',
      ),
    );
  if (node.hostSelector) required.push(...selectorChecks(node.hostSelector));
  if (node.hardware) required.push(...hardwareChecks(node.hardware));
  const preferred = (node.preferred ?? []).map((p) => ({
    weight: p.weight,
    checks: [
      ...(p.hostSelector ? selectorChecks(p.hostSelector) : []),
      ...(p.hardware ? hardwareChecks(p.hardware) : []),
    ],
  }));
  const extended =
    node.hostSelector !== undefined || node.hardware !== undefined || preferred.length > 0;
  const key = extended
    ? JSON.stringify([
        need.cpu,
        need.memMib,
        need.sriov,
        need.qat,
        node.hostSelector,
        node.hardware,
        node.preferred,
      ])
    : `${need.cpu}/${need.memMib}/${need.sriov ? 1 : 0}/${need.qat ? 1 : 0}`;
  const anchor = anchorOf(node.hostSelector);
  const requiredKey = `${need.cpu}/${need.memMib}/${need.sriov}/${need.qat}/${idOf(node.hostSelector)}/${idOf(node.hardware)}`;
  return { key, need, extended, required, requiredKey, preferred, ...(anchor ? { anchor } : {}) };
}

function anchorOf(sel: HostSelector | undefined): Requirements['anchor'] {
  if (!sel) return undefined;
  const first = Object.entries(sel.matchLabels)[0];
  if (first) return { key: first[0], values: [first[1]] };
  const inList = sel.matchExpressions.find((e) => e.operator === 'In');
  return inList ? { key: inList.key, values: [...new Set(inList.values)] } : undefined;
}

function mib(n: number): string {
  return formatBytes(mebibytesToBytes(Math.trunc(n)));
}

function check(
  requirement: string,
  ok: (h: Host) => boolean,
  has: (h: Host) => string,
  needs: string,
): Check {
  return {
    text: `${requirement} ${needs}`,
    ok,
    failure: (h) => ({ requirement, has: has(h), needs }),
  };
}

// ---- labels ----

function selectorChecks(sel: HostSelector): Check[] {
  const out: Check[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels)) {
    out.push(
      check(
        `label ${key}`,
        (h) => h.labels[key] === value,
        (h) => labelText(h, key),
        JSON.stringify(value),
      ),
    );
  }
  for (const e of sel.matchExpressions) {
    const { key, values } = e;
    const set = new Set(values);
    const has = (h: Host): string => labelText(h, key);
    const name = `label ${key}`;
    switch (e.operator) {
      case 'In':
        out.push(
          check(name, (h) => set.has(h.labels[key] as string), has, `one of ${list(values)}`),
        );
        break;
      case 'NotIn':
        out.push(
          check(
            name,
            (h) => !(key in h.labels) || !set.has(h.labels[key] as string),
            has,
            `none of ${list(values)}`,
          ),
        );
        break;
      case 'Exists':
        out.push(check(name, (h) => key in h.labels, has, 'set'));
        break;
      case 'DoesNotExist':
        out.push(check(name, (h) => !(key in h.labels), has, 'not set'));
        break;
      case 'Gt':
      case 'Lt': {
        const bound = Number(values[0]);
        const gt = e.operator === 'Gt';
        out.push(
          check(
            name,
            (h) => {
              const v = h.labels[key];
              if (v === undefined || !/^-?[0-9]{1,15}$/.test(v)) return false;
              return gt ? Number(v) > bound : Number(v) < bound;
            },
            has,
            `an integer ${gt ? '>' : '<'} ${bound}`,
          ),
        );
        break;
      }
    }
  }
  return out;
}

function labelText(h: Host, key: string): string {
  const v = h.labels[key];
  return v === undefined ? 'none' : JSON.stringify(v);
}

function list(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;
}

// ---- hardware ----

const regexes = new Map<string, RegExp>();

/** A string test, with the regular expression compiled once per pattern. */
function matcher(m: StringMatch): { test: (v: string | undefined) => boolean; text: string } {
  if ('equals' in m) {
    const want = m.equals;
    return { test: (v) => v === want, text: JSON.stringify(want) };
  }
  let re = regexes.get(m.matches);
  if (!re) {
    re = new RegExp(m.matches, 'u');
    regexes.set(m.matches, re);
  }
  const r = re;
  return { test: (v) => v !== undefined && r.test(v), text: `matches /${m.matches}/` };
}

function stringCheck(
  requirement: string,
  get: (h: Host) => string | undefined,
  m: StringMatch,
): Check {
  const t = matcher(m);
  return check(
    requirement,
    (h) => t.test(get(h)),
    (h) => {
      const v = get(h);
      return v === undefined ? 'not reported' : JSON.stringify(v);
    },
    t.text,
  );
}

function inRange(v: number | undefined, r: NumberRange): boolean {
  return (
    v !== undefined && (r.min === undefined || v >= r.min) && (r.max === undefined || v <= r.max)
  );
}

function rangeText(r: NumberRange, fmt: (n: number) => string = String): string {
  if (r.min !== undefined && r.max !== undefined) return `${fmt(r.min)}..${fmt(r.max)}`;
  return r.min !== undefined ? `>=${fmt(r.min)}` : `<=${fmt(r.max as number)}`;
}

function rangeCheck(
  requirement: string,
  get: (h: Host) => number | undefined,
  r: NumberRange,
): Check {
  return check(
    requirement,
    (h) => inRange(get(h), r),
    (h) => {
      const v = get(h);
      return v === undefined ? 'not reported' : String(v);
    },
    rangeText(r),
  );
}

function hardwareChecks(hw: HardwareRequirements): Check[] {
  const out: Check[] = [];
  const cpu = hw.cpu;
  if (cpu) {
    if (cpu.arch) out.push(stringCheck('cpu.arch', (h) => h.hardware?.cpu?.arch, cpu.arch));
    if (cpu.model) out.push(stringCheck('cpu.model', (h) => h.hardware?.cpu?.model, cpu.model));
    if (cpu.count) out.push(rangeCheck('cpu.count', (h) => h.cpuCount, cpu.count));
    if (cpu.clockMegahertz)
      out.push(
        rangeCheck(
          'cpu.clockMegahertz',
          (h) => h.hardware?.cpu?.clockMegahertz,
          cpu.clockMegahertz,
        ),
      );
    for (const flag of cpu.flags ?? []) {
      out.push(
        check(
          'cpu.flags',
          (h) => h.hardware?.cpu?.flags?.includes(flag) === true,
          (h) => (h.hardware?.cpu?.flags ? `no ${flag}` : 'not reported'),
          flag,
        ),
      );
    }
  }
  if (hw.ramMebibytes) out.push(rangeCheck('ramMebibytes', (h) => h.ramMebibytes, hw.ramMebibytes));
  (hw.nics ?? []).forEach((n, i) =>
    out.push(
      countCheck(`nics[${i}]`, 'NIC', (h) => h.hardware?.nics, nicTest(n), n.count, nicText(n)),
    ),
  );
  (hw.storage ?? []).forEach((d, i) =>
    out.push(
      countCheck(
        `storage[${i}]`,
        'disk',
        (h) => h.hardware?.storage,
        diskTest(d),
        d.count,
        diskText(d),
      ),
    ),
  );
  const sv = hw.systemVendor;
  if (sv?.manufacturer)
    out.push(
      stringCheck(
        'systemVendor.manufacturer',
        (h) => h.hardware?.systemVendor?.manufacturer,
        sv.manufacturer,
      ),
    );
  if (sv?.productName)
    out.push(
      stringCheck(
        'systemVendor.productName',
        (h) => h.hardware?.systemVendor?.productName,
        sv.productName,
      ),
    );
  const bios = hw.firmware?.bios;
  for (const k of ['vendor', 'version', 'date'] as const) {
    const m = bios?.[k];
    if (m) out.push(stringCheck(`firmware.bios.${k}`, (h) => h.hardware?.firmware?.bios?.[k], m));
  }
  return out;
}

/** At least `count` items (NICs, disks) pass `test`. */
function countCheck<T>(
  requirement: string,
  noun: string,
  items: (h: Host) => readonly T[] | undefined,
  test: (item: T) => boolean,
  count: number,
  text: string,
): Check {
  const passing = (h: Host): number => {
    let n = 0;
    for (const item of items(h) ?? []) if (test(item)) n++;
    return n;
  };
  return check(
    requirement,
    (h) => passing(h) >= count,
    (h) => {
      const all = items(h);
      if (!all) return `no ${noun}s reported`;
      return `${passing(h)} matching of ${all.length} ${noun}${all.length === 1 ? '' : 's'}`;
    },
    `${count} with ${text}`,
  );
}

function nicTest(r: NicRequirement): (n: NicFacts) => boolean {
  const name = r.name && matcher(r.name);
  const model = r.model && matcher(r.model);
  const mac = r.mac && matcher(r.mac);
  return (n) =>
    (!name || name.test(n.name)) &&
    (!model || model.test(n.model)) &&
    (!mac || mac.test(n.mac)) &&
    (!r.speedGbps || inRange(n.speedGbps, r.speedGbps)) &&
    (r.pxe === undefined || n.pxe === r.pxe) &&
    (!r.vlans || r.vlans.every((v) => n.vlans?.includes(v) === true));
}

function nicText(r: NicRequirement): string {
  const parts: string[] = [];
  if (r.name) parts.push(`name ${matcher(r.name).text}`);
  if (r.model) parts.push(`model ${matcher(r.model).text}`);
  if (r.mac) parts.push(`mac ${matcher(r.mac).text}`);
  if (r.speedGbps) parts.push(`speedGbps ${rangeText(r.speedGbps)}`);
  if (r.pxe !== undefined) parts.push(`pxe ${r.pxe}`);
  if (r.vlans) parts.push(`vlans ${r.vlans.join(',')}`);
  return parts.join(', ') || 'any fields';
}

function diskTest(r: DiskRequirement): (d: DiskFacts) => boolean {
  const name = r.name && matcher(r.name);
  const vendor = r.vendor && matcher(r.vendor);
  const model = r.model && matcher(r.model);
  return (d) =>
    (!r.type || d.type === r.type) &&
    (!r.sizeBytes || inRange(d.sizeBytes, r.sizeBytes)) &&
    (r.rotational === undefined || d.rotational === r.rotational) &&
    (!name || name.test(d.name)) &&
    (!vendor || vendor.test(d.vendor)) &&
    (!model || model.test(d.model));
}

function diskText(r: DiskRequirement): string {
  const parts: string[] = [];
  if (r.type) parts.push(`type ${r.type}`);
  if (r.sizeBytes)
    parts.push(`sizeBytes ${rangeText(r.sizeBytes, (n) => formatBytes(BigInt(Math.round(n))))}`);
  if (r.rotational !== undefined) parts.push(`rotational ${r.rotational}`);
  if (r.name) parts.push(`name ${matcher(r.name).text}`);
  if (r.vendor) parts.push(`vendor ${matcher(r.vendor).text}`);
  if (r.model) parts.push(`model ${matcher(r.model).text}`);
  return parts.join(', ') || 'any fields';
}
