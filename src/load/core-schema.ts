import type { Schema } from 'js-yaml-4';
import { jsYaml4 } from './yaml-libs.js';

/**
 * The YAML 1.2 core schema for js-yaml 4: plain scalars resolve to the same values as with
 * js-yaml 5's `CORE_SCHEMA.withTags(mergeTag)` (the reference, which reports errors and
 * positions), written from its rules, because js-yaml 4's own core schema is looser (it reads
 * `0b101`, `-0x1f` and `+0o7` as integers, and `-.5` as a string).
 * `test/unit/load/semantics.test.ts` compares the two over many forms.
 *
 * Only implicit resolution is needed: files with tags (`!`) or merge keys (`<<`) are read by
 * js-yaml 5 (`usesRareFeatures`). One type resolves null, booleans, integers and floats,
 * dispatching on the first character, because js-yaml 4 tries every implicit type in turn on
 * every plain scalar, and most scalars of a site are words.
 */

const INT = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?[0-9]+)$/;
const FLOAT =
  /^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** No value: the scalar is a string. */
const STRING = Symbol('string');

/** The value of a plain scalar under the core schema, or STRING. Exported for tests. */
export function resolvePlain(s: string): unknown {
  const c = s.charCodeAt(0);
  switch (c) {
    case 0x7e: // ~
      return s === '~' ? null : STRING;
    case 0x6e: // n
    case 0x4e: // N
      return s === 'null' || s === 'Null' || s === 'NULL' ? null : STRING;
    case 0x74: // t
    case 0x54: // T
      return s === 'true' || s === 'True' || s === 'TRUE' ? true : STRING;
    case 0x66: // f
    case 0x46: // F
      return s === 'false' || s === 'False' || s === 'FALSE' ? false : STRING;
    default:
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e) return number(s);
      return STRING;
  }
}

function number(s: string): unknown {
  // Most numbers of a site are short unsigned decimals (cpu, memory, sizes): read those
  // without a regular expression. Longer ones may round, and parseInt rounds them the same.
  if (s.length > 0 && s.length <= 15) {
    let n = 0;
    let i = 0;
    for (; i < s.length; i++) {
      const d = s.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (i === s.length) return n;
  }
  if (INT.test(s)) {
    const n = parseInteger(s);
    if (Number.isFinite(n)) return n;
  }
  if (FLOAT.test(s)) {
    const n = parseFloatValue(s);
    if (Number.isFinite(n) || /^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$/.test(s)) return n;
  }
  return STRING;
}

function parseInteger(source: string): number {
  let value = source;
  let sign = 1;
  if (value[0] === '-' || value[0] === '+') {
    if (value[0] === '-') sign = -1;
    value = value.slice(1);
  }
  if (value.startsWith('0o')) return sign * parseInt(value.slice(2), 8);
  if (value.startsWith('0x')) return sign * parseInt(value.slice(2), 16);
  return sign * parseInt(value, 10);
}

function parseFloatValue(source: string): number {
  let value = source.toLowerCase();
  const sign = value[0] === '-' ? -1 : 1;
  if (value[0] === '-' || value[0] === '+') value = value.slice(1);
  if (value === '.inf') return sign * Infinity;
  if (value === '.nan') return NaN;
  return sign * parseFloat(value);
}

// js-yaml 4 calls resolve(data) and, when it answers true, construct(data) at once: the
// value found by resolve is kept for construct instead of being parsed twice.
let resolved: unknown;

let fastSchema: Schema | undefined;

/** js-yaml 4's schema for site files, made when js-yaml 4 is first needed (yaml-libs.ts). */
export function fastSchema4(): Schema {
  if (fastSchema) return fastSchema;
  const { FAILSAFE_SCHEMA, Type } = jsYaml4();
  const coreScalar = new Type('tag:yaml.org,2002:core-scalar', {
    kind: 'scalar',
    resolve: (data) => {
      if (typeof data !== 'string') return false;
      resolved = resolvePlain(data);
      return resolved !== STRING;
    },
    construct: () => resolved,
  });
  return (fastSchema = FAILSAFE_SCHEMA.extend({ implicit: [coreScalar] }));
}
