/**
 * A node entry's placement terms (`hostSelector`, `hardware`, `preferred`) read into the
 * model, with the checks the JSON Schema cannot make: ranges whose min is over their max,
 * sizes that are not quantities, label expressions whose values do not fit their operator,
 * and regular expressions that do not compile or could run away. The schema has already
 * refused unknown fact names, operators and wrong types; what it let through malformed is
 * skipped here (its error is reported once, by the schema).
 */
import { error, type Problem } from '../util/problem.js';
import { quantityToUnits } from '../util/quantity.js';
import { unsafePattern } from '../util/safe-regex.js';
import { at, type Doc } from './doc.js';
import type {
  DiskRequirement,
  HardwareRequirements,
  HostSelector,
  LabelExpression,
  LabelOperator,
  NicRequirement,
  NodeSpec,
  NumberRange,
  PreferredTerm,
  StringMatch,
} from './model.js';

type Terms = Pick<NodeSpec, 'hostSelector' | 'hardware' | 'preferred'>;

const OPERATORS = new Set<LabelOperator>(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
const DISK_TYPES = new Set(['HDD', 'SSD', 'NVME']);

class Reader {
  constructor(
    private readonly doc: Doc,
    private readonly problems: Problem[],
  ) {}

  fail(code: string, message: string, ptr: string): void {
    this.problems.push(error(code, message, at(this.doc, ptr)));
  }

  selector(v: unknown, ptr: string): HostSelector | undefined {
    if (!isRecord(v)) return undefined;
    const matchLabels: Record<string, string> = {};
    if (isRecord(v['matchLabels'])) {
      for (const [k, value] of Object.entries(v['matchLabels']))
        if (typeof value === 'string') matchLabels[k] = value;
    }
    const matchExpressions: LabelExpression[] = [];
    const list = Array.isArray(v['matchExpressions']) ? v['matchExpressions'] : [];
    list.forEach((e: unknown, i) => {
      const x = this.expression(e, `${ptr}/matchExpressions/${i}`);
      if (x) matchExpressions.push(x);
    });
    return { matchLabels, matchExpressions };
  }

  private expression(e: unknown, ptr: string): LabelExpression | undefined {
    if (!isRecord(e) || typeof e['key'] !== 'string') return undefined;
    const operator = e['operator'] as LabelOperator;
    if (!OPERATORS.has(operator)) return undefined;
    const values = Array.isArray(e['values'])
      ? e['values'].filter((x): x is string => typeof x === 'string')
      : [];
    const key = e['key'];
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
      this.fail('INVALID_SELECTOR', `${key} ${operator} needs at least one value`, ptr);
      return undefined;
    }
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
      this.fail('INVALID_SELECTOR', `${key} ${operator} takes no values`, `${ptr}/values`);
      return undefined;
    }
    if (operator === 'Gt' || operator === 'Lt') {
      if (values.length !== 1 || !/^-?[0-9]{1,15}$/.test(values[0] as string)) {
        this.fail(
          'INVALID_SELECTOR',
          `${key} ${operator} needs exactly one integer value, got ${JSON.stringify(values)}`,
          `${ptr}/values`,
        );
        return undefined;
      }
    }
    return { key, operator, values };
  }

  string(v: unknown, ptr: string): StringMatch | undefined {
    if (typeof v === 'string') return { equals: v };
    if (!isRecord(v) || typeof v['matches'] !== 'string') return undefined;
    const why = unsafePattern(v['matches']);
    if (why) {
      this.fail(
        'INVALID_REGEX',
        `regular expression ${JSON.stringify(v['matches'].slice(0, 80))}: ${why}`,
        `${ptr}/matches`,
      );
      return undefined;
    }
    return { matches: v['matches'] };
  }

  range(v: unknown, ptr: string, size = false): NumberRange | undefined {
    if (!isRecord(v)) return undefined;
    const out: NumberRange = {};
    for (const bound of ['min', 'max'] as const) {
      const raw = v[bound];
      if (raw === undefined) continue;
      let n: number | undefined;
      if (typeof raw === 'number') n = raw;
      else if (size && typeof raw === 'string') {
        const units = quantityToUnits(raw);
        if (units === undefined) {
          this.fail(
            'INVALID_QUANTITY',
            `${bound}: ${JSON.stringify(raw)} is not a size (write 1.9T, 500Gi or a number of bytes)`,
            `${ptr}/${bound}`,
          );
          return undefined;
        }
        n = Number(units);
      }
      if (n === undefined) return undefined;
      out[bound] = n;
    }
    if (out.min !== undefined && out.max !== undefined && out.min > out.max) {
      const text = (b: 'min' | 'max'): string => String(v[b]);
      this.fail(
        'INVALID_RANGE',
        `min ${text('min')} is over max ${text('max')}: no host can pass`,
        ptr,
      );
      return undefined;
    }
    return out.min === undefined && out.max === undefined ? undefined : out;
  }

  hardware(v: unknown, ptr: string): HardwareRequirements | undefined {
    if (!isRecord(v)) return undefined;
    const out: HardwareRequirements = {};
    const cpu = v['cpu'];
    if (isRecord(cpu)) {
      const c: NonNullable<HardwareRequirements['cpu']> = {};
      set(c, 'arch', this.string(cpu['arch'], `${ptr}/cpu/arch`));
      set(c, 'model', this.string(cpu['model'], `${ptr}/cpu/model`));
      set(c, 'count', this.range(cpu['count'], `${ptr}/cpu/count`));
      set(c, 'clockMegahertz', this.range(cpu['clockMegahertz'], `${ptr}/cpu/clockMegahertz`));
      if (Array.isArray(cpu['flags']))
        c.flags = cpu['flags'].filter((f): f is string => typeof f === 'string');
      out.cpu = c;
    }
    set(out, 'ramMebibytes', this.range(v['ramMebibytes'], `${ptr}/ramMebibytes`));
    if (Array.isArray(v['nics']))
      out.nics = v['nics'].map((n: unknown, i) => this.nic(n, `${ptr}/nics/${i}`));
    if (Array.isArray(v['storage']))
      out.storage = v['storage'].map((d: unknown, i) => this.disk(d, `${ptr}/storage/${i}`));
    const sv = v['systemVendor'];
    if (isRecord(sv)) {
      const s: NonNullable<HardwareRequirements['systemVendor']> = {};
      set(s, 'manufacturer', this.string(sv['manufacturer'], `${ptr}/systemVendor/manufacturer`));
      set(s, 'productName', this.string(sv['productName'], `${ptr}/systemVendor/productName`));
      out.systemVendor = s;
    }
    const fw = v['firmware'];
    if (isRecord(fw) && isRecord(fw['bios'])) {
      const bios = fw['bios'];
      const b: NonNullable<NonNullable<HardwareRequirements['firmware']>['bios']> = {};
      for (const k of ['vendor', 'version', 'date'] as const)
        set(b, k, this.string(bios[k], `${ptr}/firmware/bios/${k}`));
      out.firmware = { bios: b };
    }
    return out;
  }

  private nic(v: unknown, ptr: string): NicRequirement {
    const r = isRecord(v) ? v : {};
    const out: NicRequirement = { count: typeof r['count'] === 'number' ? r['count'] : 1 };
    for (const k of ['name', 'model', 'mac'] as const)
      set(out, k, this.string(r[k], `${ptr}/${k}`));
    set(out, 'speedGbps', this.range(r['speedGbps'], `${ptr}/speedGbps`));
    if (typeof r['pxe'] === 'boolean') out.pxe = r['pxe'];
    if (Array.isArray(r['vlans']))
      out.vlans = r['vlans'].filter((x): x is number => typeof x === 'number');
    return out;
  }

  private disk(v: unknown, ptr: string): DiskRequirement {
    const r = isRecord(v) ? v : {};
    const out: DiskRequirement = { count: typeof r['count'] === 'number' ? r['count'] : 1 };
    for (const k of ['name', 'vendor', 'model'] as const)
      set(out, k, this.string(r[k], `${ptr}/${k}`));
    if (typeof r['type'] === 'string' && DISK_TYPES.has(r['type']))
      out.type = r['type'] as DiskRequirement['type'];
    set(out, 'sizeBytes', this.range(r['sizeBytes'], `${ptr}/sizeBytes`, true));
    if (typeof r['rotational'] === 'boolean') out.rotational = r['rotational'];
    return out;
  }
}

