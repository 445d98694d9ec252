/**
 * The embedded inventory: BareMetalHost and HardwareData documents, from the site or from an
 * inventory directory. In the site they are reviewed input, and a problem is an error like
 * any other. An inventory directory stands for the cluster (`--inventory DIR`): one bad
 * document must never empty it, so bad documents are left out with a warning that names
 * file, line and cause, and the other hosts are used.
 */
import type { LoadedSite } from '../load/index.js';
import { isGroupMac, isNullMac, normalizeMac } from '../util/mac.js';
import { error, pointer, warning, type Problem } from '../util/problem.js';
import { classify, type KindedDocument, type Reader } from './classify.js';
import type { InventoryDocument } from './model.js';
import { checkSchema, schemaValidator, type SchemaValidator } from './schema.js';
import { word } from '../util/pluralize.js';
import { keepsDerived, ObjectMemo } from '../util/memo.js';

export interface InventoryValidation {
  /** The hosts and hardware that can be read; never emptied by a problem elsewhere. */
  inventory: InventoryDocument[];
  /** Warnings (left-out documents, hosts bpa reads nothing from) and notices. */
  problems: Problem[];
}

/** Reads an inventory directory's documents: every usable host, and why others were left out. */
export function validateInventory(
  site: Pick<LoadedSite, 'documents' | 'problems'>,
  validator: SchemaValidator = schemaValidator(),
): InventoryValidation {
  const problems: Problem[] = site.problems.map((p) =>
    leftOut(p, p.doc === undefined ? 'file' : 'document'),
  );
  const docs: KindedDocument[] = [];
  for (const d of site.documents) {
    const found: Problem[] = [];
    const kinded = classify(d, found, 'inventory');
    problems.push(...found.map((p) => leftOut(p, 'document')));
    for (const k of kinded) {
      const schemaProblems = checkSchema(validator, k);
      if (schemaProblems.length) {
        problems.push(...schemaProblems.map((p) => leftOut(p, describe(k))));
        continue;
      }
      k.valid = true;
      docs.push(k);
    }
  }
  return { inventory: buildInventory(docs, problems, 'inventory'), problems };
}

/** An error that made bpa leave something out of an inventory directory, as a warning. */
function leftOut(p: Problem, what: string): Problem {
  if (p.severity !== 'error') return p;
  return warning(
    'INVENTORY_SKIPPED',
    `${what} left out of the inventory: ${p.message} (${p.code})`,
    {
      file: p.file,
      line: p.line,
      column: p.column,
      doc: p.doc,
      pointer: p.pointer,
    },
  );
}

/**
 * Inventory documents from classified, schema-checked documents, with the rules that span
 * them: one MAC names one host (DUPLICATE_HOST_MAC), and a host bpa can read nothing from is
 * worth a word (NO_HOST_DATA). In an inventory directory, a repeated name or MAC leaves the
 * later document out. Site-wide name checks are the caller's in the site.
 */
