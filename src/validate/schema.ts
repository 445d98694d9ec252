import type { ErrorObject, ValidateFunction } from 'ajv';
import { error, pointer, type Problem } from '../util/problem.js';
import * as compiledSchemas from './compiled-schemas.js';
import { KINDS, type KindName } from './kinds.js';

export interface SchemaValidator {
  /** Schema problems of one document of a known kind, with pointers (no positions yet). */
  check(kind: KindName, value: unknown, where: { file: string; doc: number }): Problem[];
}

/** Schema problems of a classified object, with pointers from the root of its YAML document. */
export function checkSchema(
  validator: SchemaValidator,
  d: { kind: KindName; file: string; doc: number; base?: string; value: unknown },
): Problem[] {
  const found = validator.check(d.kind, d.value, { file: d.file, doc: d.doc });
  if (!d.base) return found;
  return found.map((p) => ({ ...p, pointer: d.base + (p.pointer ?? '') }));
}

let shared: SchemaValidator | undefined;

/**
 * The validator for the schemas shipped with bpa: ajv's standalone code generated from
 * schemas/ at development time (scripts/gen-schema-code.ts), so no run loads ajv's compiler.
 */
export function schemaValidator(): SchemaValidator {
  shared ??= createSchemaValidator(
    compiledSchemas as unknown as Record<string, ValidateFunction | undefined>,
  );
  return shared;
}

/** A validator over compiled schemas, each exported under its file name without `.schema.json`. */
export function createSchemaValidator(
  compiled: Record<string, ValidateFunction | undefined>,
): SchemaValidator {
  const byKind = new Map<KindName, ValidateFunction>();
  const validatorFor = (kind: KindName): ValidateFunction => {
    let fn = byKind.get(kind);
    if (!fn) {
      fn = compiled[KINDS[kind].schema.replace(/\.schema\.json$/, '')];
      if (!fn) throw new Error(`schema ${KINDS[kind].schema} has no compiled validator`);
      byKind.set(kind, fn);
    }
    return fn;
  };
  return {
    check(kind, value, where) {
      const fn = validatorFor(kind);
      if (fn(value)) return [];
      return (fn.errors ?? []).filter(relevant).map((e) => toProblem(e, where));
    },
  };
}

/** `if` and `propertyNames` errors only summarise errors ajv reports separately. */
function relevant(e: ErrorObject): boolean {
  return e.keyword !== 'if' && e.keyword !== 'propertyNames';
}

function toProblem(e: ErrorObject, where: { file: string; doc: number }): Problem {
  const at = { ...where, pointer: e.instancePath };
  const field = fieldName(e.instancePath);
  switch (e.keyword) {
    case 'required': {
      const missing = String((e.params as { missingProperty?: unknown }).missingProperty);
      return error(
        'MISSING_FIELD',
        `${join(e.instancePath, missing)}: required field is missing`,
        at,
      );
    }
    case 'additionalProperties': {
      const extra = String((e.params as { additionalProperty?: unknown }).additionalProperty);
      return error(
        'UNKNOWN_FIELD',
        `${join(e.instancePath, extra)}: unknown field${suggest(extra, e.schema, e.parentSchema)}`,
        { ...at, pointer: e.instancePath + pointer(extra) },
      );
    }
    case 'type':
      // A field with its own code (cpu, memory, …) reports it: it names what to fix.
      return error(
        codeOf(e.parentSchema) ?? 'WRONG_TYPE',
        `${field}: must be ${article(String((e.params as { type?: unknown }).type))}, not ${describe(e.data)}`,
        at,
      );
  }
  const code = codeOf(e.parentSchema) ?? 'INVALID_VALUE';
  return error(code, `${field}: ${explain(e)}`, at);
}

function codeOf(schema: unknown): string | undefined {
  const code = (schema as Record<string, unknown> | undefined)?.['x-bpa-code'];
  return typeof code === 'string' ? code : undefined;
}

function explain(e: ErrorObject): string {
  const value = describe(e.data);
  const desc = (e.parentSchema as { description?: unknown } | undefined)?.description;
  switch (e.keyword) {
    case 'pattern':
    case 'format':
      return `${value} is not valid${typeof desc === 'string' ? ` (${firstSentence(desc)})` : ''}`;
    case 'enum':
      return `${value} is not one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}, not ${value}`;
    case 'minProperties':
    case 'maxProperties':
      return `${value} ${e.message ?? 'has the wrong number of fields'}`;
    case 'not':
      return `${value} is not allowed here${typeof desc === 'string' ? ` (${firstSentence(desc)})` : ''}`;
    default:
      return `${value} ${e.message ?? 'is not valid'}`;
  }
}

function firstSentence(text: string): string {
  const dot = text.indexOf('. ');
  return (dot === -1 ? text : text.slice(0, dot)).replace(/\.$/, '');
}

/** The last segment of a pointer, or `(document)` for the root. */
function fieldName(ptr: string): string {
  return ptr === '' ? '(document)' : ptr.slice(1).replace(/\//g, '.');
}

function join(ptr: string, key: string): string {
  return ptr === '' ? key : `${fieldName(ptr)}.${key}`;
}

function article(type: string): string {
  const t = type.split(',').join(' or ');
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/** A short, safe rendering of a value for messages (long values are cut). */
export function describe(v: unknown): string {
  if (v === null || v === undefined) return 'empty';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
}

/** "did you mean" for a typo of a known field. */
function suggest(extra: string, _schema: unknown, parentSchema: unknown): string {
  const props = (parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props) return '';
  let best: string | undefined;
  let bestDist = 3;
  for (const known of Object.keys(props)) {
    const d = distance(extra.toLowerCase(), known.toLowerCase());
    if (d < bestDist) {
      best = known;
      bestDist = d;
    }
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

/** Levenshtein distance, for "did you mean" hints. */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}
