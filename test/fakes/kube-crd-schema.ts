// What the API server does with a custom resource and the structural schema of its CRD
// (apiextensions-apiserver) before it stores a create, update or patch, in its order:
// unknown fields are pruned (an error instead with `fieldValidation=Strict`), nulls the schema
// does not allow are dropped (PruneNonNullableNullsWithoutDefaults), then the object is
// validated. Enough of OpenAPI v3 for bpa's CRDs and metal3's; CEL rules are not evaluated.

export interface CrdSchema {
  type?: string;
  nullable?: boolean;
  properties?: Record<string, CrdSchema>;
  additionalProperties?: CrdSchema | boolean;
  items?: CrdSchema;
  required?: string[];
  minProperties?: number;
  maxProperties?: number;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minItems?: number;
  maxItems?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  [keyword: string]: unknown;
}

/** One entry of a Status `details.causes`, and the text the server joins into its message. */
export interface FieldError {
  reason:
    'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueDuplicate';
  field: string;
  /** The cause's message, e.g. `Required value`. */
  message: string;
}

/** The text of a field error as the API server prints it: `spec.x: Required value`. */
export function fieldErrorText(e: FieldError): string {
  return `${e.field}: ${e.message}`;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function child(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** The fields of the root the schema does not govern: ObjectMeta has its own rules. */
const ROOT_KEPT = new Set(['apiVersion', 'kind', 'metadata']);

/** Removes fields the schema does not declare; returns their paths (for strict validation). */
export function pruneUnknownFields(obj: Record<string, unknown>, schema: CrdSchema): string[] {
  const pruned: string[] = [];
  pruneObject(obj, schema, '', pruned, true);
  return pruned;
}

function pruneValue(
  value: unknown,
  schema: CrdSchema | undefined,
  path: string,
  out: string[],
): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => pruneValue(item, schema.items, `${path}[${i}]`, out));
  } else if (isObject(value)) {
    pruneObject(value, schema, path, out, false);
  }
}

function pruneObject(
  obj: Record<string, unknown>,
  schema: CrdSchema,
  path: string,
  out: string[],
  root: boolean,
): void {
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  for (const key of Object.keys(obj)) {
    if (root && ROOT_KEPT.has(key)) continue;
    const declared = schema.properties?.[key] ?? extra;
    if (declared) pruneValue(obj[key], declared, child(path, key), out);
    else if (!preserve && schema.additionalProperties !== true) {
      delete obj[key];
      out.push(child(path, key));
    }
  }
}

/** Drops `key: null` where the key's schema is not nullable (it has no default in bpa's CRDs). */
export function pruneNonNullableNulls(value: unknown, schema: CrdSchema | undefined): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) pruneNonNullableNulls(item, schema.items);
    return;
  }
  if (!isObject(value)) return;
  const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  for (const [key, v] of Object.entries(value)) {
    const s = schema.properties?.[key] ?? extra;
    if (!s) continue;
    if (v === null && s.nullable !== true && s.default === undefined) delete value[key];
    else pruneNonNullableNulls(v, s);
  }
}

/** Every violation of the schema, as the API server reports them. */
export function validateAgainstSchema(
  obj: Record<string, unknown>,
  schema: CrdSchema,
): FieldError[] {
  const errors: FieldError[] = [];
  const rootSchema: CrdSchema = { ...schema, properties: { ...schema.properties } };
  // ObjectMeta is validated by its own rules, not by the schema.
  delete rootSchema.properties?.metadata;
  check(obj as Json, rootSchema, '', errors);
  return errors;
}