export function buildInventory(
  docs: readonly KindedDocument[],
  problems: Problem[],
  reader: Reader,
): InventoryDocument[] {
  const metal3 = docs.filter((d) => d.kind === 'BareMetalHost' || d.kind === 'HardwareData');
  if (reader === 'site') {
    const patched = lastSite && patchSiteInventory(metal3, lastSite);
    if (patched) {
      for (const p of patched.problems) problems.push({ ...p });
      return [...patched.out];
    }
  }
  const kept = reader === 'inventory' ? firstOfEachName(metal3, problems) : metal3;
  const hardwareData = new Map<string, KindedDocument>();
  for (const d of kept) {
    if (d.kind === 'HardwareData' && d.valid && !hardwareData.has(keyOf(d)))
      hardwareData.set(keyOf(d), d);
  }
  const out: InventoryDocument[] = [];
  const own: Problem[] = [];
  /** Per document of `kept`: its identity MACs when it is a valid host; whether it had a problem. */
  const macsAt: Array<string[] | undefined> = [];
  const troubled = new Set<number>();
  const macOwner = new Map<string, string>();
  kept.forEach((d, i) => {
    const before = own.length;
    const entry = hostEntry(d, i);
    if (entry) out.push(entry);
    if (own.length > before) troubled.add(i);
  });
  /** The document's entry; undefined when an inventory directory leaves it out. */
  function hostEntry(d: KindedDocument, i: number): InventoryDocument | undefined {
    macsAt.push(undefined);
    // Described once: in a one-shot command the memo keeps nothing (util/memo.ts).
    const { key: host, entry } = described(d);
    if (d.kind === 'HardwareData') {
      if (d.valid) checkHardwareData(d, own);
      return entry;
    }
    if (!d.valid) return entry;
    const hwDoc = hardwareData.get(host);
    const { macs, unusable } = identityMacs(d, hwDoc);
    // Observed data is not corrected by hand: a word, not an error, and the host stays.
    if (reader === 'site') for (const m of unusable) own.push(unusableMac(host, m, hwDoc));
    const texts: string[] = [];
    let clashes = 0;
    for (const m of macs) {
      texts.push(m.mac);
      const owner = macOwner.get(m.mac);
      if (owner === undefined) continue;
      clashes++;
      const message = `MAC ${m.mac} of BareMetalHost "${host}" is also a MAC of BareMetalHost "${owner}"`;
      const where = { file: m.doc.file, doc: m.doc.doc, pointer: macPointer(m, hwDoc) };
      own.push(
        reader === 'site'
          ? error('DUPLICATE_HOST_MAC', message, where)
          : leftOut(error('DUPLICATE_HOST_MAC', message, where), describe(d)),
      );
    }
    macsAt[i] = texts;
    if (reader === 'inventory' && clashes) return undefined;
    for (const m of macs) if (!macOwner.has(m.mac)) macOwner.set(m.mac, host);
    if (macs.length === 0 && !hasHardware(hardwareOf(d, hwDoc))) noHostData(d, own);
    return entry;
  }
  problems.push(...own);
  // A full build is kept for the next one only where there is one (util/memo.ts): in a
  // one-shot command it would only outlive its use, for the garbage collector to move.
  if (reader === 'site' && keepsDerived()) {
    lastSite = {
      docs: metal3,
      out,
      problems: own.map((p) => ({ ...p })),
      macsAt,
      troubled,
      hardwareData,
    };
  }
  return [...out];
}

/**
 * The site's inventory as last built (`bpa serve` builds it at every reconcile), with what
 * is needed to tell whether a new list of documents gives the same result.
 */
let lastSite:
  | {
      docs: readonly KindedDocument[];
      out: readonly InventoryDocument[];
      /** Its problems as found, before positions are added to them. */
      problems: readonly Problem[];
      macsAt: ReadonlyArray<string[] | undefined>;
      troubled: ReadonlySet<number>;
      hardwareData: ReadonlyMap<string, KindedDocument>;
    }
  | undefined;

/**
 * The last site inventory with a few hosts' documents replaced, when that is all that changed:
 * each new document a valid BareMetalHost in the place of one of the same name and the same
 * identity MACs (some), whose predecessor had no problem. The MAC owners, every clash and
 * every other problem are then what they were; only the entries of those hosts are new.
 */
function patchSiteInventory(
  docs: readonly KindedDocument[],
  last: NonNullable<typeof lastSite>,
): { out: InventoryDocument[]; problems: readonly Problem[] } | undefined {
  if (docs.length !== last.docs.length) return undefined;
  let out: InventoryDocument[] | undefined;
  let macsAt: Array<string[] | undefined> | undefined;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i] as KindedDocument;
    const was = last.docs[i] as KindedDocument;
    if (d === was) continue;
    const macs = last.macsAt[i];
    if (!macs?.length || last.troubled.has(i)) return undefined;
    if (d.kind !== 'BareMetalHost' || !d.valid || keyOf(d) !== keyOf(was)) return undefined;
    const { macs: now, unusable } = identityMacs(d, last.hardwareData.get(keyOf(d)));
    if (unusable.length) return undefined;
    if (now.length !== macs.length || now.some((m, k) => m.mac !== macs[k])) return undefined;
    (out ??= [...last.out])[i] = inventoryDocument(d);
    // The new document's own strings: the old ones are slices of the old file's text, and
    // would keep that text alive for as long as this entry lives.
    (macsAt ??= [...last.macsAt])[i] = now.map((m) => m.mac);
  }
  if (out) lastSite = { ...last, docs, out, macsAt: macsAt ?? last.macsAt };
  return { out: out ?? [...last.out], problems: last.problems };
}