function set<T, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

/**
 * Terms already read, by field and text: sites repeat the same selector or hardware on many
 * nodes (every worker of a pool), and nodes that share the very objects share their compiled
 * checks in the plan (plan/assign/requirements.ts). Only terms read without a problem are
 * kept; the map is emptied when it grows past a bound, so a controller keeps no more than that.
 */
const known = new Map<string, unknown>();
const KNOWN_LIMIT = 4096;
const FIELDS = ['hostSelector', 'hardware', 'preferred'] as const;

/** The placement terms of one node entry (`fields` at pointer `ptr` of `doc`). */
export function placementTerms(
  fields: Record<string, unknown>,
  doc: Doc,
  ptr: string,
  problems: Problem[],
): Terms {
  const { hostSelector, hardware, preferred } = fields;
  if (hostSelector === undefined && hardware === undefined && preferred === undefined) return {};
  // One text for the whole entry first: most entries repeat one seen before.
  const whole = JSON.stringify([hostSelector, hardware, preferred]);
  const seen = known.get(whole) as Terms | undefined;
  if (seen) return seen;
  const before = problems.length;
  const out: Terms = {};
  for (const name of FIELDS) {
    const raw = fields[name];
    if (raw === undefined) continue;
    const text = `${name}\u0000${JSON.stringify(raw)}`;
    let value = known.get(text);
    if (value === undefined) {
      const before = problems.length;
      value = readField(name, raw, new Reader(doc, problems), `${ptr}/${name}`);
      if (value !== undefined && problems.length === before) {
        if (known.size >= KNOWN_LIMIT) known.clear();
        known.set(text, value);
      }
    }
    if (value !== undefined) (out as Record<string, unknown>)[name] = value;
  }
  if (problems.length === before) {
    if (known.size >= KNOWN_LIMIT) known.clear();
    known.set(whole, out);
  }
  return out;
}

function readField(
  name: (typeof FIELDS)[number],
  raw: unknown,
  r: Reader,
  ptr: string,
): Terms[typeof name] {
  if (name === 'hostSelector') return r.selector(raw, ptr);
  if (name === 'hardware') return r.hardware(raw, ptr);
  if (!Array.isArray(raw)) return undefined;
  const preferred: PreferredTerm[] = [];
  raw.forEach((t: unknown, i) => {
    if (!isRecord(t) || typeof t['weight'] !== 'number') return;
    const term: PreferredTerm = { weight: t['weight'] };
    if (t['hostSelector'] !== undefined)
      set(term, 'hostSelector', r.selector(t['hostSelector'], `${ptr}/${i}/hostSelector`));
    if (t['hardware'] !== undefined)
      set(term, 'hardware', r.hardware(t['hardware'], `${ptr}/${i}/hardware`));
    preferred.push(term);
  });
  return preferred.length ? preferred : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
