import { FAILSAFE_SCHEMA, Type, type Schema } from 'js-yaml-4';

/**
 * The YAML 1.2 core schema plus the YAML 1.1 merge key, for js-yaml 4: the same scalars as
 * js-yaml 5's `CORE_SCHEMA.withTags(mergeTag)` (which reports errors and positions), written
 * from its rules, because js-yaml 4's own core schema is looser (it reads `0b101`, `-0x1f` and
 * `+0o7` as integers, and `-.5` as a string). `test/unit/load/semantics.test.ts` compares the
 * two over many forms.
 */

const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const TRUES = new Set(['true', 'True', 'TRUE']);
const FALSES = new Set(['false', 'False', 'FALSE']);
const INT_IMPLICIT = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?[0-9]+)$/;
const INT_EXPLICIT = /^(?:[-+]?0b[0-1]+|[-+]?0o[0-7]+|[-+]?0x[0-9a-fA-F]+|[-+]?[0-9]+)$/;
const FLOAT =
  /^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** Characters a plain scalar must start with to be a number: a cheap first test. */
function mayBeNumber(s: string): boolean {
  const c = s.charCodeAt(0);
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e; // 0-9 - + .
}

function parseInteger(source: string): number {
  let value = source;
  let sign = 1;
  if (value[0] === '-' || value[0] === '+') {
    if (value[0] === '-') sign = -1;
    value = value.slice(1);
  }
  if (value.startsWith('0b')) return sign * parseInt(value.slice(2), 2);
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

// js-yaml 4 calls resolve(data) for a plain scalar, resolve(data, tag) for an explicit tag,
// and resolve(null, tag) for an explicitly tagged empty node.
const nullType = new Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (data) => data === null || (typeof data === 'string' && NULLS.has(data)),
  construct: () => null,
});

const boolType = new Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (data) => typeof data === 'string' && (TRUES.has(data) || FALSES.has(data)),
  construct: (data) => TRUES.has(data as string),
});

const intType = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (data, tag) => {
    if (typeof data !== 'string' || data === '') return false;
    if (
      tag === undefined ? !mayBeNumber(data) || !INT_IMPLICIT.test(data) : !INT_EXPLICIT.test(data)
    )
      return false;
    return Number.isFinite(parseInteger(data));
  },
  construct: (data) => parseInteger(data as string),
});

const floatType = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (data) => {
    if (typeof data !== 'string' || data === '' || !mayBeNumber(data) || !FLOAT.test(data))
      return false;
    return Number.isFinite(parseFloatValue(data)) || FLOAT_SPECIAL.test(data);
  },
  construct: (data) => parseFloatValue(data as string),
});

const mergeType = new Type('tag:yaml.org,2002:merge', {
  kind: 'scalar',
  resolve: (data, tag) => data === '<<' || (tag !== undefined && (data === null || data === '')),
  construct: () => '<<',
});

export const FAST_SCHEMA: Schema = FAILSAFE_SCHEMA.extend({
  implicit: [nullType, boolType, intType, floatType, mergeType],
});
