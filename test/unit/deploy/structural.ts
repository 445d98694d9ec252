/**
 * An independent check that a CRD's openAPIV3Schema is what the API server accepts as a
 * structural schema (apiextensions.k8s.io/v1), written from the Kubernetes rules rather than
 * from the generator, so the two can disagree.
 */
type Node = Record<string, unknown>;

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const SCALARS = new Set(['string', 'integer', 'number', 'boolean']);
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const INT_OR_STRING = 'x-kubernetes-int-or-string';

/** Keywords a node may carry, and the types they apply to (undefined: any). */
const KEYWORDS: Record<string, readonly string[] | undefined> = {
  description: undefined,
  title: undefined,
  type: undefined,
  nullable: undefined,
  enum: undefined,
  format: ['string', 'integer', 'number'],
  pattern: ['string'],
  minLength: ['string'],
  maxLength: ['string'],
  minimum: ['integer', 'number'],
  maximum: ['integer', 'number'],
  exclusiveMinimum: ['integer', 'number'],
  exclusiveMaximum: ['integer', 'number'],
  multipleOf: ['integer', 'number'],
  items: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
  'x-kubernetes-list-type': ['array'],
  'x-kubernetes-list-map-keys': ['array'],
  properties: ['object'],
  additionalProperties: ['object'],
  required: ['object'],
  minProperties: ['object'],
  maxProperties: ['object'],
  [PRESERVE]: undefined,
  [INT_OR_STRING]: undefined,
};

/** Named so a failure says why: JSON Schema that Kubernetes refuses or ignores. */
const FORBIDDEN = new Set([
  '$ref',
  '$schema',
  '$id',
  'id',
  '$defs',
  'definitions',
  'const',
  'if',
  'then',
  'else',
  'propertyNames',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'uniqueItems',
  'x-bpa-code',
  // Defaults would be written into stored objects; bpa's configuration owns them.
  'default',
]);

/** Every way `schema` (an openAPIV3Schema) is not structural; empty when it is. */
export function structuralProblems(schema: unknown): string[] {
  const problems: string[] = [];
  const root = check(schema, '', problems);
  if (root) {
    if (root.type !== 'object') problems.push('/: the root must be of type object');
    const meta = (root.properties as Node | undefined)?.metadata as Node | undefined;
    if (meta && Object.keys(meta).some((k) => k !== 'type')) {
      problems.push(
        '/properties/metadata: only type: object is allowed (the API server owns metadata)',
      );
    }
  }
  return problems;
}

function check(value: unknown, path: string, problems: string[]): Node | undefined {
  const at = path || '/';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${at}: a schema node must be an object`);
    return undefined;
  }
  const node = value as Node;
  const preserve = node[PRESERVE];
  const intOrString = node[INT_OR_STRING];
  if (preserve !== undefined && preserve !== true)
    problems.push(`${at}: ${PRESERVE} must be true when set`);
  if (intOrString !== undefined && intOrString !== true)
    problems.push(`${at}: ${INT_OR_STRING} must be true when set`);
  const type = node.type;
  if (type === undefined) {
    if (preserve !== true && intOrString !== true)
      problems.push(`${at}: no type (nor ${PRESERVE} / ${INT_OR_STRING})`);
  } else if (typeof type !== 'string' || !TYPES.has(type)) {
    problems.push(`${at}: type ${JSON.stringify(type)} is not one Kubernetes type`);
  }
  for (const [key, v] of Object.entries(node)) {
    if (FORBIDDEN.has(key)) {
      problems.push(`${at}: ${key} is not allowed in a CRD schema`);
      continue;
    }
    if (!(key in KEYWORDS)) {
      problems.push(`${at}: unknown keyword ${key}`);
      continue;
    }
    const appliesTo = KEYWORDS[key];
    if (appliesTo && (typeof type !== 'string' || !appliesTo.includes(type))) {
      problems.push(`${at}: ${key} on a node of type ${String(type)}`);
    }
    if (key === 'nullable' && typeof v !== 'boolean')
      problems.push(`${at}: nullable must be a boolean`);
    if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof v !== 'boolean') {
      problems.push(`${at}: ${key} must be a boolean in OpenAPI v3.0`);
    }
    if (key === 'pattern' && typeof v === 'string' && /\(\?[=!<]|\\[1-9]/.test(v)) {
      problems.push(`${at}: pattern uses look-around or back-references (not RE2)`);
    }
  }
  if (typeof type === 'string' && Array.isArray(node.enum)) {
    for (const option of node.enum) {
      if (!fits(option, type))
        problems.push(`${at}: enum value ${JSON.stringify(option)} is not a ${type}`);
    }
  }
  if (type === 'object') checkObject(node, path, problems);
  if (type === 'array') checkArray(node, path, problems);
  return node;
}

function checkObject(node: Node, path: string, problems: string[]): void {
  const at = path || '/';
  const props = node.properties;
  const extra = node.additionalProperties;
  if (props !== undefined && extra !== undefined) {
    problems.push(`${at}: properties and additionalProperties are mutually exclusive`);
  }
  if (extra !== undefined && (typeof extra !== 'object' || extra === null)) {
    problems.push(`${at}: additionalProperties must be a schema`);
  }
  if (typeof extra === 'object' && extra !== null)
    check(extra, `${path}/additionalProperties`, problems);
  const names: string[] = [];
  if (props !== undefined) {
    if (typeof props !== 'object' || props === null || Array.isArray(props)) {
      problems.push(`${at}: properties must be a map`);
    } else {
      for (const [name, child] of Object.entries(props)) {
        names.push(name);
        check(child, `${path}/properties/${name}`, problems);
      }
    }
  }
  if (node.required !== undefined) {
    if (!Array.isArray(node.required)) problems.push(`${at}: required must be a list`);
    else
      for (const r of node.required)
        if (!names.includes(String(r))) problems.push(`${at}: required ${String(r)} has no schema`);
  }
}

function checkArray(node: Node, path: string, problems: string[]): void {
  const at = path || '/';
  const items = node.items;
  if (items === undefined) {
    problems.push(`${at}: an array needs items`);
    return;
  }
  if (Array.isArray(items)) {
    problems.push(`${at}: items must be one schema`);
    return;
  }
  const child = check(items, `${path}/items`, problems);
  const listType = node['x-kubernetes-list-type'];
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(String(listType))) {
    problems.push(`${at}: x-kubernetes-list-type ${String(listType)}`);
  }
  if (
    listType === 'set' &&
    child &&
    (typeof child.type !== 'string' || !SCALARS.has(child.type) || child.nullable === true)
  ) {
    problems.push(`${at}: a set list needs non-nullable scalar items`);
  }
  // A map list's keys must be required scalar fields of its items (the API server's rule).
  const keys = node['x-kubernetes-list-map-keys'];
  if ((listType === 'map') !== (keys !== undefined)) {
    problems.push(`${at}: x-kubernetes-list-map-keys goes with x-kubernetes-list-type: map`);
  } else if (listType === 'map') {
    const required = Array.isArray(child?.required) ? child.required : [];
    const props = (child?.properties ?? {}) as Record<string, { type?: unknown }>;
    for (const k of Array.isArray(keys) ? keys : [])
      if (!required.includes(k) || !SCALARS.has(String(props[k]?.type)))
        problems.push(`${at}: map key ${String(k)} must be a required scalar field of the items`);
  }
}

function fits(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return typeof value === 'object' && value !== null;
  }
}
