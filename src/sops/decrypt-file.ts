/**
 * One SOPS file of the site, decrypted in memory and verified: every encrypted value's tag
 * (which binds it to its path) and the MAC over all values (which catches an edited value or
 * an edited key left unencrypted). Problems name the file and line; no message ever includes
 * a value, encrypted or not.
 */
import {
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Document,
  type Node,
} from 'yaml';
import { error, type Problem } from '../util/problem.js';
import {
  additionalDataOf,
  computeMac,
  decryptValue,
  isEncryptedPath,
  metadataIssue,
  metadataOf,
  SopsValueError,
  typedValue,
  type SopsMetadata,
} from './envelope.js';

export interface DecryptedFile {
  /** The decrypted documents, by their index in the file; the `sops` key removed. */
  documents: Map<number, Record<string, unknown>>;
  problems: Problem[];
}

/** Finds the data key for a file's metadata, or undefined when no key bpa has opens it. */
export type DataKeyFor = (meta: SopsMetadata) => Promise<Buffer | undefined>;

export async function decryptFile(
  file: string,
  text: string,
  dataKeyFor: DataKeyFor,
): Promise<DecryptedFile> {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (offset: number): number => lines.linePos(offset).line;
  const problems: Problem[] = [];
  const documents = new Map<number, Record<string, unknown>>();
  if (!Array.isArray(docs)) return { documents, problems };
  const encrypted = docs
    .map((doc, index) => ({ doc, index, value: doc.toJS() as unknown }))
    .filter((d) => isRecord(d.value) && d.value['sops'] !== undefined);
  const first = encrypted[0];
  if (!first) return { documents, problems };
  const sopsLine = lineOf(keyOffset(first.doc, 'sops'));
  const at = (line: number): Partial<Problem> => ({ file, line, column: 1 });
  const sops = (first.value as Record<string, unknown>)['sops'];
  const issue = metadataIssue(sops);
  if (issue) {
    problems.push(error('SOPS_INVALID', issue.message, at(sopsLine)));
    return { documents, problems };
  }
  const meta = metadataOf(sops as Record<string, unknown>);
  const dataKey = await dataKeyFor(meta);
  if (!dataKey) {
    const recipients = [
      ...(meta.age ?? []).map((r) => r.recipient),
      ...(meta.pgp ?? []).map((r) => `PGP ${r.fp}`),
    ].join(', ');
    problems.push(
      error(
        'SOPS_NO_KEY',
        `encrypted for ${recipients}: none of the age keys bpa was given opens it (--sops-age-key-file, BPA_SOPS_AGE_KEY_FILE, or the .agekey keys of --sops-age-secret), nor GnuPG's keyring (GNUPGHOME)`,
        at(sopsLine),
      ),
    );
    return { documents, problems };
  }
  const macValues: Array<string | number | boolean | null> = [];
  for (const { doc, index, value } of encrypted) {
    const out = value as Record<string, unknown>;
    delete out['sops'];
    let broken = false;
    for (const leaf of leavesOf(doc as Document, lineOf)) {
      if (!isEncryptedPath(meta, leaf.path)) {
        if (!meta.mac_only_encrypted) macValues.push(leaf.value);
        continue;
      }
      const where = leaf.path.join('.');
      if (typeof leaf.value !== 'string' || (leaf.value !== '' && !leaf.value.startsWith('ENC['))) {
        problems.push(
          error(
            'SOPS_TAMPERED',
            `${where}: this value should be encrypted but is not: the file was edited after it was encrypted; edit it with sops`,
            at(leaf.line),
          ),
        );
        broken = true;
        continue;
      }
      if (leaf.value === '') {
        macValues.push('');
        continue;
      }
      try {
        const plain = decryptValue(leaf.value, dataKey, additionalDataOf(leaf.path));
        const typed = typedValue(plain.text, plain.type);
        if (plain.type !== 'comment') macValues.push(typed);
        setAt(out, leaf.pointer, typed);
      } catch (err: unknown) {
        if (!(err instanceof SopsValueError)) throw err;
        problems.push(
          error(
            'SOPS_TAMPERED',
            `${where}: the encrypted value does not verify (${err.message}): it, or its key, was changed after encryption`,
            at(leaf.line),
          ),
        );
        broken = true;
      }
    }
    if (!broken) documents.set(index, out);
  }
  if (problems.length) return { documents: new Map(), problems };
  const macLine = lineOf(keyOffset(first.doc, 'sops', 'mac'));
  let mac: string;
  try {
    mac = decryptValue(meta.mac, dataKey, meta.lastmodified).text;
  } catch {
    problems.push(
      error(
        'SOPS_MAC_MISMATCH',
        'sops.mac does not verify with the data key and sops.lastmodified: the metadata was edited after encryption',
        at(macLine),
      ),
    );
    return { documents: new Map(), problems };
  }
  if (mac.toUpperCase() !== computeMac(macValues)) {
    problems.push(
      error(
        'SOPS_MAC_MISMATCH',
        "the file's values do not match its MAC: a value, or a key left unencrypted, was edited after encryption; edit it with sops",
        at(macLine),
      ),
    );
    return { documents: new Map(), problems };
  }
  return { documents, problems };
}

/** Offset of a key's entry, following nested mapping keys; 0 when not found. */
function keyOffset(doc: Document, ...keys: string[]): number {
  let node: unknown = doc.contents;
  let offset = 0;
  for (const k of keys) {
    const items = (
      node as { items?: Array<{ key: { value?: unknown; range?: number[] }; value: unknown }> }
    )?.items;
    const pair = items?.find((p) => p.key?.value === k);
    if (!pair) return offset;
    offset = pair.key.range?.[0] ?? offset;
    node = pair.value;
  }
  return offset;
}

function setAt(root: Record<string, unknown>, pointer: string, value: unknown): void {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = root;
  for (let i = 0; i < parts.length - 1; i++)
    node = (node as Record<string, unknown>)[parts[i] as string];
  (node as Record<string, unknown>)[parts[parts.length - 1] as string] = value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One scalar of a document (the `sops` key left out), in document order. */
interface Leaf {
  /** Mapping keys from the root; list items have their parent's path. */
  path: string[];
  /** JSON pointer, list indices included. */
  pointer: string;
  value: string | number | boolean | null;
  /** 1-based line of the value in the file. */
  line: number;
}

/**
 * The scalars of a parsed YAML document in document order (the order of the MAC), keys as
 * text. `lineOf` turns a node's offset into its line.
 */
function leavesOf(doc: Document, lineOf: (offset: number) => number): Leaf[] {
  const out: Leaf[] = [];
  const walk = (node: Node | null | undefined, path: string[], ptr: string): void => {
    if (node === null || node === undefined) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (path.length === 0 && key === 'sops') continue;
        walk(pair.value as Node | null, [...path, key], `${ptr}/${escape(key)}`);
      }
      return;
    }
    if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item as Node | null, path, `${ptr}/${i}`));
      return;
    }
    if (isScalar(node)) {
      const v = node.value;
      const value =
        typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : null;
      out.push({ path, pointer: ptr, value, line: lineOf(node.range?.[0] ?? 0) });
    }
  };
  walk(doc.contents as Node | null, [], '');
  return out;
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