/** In an inventory directory, the first document of each kind and namespace/name. */
function firstOfEachName(docs: readonly KindedDocument[], problems: Problem[]): KindedDocument[] {
  const first = new Map<string, KindedDocument>();
  const out: KindedDocument[] = [];
  for (const d of docs) {
    const key = `${d.kind}\u0000${keyOf(d)}`;
    const earlier = first.get(key);
    if (earlier) {
      problems.push(
        leftOut(
          error('DUPLICATE_NAME', `${d.kind} "${keyOf(d)}" is already defined in ${earlier.file}`, {
            file: d.file,
            doc: d.doc,
            pointer: `${d.base ?? ''}/metadata/name`,
          }),
          describe(d),
        ),
      );
      continue;
    }
    first.set(key, d);
    out.push(d);
  }
  return out;
}

interface IdentityMac {
  mac: string;
  doc: KindedDocument;
  /** The NIC's index in the hardware's `nics`; -1 for `spec.bootMACAddress`. */
  nic: number;
}

/** Where an identity MAC is written, built only for a problem: most MACs clash with none. */
function macPointer(m: IdentityMac, hwDoc: KindedDocument | undefined): string {
  const at =
    m.nic < 0
      ? '/spec/bootMACAddress'
      : pointer(...(hwDoc ? ['spec', 'hardware'] : ['status', 'hardware']), 'nics', m.nic, 'mac');
  return (m.doc.base ?? '') + at;
}

/**
 * Each host's identity MACs, kept for as long as its document lives (util/memo.ts): under
 * `bpa serve` an unchanged file's documents are the same objects from one reconcile to the
 * next (validate/document-cache.ts), and are never changed once read.
 */
const macsOf = new ObjectMemo<KindedDocument, { hwDoc: KindedDocument | undefined } & HostMacs>();

interface HostMacs {
  macs: IdentityMac[];
  /**
   * Group (multicast, broadcast) MACs: no NIC carries one as its own, so they identify no host.
   * The null MAC identifies none either, without a word: metal3 writes it for unknown NICs.
   */
  unusable: IdentityMac[];
}

/** The MACs that name a host: boot MAC and NIC MACs (from its HardwareData when it has one). */
function identityMacs(d: KindedDocument, hwDoc: KindedDocument | undefined): HostMacs {
  const known = macsOf.get(d);
  if (known && known.hwDoc === hwDoc) return known;
  const read = { hwDoc, ...readIdentityMacs(d, hwDoc) };
  macsOf.set(d, read);
  return read;
}

function readIdentityMacs(d: KindedDocument, hwDoc: KindedDocument | undefined): HostMacs {
  const out: IdentityMac[] = [];
  const unusable: IdentityMac[] = [];
  const claim = (raw: unknown, doc: KindedDocument, nic: number): void => {
    if (typeof raw !== 'string') return;
    const mac = normalizeMac(raw);
    if (!mac) return;
    if (isNullMac(mac)) return;
    if (isGroupMac(mac)) {
      unusable.push({ mac, doc, nic });
      return;
    }
    // A host has a handful of MACs: a scan is cheaper than a Set.
    for (const m of out) if (m.mac === mac) return;
    out.push({ mac, doc, nic });
  };
  claim(record(d.value['spec'])['bootMACAddress'], d, -1);
  const nics = hardwareOf(d, hwDoc)['nics'];
  if (Array.isArray(nics)) {
    for (let i = 0; i < nics.length; i++) claim(record(nics[i])['mac'], hwDoc ?? d, i);
  }
  return { macs: out, unusable };
}

/** A MAC of a host in the site that names no host: left out of its identity, with a word. */
function unusableMac(host: string, m: IdentityMac, hwDoc: KindedDocument | undefined): Problem {
  return warning(
    'UNUSABLE_HOST_MAC',
    `MAC ${m.mac} of BareMetalHost "${host}" is a multicast or broadcast (group) address: it identifies no host, so no node can be pinned to the host by it and no lease is matched to it`,
    { file: m.doc.file, doc: m.doc.doc, pointer: macPointer(m, hwDoc) },
  );
}

function hardwareOf(d: KindedDocument, hwDoc: KindedDocument | undefined): Record<string, unknown> {
  return hwDoc
    ? record(record(hwDoc.value['spec'])['hardware'])
    : record(record(d.value['status'])['hardware']);
}

