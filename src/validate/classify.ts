/**
 * Which documents bpa reads. A site (or an inventory directory) is written by people and by
 * tools bpa did not write: metal3's examples put the BMC Secret beside the BareMetalHost,
 * `kubectl get bmh -o yaml` gives a `List`, a Cluster API repository holds Machines. bpa's own
 * kinds and metal3 hosts are read; every other Kubernetes kind is skipped with a notice and
 * never read further (a Secret's data goes nowhere).
 */
import type { LoadedDocument } from '../load/index.js';
import { error, notice, pointer, warning, type Problem } from '../util/problem.js';
import { BPA_GROUP, KINDS, isKindName, type KindName } from './kinds.js';
import { distance } from './schema.js';

/** A document whose kind is known and whose shape passed its schema. */
export interface KindedDocument {
  kind: KindName;
  file: string;
  doc: number;
  /** Pointer of the object inside its YAML document: `/items/3` in a List, else empty. */
  base?: string;
  /** Whether the document passed its schema (only those feed the model). */
  valid: boolean;
  value: Record<string, unknown>;
}

/** Who reads: the site (every kind) or an inventory directory (metal3 objects only). */
export type Reader = 'site' | 'inventory';

const METAL3_KINDS: ReadonlySet<string> = new Set<KindName>(['BareMetalHost', 'HardwareData']);

/** Classifies one YAML document: the objects bpa reads from it, problems for the rest. */
export function classify(d: LoadedDocument, problems: Problem[], reader: Reader): KindedDocument[] {
  const where = { file: d.file, doc: d.index };
  const value = d.value;
  if (!isMapping(value)) {
    problems.push(
      error('NOT_A_MAPPING', 'a site document must be a mapping with apiVersion and kind', {
        ...where,
        pointer: '',
      }),
    );
    return [];
  }
  const items = listItems(value);
  if (items === undefined) {
    const one = classifyObject(value, '', where, problems, reader);
    return one ? [one] : [];
  }
  const out: KindedDocument[] = [];
  items.forEach((item, i) => {
    const base = pointer('items', i);
    if (!isMapping(item)) {
      problems.push(
        error('NOT_A_MAPPING', 'an item of a List must be a mapping with apiVersion and kind', {
          ...where,
          pointer: base,
        }),
      );
      return;
    }
    const one = classifyObject(withListDefaults(item, value), base, where, problems, reader);
    if (one) out.push(one);
  });
  return out;
}

/**
 * The items of a `kind: List` (what `kubectl get -o yaml` prints) or of a typed list such as
 * `BareMetalHostList` (the API's own list form); undefined when `value` is not a list.
 */
function listItems(value: Record<string, unknown>): unknown[] | undefined {
  const { kind, items } = value;
  if (typeof kind !== 'string' || !kind.endsWith('List') || !Array.isArray(items)) return undefined;
  return items;
}

/** Items of a typed list may leave out apiVersion and kind: they are the list's. */
function withListDefaults(
  item: Record<string, unknown>,
  list: Record<string, unknown>,
): Record<string, unknown> {
  const kind = String(list['kind']);
  if (kind === 'List' || (item['kind'] !== undefined && item['apiVersion'] !== undefined))
    return item;
  return { apiVersion: list['apiVersion'], kind: kind.slice(0, -'List'.length), ...item };
}

