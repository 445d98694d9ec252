/**
 * The SOPS envelope, read as SOPS writes it (getsops/sops `aes/cipher.go`, `sops.go`): every
 * value it encrypts is `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`, AES-256-GCM under the file's
 * data key with a 32-byte nonce and the value's path (`key:key:…:`, list items under their
 * parent's path) as additional data; the MAC is the SHA-512 of every value in document order
 * (booleans as True/False, comments left out), upper-case hex, itself encrypted with the data
 * key and the `lastmodified` text as additional data. Renaming a key breaks its value's tag;
 * changing any value, or a key left unencrypted, breaks the MAC. Pure: no I/O.
 */
import { createDecipheriv, createHash } from 'node:crypto';

/** The `sops` metadata of a file, as far as bpa reads it. */
export interface SopsMetadata {
  mac: string;
  lastmodified: string;
  age?: Array<{ recipient: string; enc: string }>;
  /** PGP keys (`fp`: the key's fingerprint), opened by the operator's GnuPG. */
  pgp?: Array<{ fp: string; enc: string }>;
  unencrypted_suffix?: string;
  encrypted_suffix?: string;
  unencrypted_regex?: string;
  encrypted_regex?: string;
  mac_only_encrypted?: boolean;
}

export const ENC_VALUE =
  /^ENC\[AES256_GCM,data:([A-Za-z0-9+/]*={0,2}),iv:([A-Za-z0-9+/]+={0,2}),tag:([A-Za-z0-9+/]+={0,2}),type:(str|int|float|bool|bytes|comment)\]$/;

const SELECTORS = [
  'unencrypted_suffix',
  'encrypted_suffix',
  'unencrypted_regex',
  'encrypted_regex',
] as const;

/** What is wrong with a document's `sops` metadata, or undefined when it can be used. */
export function metadataIssue(sops: unknown): { pointer: string; message: string } | undefined {
  if (!isRecord(sops)) return { pointer: '/sops', message: 'sops: must be a mapping' };
  for (const key of ['mac', 'lastmodified'] as const) {
    if (typeof sops[key] !== 'string' || sops[key] === '')
      return { pointer: `/sops/${key}`, message: `sops.${key}: required, a string` };
  }
  if (!ENC_VALUE.test(sops['mac'] as string))
    return { pointer: '/sops/mac', message: 'sops.mac: not an ENC[AES256_GCM,…] value' };
  if (sops['key_groups'] !== undefined && sops['key_groups'] !== null)
    return {
      pointer: '/sops/key_groups',
      message:
        'sops.key_groups (Shamir secret sharing) is not supported: encrypt for plain age recipients',
    };
  const age = Array.isArray(sops['age']) ? (sops['age'] as unknown[]) : [];
  const pgp = Array.isArray(sops['pgp']) ? (sops['pgp'] as unknown[]) : [];
  if (age.length === 0 && pgp.length === 0)
    return {
      pointer: '/sops',
      message: 'sops: no age (sops.age) or PGP (sops.pgp) recipient to decrypt the data key',
    };
  for (const [i, r] of age.entries()) {
    if (!isRecord(r) || typeof r['recipient'] !== 'string' || typeof r['enc'] !== 'string')
      return { pointer: `/sops/age/${i}`, message: `sops.age[${i}]: needs recipient and enc` };
  }
  for (const [i, r] of pgp.entries()) {
    if (!isRecord(r) || typeof r['fp'] !== 'string' || typeof r['enc'] !== 'string')
      return { pointer: `/sops/pgp/${i}`, message: `sops.pgp[${i}]: needs fp and enc` };
  }
  const selectors = SELECTORS.filter((k) => sops[k] !== undefined && sops[k] !== '');
  if (selectors.length > 1)
    return { pointer: '/sops', message: `sops: only one of ${selectors.join(', ')} may be set` };
  for (const k of selectors) {
    if (typeof sops[k] !== 'string')
      return { pointer: `/sops/${k}`, message: `sops.${k}: a string` };
    if (k.endsWith('regex')) {
      try {
        new RegExp(sops[k] as string);
      } catch {
        return { pointer: `/sops/${k}`, message: `sops.${k}: not a regular expression` };
      }
    }
  }
  return undefined;
}

export function metadataOf(sops: Record<string, unknown>): SopsMetadata {
  return sops as unknown as SopsMetadata;
}

/** Whether SOPS encrypts the value at `path` (mapping keys from the document's root). */
export function isEncryptedPath(meta: SopsMetadata, path: readonly string[]): boolean {
  if (meta.unencrypted_suffix) return !path.some((k) => k.endsWith(meta.unencrypted_suffix!));
  if (meta.encrypted_suffix) return path.some((k) => k.endsWith(meta.encrypted_suffix!));
  if (meta.unencrypted_regex) {
    const re = new RegExp(meta.unencrypted_regex);
    return !path.some((k) => re.test(k));
  }
  if (meta.encrypted_regex) {
    const re = new RegExp(meta.encrypted_regex);
    return path.some((k) => re.test(k));
  }
  // SOPS's default: keys ending in _unencrypted stay readable.
  return !path.some((k) => k.endsWith('_unencrypted'));
}

/** Why a value did not decrypt: a wrong data key, or a value or key changed after encryption. */
export class SopsValueError extends Error {}

/** Decrypts one ENC[…] value; throws SopsValueError when its tag does not verify. */
export function decryptValue(
  enc: string,
  dataKey: Buffer,
  additionalData: string,
): { text: string; type: string } {
  const m = ENC_VALUE.exec(enc);
  if (!m) throw new SopsValueError('not an ENC[AES256_GCM,…] value');
  const [, data, iv, tag, type] = m as unknown as [string, string, string, string, string];
  const nonce = Buffer.from(iv, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', dataKey, nonce);
  decipher.setAAD(Buffer.from(additionalData, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  try {
    const text = Buffer.concat([
      decipher.update(Buffer.from(data, 'base64')),
      decipher.final(),
    ]).toString('utf8');
    return { text, type };
  } catch {
    throw new SopsValueError('its authentication tag does not verify');
  }
}

/** The additional data of a value: its path, each key followed by `:`. */
export function additionalDataOf(path: readonly string[]): string {
  return path.map((k) => `${k}:`).join('');
}

/** A value as the MAC hashes it (SOPS's ToBytes). */
export function macBytes(value: string | number | boolean | null): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null) return '';
  return String(value);
}

/** A decrypted value typed as SOPS typed it. */
export function typedValue(text: string, type: string): string | number | boolean {
  if (type === 'int' || type === 'float') return Number(text);
  if (type === 'bool') return text === 'true';
  return text;
}

/** The MAC over values given in document order. */
export function computeMac(values: ReadonlyArray<string | number | boolean | null>): string {
  const hash = createHash('sha512');
  for (const v of values) hash.update(macBytes(v), 'utf8');
  return hash.digest('hex').toUpperCase();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