function hasHardware(hw: Record<string, unknown>): boolean {
  const cpu = record(hw['cpu']);
  return (
    typeof cpu['count'] === 'number' ||
    typeof hw['ramMebibytes'] === 'number' ||
    (Array.isArray(hw['nics']) && hw['nics'].length > 0)
  );
}

/** Where metal3 writes what bpa reads from a host; the same names elsewhere are misplaced. */
const HOST_FIELDS: ReadonlyMap<string, string> = new Map([
  ['bootMACAddress', '/spec/bootMACAddress'],
  ['hardware', '/status/hardware'],
]);

function noHostData(d: KindedDocument, problems: Problem[]): void {
  const misplaced = findKeys(d.value, HOST_FIELDS);
  const hint = misplaced.length
    ? `; ${misplaced.map((m) => dotted(m)).join(' and ')} ${word(misplaced.length, 'looks', 'look')} misplaced (check the indentation: bpa reads spec.bootMACAddress and status.hardware)`
    : ': it can be neither pinned by MAC nor matched by resources';
  problems.push(
    warning(
      'NO_HOST_DATA',
      `${describe(d)}: bpa reads no MAC (spec.bootMACAddress, status.hardware.nics) and no hardware from it${hint}`,
      { file: d.file, doc: d.doc, pointer: (d.base ?? '') + (misplaced[0] ?? '/metadata/name') },
    ),
  );
}

/** A HardwareData without spec.hardware gives bpa nothing; metal3 writes it there. */
function checkHardwareData(d: KindedDocument, problems: Problem[]): void {
  const spec = record(d.value['spec']);
  if (hasHardware(record(spec['hardware']))) return;
  const direct = ['cpu', 'ramMebibytes', 'nics', 'storage'].filter((k) => k in spec);
  const hint = direct.length
    ? `; ${direct.map((k) => `spec.${k}`).join(', ')} ${word(direct.length, 'is', 'are')} directly under spec (metal3 writes them under spec.hardware)`
    : '';
  problems.push(
    warning(
      'NO_HOST_DATA',
      `${describe(d)}: bpa reads no hardware from it (no cpu.count, ramMebibytes or nics under spec.hardware)${hint}`,
      {
        file: d.file,
        doc: d.doc,
        pointer: (d.base ?? '') + (direct.length ? `/spec/${direct[0]}` : '/spec'),
      },
    ),
  );
}

/** Pointers of keys named in `fields` found anywhere but where they belong (depth-limited). */
function findKeys(value: unknown, fields: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  const walk = (v: unknown, ptr: string, depth: number): void => {
    if (depth > 8 || typeof v !== 'object' || v === null) return;
    for (const [k, child] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
      const at = `${ptr}${pointer(k)}`;
      const home = typeof k === 'string' ? fields.get(k) : undefined;
      if (home !== undefined && home !== at) found.push(at);
      walk(child, at, depth + 1);
    }
  };
  walk(value, '', 0);
  return found;
}

function dotted(ptr: string): string {
  return ptr.slice(1).replace(/\//g, '.');
}

/**
 * Each document's inventory entry and host key, kept for as long as the document lives (under
 * `bpa serve` an unchanged file's documents are the same objects, never changed once read):
 * 10,000 hosts are not described again at every reconcile, and unchanged hosts keep their
 * entry object, which lets observe see at a glance which hosts may have changed.
 */
const entries = new ObjectMemo<KindedDocument, { key: string; entry: InventoryDocument }>();

function described(d: KindedDocument): { key: string; entry: InventoryDocument } {
  let known = entries.get(d);
  if (!known) {
    const m = record(d.value['metadata']);
    const name = typeof m['name'] === 'string' ? m['name'] : '';
    const namespace = typeof m['namespace'] === 'string' ? m['namespace'] : undefined;
    known = {
      key: namespace ? `${namespace}/${name}` : name,
      entry: {
        kind: d.kind as InventoryDocument['kind'],
        name,
        namespace,
        ref: { file: d.file, doc: d.doc },
        value: d.value,
      },
    };
    entries.set(d, known);
  }
  return known;
}

function inventoryDocument(d: KindedDocument): InventoryDocument {
  return described(d).entry;
}

/** `namespace/name`, or the name alone, as hosts are named everywhere. */
function keyOf(d: KindedDocument): string {
  return described(d).key;
}

function describe(d: KindedDocument): string {
  const key = keyOf(d);
  return key && !key.endsWith('/') ? `${d.kind} "${key}"` : `${d.kind} (no name)`;
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}