function classifyObject(
  value: Record<string, unknown>,
  base: string,
  where: { file: string; doc: number },
  problems: Problem[],
  reader: Reader,
): KindedDocument | undefined {
  const at = (ptr: string): Partial<Problem> => ({ ...where, pointer: base + ptr });
  const { apiVersion, kind } = value;
  if (kind === undefined || apiVersion === undefined) {
    const missing = kind === undefined ? 'kind' : 'apiVersion';
    problems.push(error('MISSING_FIELD', `${missing}: required field is missing`, at('')));
    return undefined;
  }
  if (
    typeof kind === 'string' &&
    typeof apiVersion === 'string' &&
    !claimsBpaKind(kind, apiVersion)
  ) {
    const why = skipped(kind, apiVersion, value, at, reader);
    if (why) problems.push(why);
    return undefined;
  }
  if (!isKindName(kind)) {
    problems.push(
      error(
        'UNKNOWN_KIND',
        `kind ${JSON.stringify(kind)} is not one bpa reads (${Object.keys(KINDS).join(', ')})`,
        at('/kind'),
      ),
    );
    return undefined;
  }
  if (apiVersion !== KINDS[kind].apiVersion) {
    problems.push(
      error(
        'UNKNOWN_KIND',
        `apiVersion ${JSON.stringify(apiVersion)} is not known for kind ${kind}; use ${KINDS[kind].apiVersion}`,
        at('/apiVersion'),
      ),
    );
    return undefined;
  }
  if (base !== '' && !METAL3_KINDS.has(kind)) {
    problems.push(
      error(
        'UNSUPPORTED_LIST_ITEM',
        `a ${kind} inside a List is not read: write it as a YAML document of its own`,
        at('/kind'),
      ),
    );
    return undefined;
  }
  if (reader === 'inventory' && !METAL3_KINDS.has(kind)) {
    problems.push(
      notice(
        'OTHER_KIND_SKIPPED',
        `${kind} ${nameOf(value)} is not read from an inventory directory (only BareMetalHost and HardwareData are); skipped`,
        at('/kind'),
      ),
    );
    return undefined;
  }
  return { kind, file: where.file, doc: where.doc, base, valid: false, value };
}

/** Answers by apiVersion, then kind: a site repeats a handful of pairs thousands of times. */
const claims = new Map<string, Map<string, boolean>>();

/**
 * Whether a document means to be one of bpa's kinds: anything in bpa's API group (or a group
 * close enough to be a typo of it), and a BareMetalHost or HardwareData of any group, so that
 * a host is never skipped quietly for an old or misspelt apiVersion. Other groups may use the
 * same kind names (Cluster API's Cluster, OpenShift's metal3.io Provisioning): those are not
 * bpa's.
 */
function claimsBpaKind(kind: string, apiVersion: string): boolean {
  let byKind = claims.get(apiVersion);
  if (!byKind) {
    if (claims.size > 1000) claims.clear(); // a hostile site's many made-up versions
    claims.set(apiVersion, (byKind = new Map()));
  }
  let claimed = byKind.get(kind);
  if (claimed === undefined) {
    if (byKind.size > 1000) byKind.clear();
    byKind.set(kind, (claimed = decideClaim(kind, apiVersion)));
  }
  return claimed;
}

function decideClaim(kind: string, apiVersion: string): boolean {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash === -1 ? '' : apiVersion.slice(0, slash);
  if (group === BPA_GROUP || METAL3_KINDS.has(kind)) return true;
  return isKindName(kind) && (group.includes('akraino') || distance(group, BPA_GROUP) <= 3);
}

function skipped(
  kind: string,
  apiVersion: string,
  value: Record<string, unknown>,
  at: (ptr: string) => Partial<Problem>,
  reader: Reader,
): Problem | undefined {
  if (reader === 'site' && kind === 'Secret' && apiVersion === 'v1') {
    // Encrypted with SOPS: a site secret, checked by validate/secrets.ts.
    if (value['sops'] !== undefined) return undefined;
    const keys = [...dataKeys(value['data']), ...dataKeys(value['stringData'])];
    if (keys.length) {
      return warning(
        'SECRET_IN_SITE',
        `Secret ${nameOf(value)} holds data (${keys.join(', ')}): secret material in the site repository. Keep credentials out of git: create the Secret in the cluster, bpa refers to it by name`,
        at(isMapping(value['data']) && Object.keys(value['data']).length ? '/data' : '/stringData'),
      );
    }
  }
  return notice(
    'OTHER_KIND_SKIPPED',
    `${kind} ${nameOf(value)} (${apiVersion}) is not a kind bpa reads; skipped`,
    at('/kind'),
  );
}

/** Keys of a Secret's data with a value (the values themselves are never looked at again). */
function dataKeys(data: unknown): string[] {
  if (!isMapping(data)) return [];
  return Object.entries(data)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k]) => k);
}

function nameOf(value: Record<string, unknown>): string {
  const m = value['metadata'];
  const name = isMapping(m) && typeof m['name'] === 'string' ? m['name'] : undefined;
  return name === undefined ? '(no name)' : JSON.stringify(name);
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