function describeValue(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

function typeOf(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function invalid(errors: FieldError[], path: string, value: unknown, text: string): void {
  errors.push({
    reason: 'FieldValueInvalid',
    field: path,
    message: `Invalid value: ${describeValue(value)}: ${path} in body ${text}`,
  });
}

function typeMatches(value: Json, schema: CrdSchema): boolean {
  if (schema['x-kubernetes-int-or-string'] === true)
    return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
  const actual = typeOf(value);
  switch (schema.type) {
    case undefined:
      return true;
    case 'number':
      return actual === 'number' || actual === 'integer';
    default:
      return actual === schema.type;
  }
}

function check(value: Json, schema: CrdSchema, path: string, errors: FieldError[]): void {
  const where = path || '<root>';
  if (value === null) {
    if (schema.nullable === true || schema.type === undefined) return;
    errors.push({
      reason: 'FieldValueInvalid',
      field: where,
      message: `Invalid value: "null": ${where} in body must be of type ${schema.type}: "null"`,
    });
    return;
  }
  if (!typeMatches(value, schema)) {
    const actual = typeOf(value);
    const want = schema['x-kubernetes-int-or-string'] === true ? 'integer,string' : schema.type;
    errors.push({
      reason: 'FieldValueInvalid',
      field: where,
      message: `Invalid value: "${actual}": ${where} in body must be of type ${want}: "${actual}"`,
    });
    return;
  }
  if (schema.enum && !schema.enum.some((e) => describeValue(e) === describeValue(value))) {
    errors.push({
      reason: 'FieldValueNotSupported',
      field: where,
      message: `Unsupported value: ${describeValue(value)}: supported values: ${schema.enum.map(describeValue).join(', ')}`,
    });
  }
  if (typeof value === 'string') checkString(value, schema, where, errors);
  else if (typeof value === 'number') checkNumber(value, schema, where, errors);
  else if (Array.isArray(value)) checkArray(value, schema, where, errors);
  else if (isObject(value)) checkObject(value, schema, path, errors);
}

function checkString(value: string, schema: CrdSchema, path: string, errors: FieldError[]): void {
  // The server counts characters (runes), not UTF-16 code units.
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength)
    invalid(errors, path, value, `should be at least ${schema.minLength} chars long`);
  if (schema.maxLength !== undefined && length > schema.maxLength)
    invalid(errors, path, value, `should be at most ${schema.maxLength} chars long`);
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
    invalid(errors, path, value, `should match '${schema.pattern}'`);
}

function checkNumber(value: number, schema: CrdSchema, path: string, errors: FieldError[]): void {
  if (schema.minimum !== undefined) {
    const low = schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum;
    if (low)
      invalid(
        errors,
        path,
        value,
        `should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
      );
  }
  if (schema.maximum !== undefined) {
    const high = schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum;
    if (high)
      invalid(
        errors,
        path,
        value,
        `should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
      );
  }
}

function checkArray(value: Json[], schema: CrdSchema, path: string, errors: FieldError[]): void {
  if (schema.minItems !== undefined && value.length < schema.minItems)
    invalid(errors, path, value.length, `should have at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    invalid(errors, path, value.length, `should have at most ${schema.maxItems} items`);
  if (schema['x-kubernetes-list-type'] === 'set') {
    const seen = new Set<string>();
    value.forEach((item, i) => {
      const key = describeValue(item);
      if (seen.has(key)) {
        errors.push({
          reason: 'FieldValueDuplicate',
          field: `${path}[${i}]`,
          message: `Duplicate value: ${key}`,
        });
      }
      seen.add(key);
    });
  }
  if (schema.items) {
    const items = schema.items;
    value.forEach((item, i) => check(item, items, `${path}[${i}]`, errors));
  }
}

function checkObject(
  value: { [key: string]: Json },
  schema: CrdSchema,
  path: string,
  errors: FieldError[],
): void {
  const where = path || '<root>';
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties)
    invalid(errors, where, count, `should have at least ${schema.minProperties} properties`);
  if (schema.maxProperties !== undefined && count > schema.maxProperties)
    invalid(errors, where, count, `should have at most ${schema.maxProperties} properties`);
  for (const key of schema.required ?? []) {
    if (!(key in value))
      errors.push({
        reason: 'FieldValueRequired',
        field: child(path, key),
        message: 'Required value',
      });
  }
  const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  for (const [key, v] of Object.entries(value)) {
    const s = schema.properties?.[key] ?? extra;
    if (s) check(v, s, child(path, key), errors);
  }
}
