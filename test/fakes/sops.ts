/**
 * SOPS files made at test time, as SOPS makes them: a random data key encrypted for each
 * age recipient by Debian's `age`, values encrypted by bpa's envelope code (whose format
 * test/unit/sops/envelope.test.ts checks against a file SOPS itself wrote), the MAC over the
 * values in document order. Keys come from `age-keygen`, in a temp dir, never committed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import {
  additionalDataOf,
  computeMac,
  isEncryptedPath,
  type SopsMetadata,
} from '../../src/sops/envelope.js';

/** Why SOPS tests cannot run here, or undefined when `age` and `age-keygen` are installed. */
export function ageMissing(): string | undefined {
  for (const tool of ['age', 'age-keygen']) {
    const r = spawnSync(tool, ['--version'], { encoding: 'utf8' });
    if (r.error) return `${tool} is not installed (apt-get install age)`;
  }
  return undefined;
}

export interface AgeKey {
  identity: string;
  recipient: string;
}

export function ageKeygen(): AgeKey {
  const dir = mkdtempSync(join(tmpdir(), 'bpa-age-'));
  try {
    execFileSync('age-keygen', ['-o', join(dir, 'key')], { stdio: 'pipe' });
    const identity = readFileSync(join(dir, 'key'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('AGE-SECRET-KEY-')) as string;
    const recipient = execFileSync('age-keygen', ['-y', join(dir, 'key')], {
      encoding: 'utf8',
    }).trim();
    return { identity, recipient };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function ageEncrypt(data: Buffer, recipients: readonly string[]): string {
  return execFileSync('age', ['-a', ...recipients.flatMap((r) => ['-r', r])], {
    input: data,
    encoding: 'utf8',
  });
}

export interface SopsOptions {
  /** SOPS's encrypted_regex (Flux's advice for Secrets: ^(data|stringData)$). */
  encryptedRegex?: string;
  /** Reuse a data key (sops updatekeys keeps it; sops rotate makes a new one). */
  dataKey?: Buffer;
  lastmodified?: string;
  json?: boolean;
}

/** A document encrypted as `sops -e` would: returns the file's text and its data key. */
export function sopsEncrypt(
  doc: Record<string, unknown>,
  recipients: readonly string[],
  opts: SopsOptions = {},
): { text: string; dataKey: Buffer } {
  const dataKey = opts.dataKey ?? randomBytes(32);
  const meta: Partial<SopsMetadata> = opts.encryptedRegex
    ? { encrypted_regex: opts.encryptedRegex }
    : {};
  const macValues: Array<string | number | boolean | null> = [];
  const walk = (v: unknown, path: string[]): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, path));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k])]));
    const value = v as string | number | boolean | null;
    macValues.push(value);
    if (value === null || !isEncryptedPath(meta as SopsMetadata, path)) return value;
    return encryptValue(value, dataKey, additionalDataOf(path));
  };
  const body = walk(doc, []) as Record<string, unknown>;
  const lastmodified = opts.lastmodified ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const mac = encryptValue(computeMac(macValues), dataKey, lastmodified);
  const sops = {
    kms: null,
    gcp_kms: null,
    azure_kv: null,
    hc_vault: null,
    age: recipients.map((recipient) => ({ recipient, enc: ageEncrypt(dataKey, [recipient]) })),
    lastmodified,
    mac,
    pgp: null,
    ...meta,
    version: '3.8.1',
  };
  const out = { ...body, sops };
  return { text: opts.json ? JSON.stringify(out, null, 4) + '\n' : stringify(out), dataKey };
}

/** A v1 Secret with stringData, the shape bpa reads. */
export function secretDoc(name: string, values: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type: 'Opaque',
    stringData: values,
  };
}

/** Encrypts one value as SOPS does (aes/cipher.go: a 32-byte nonce, the path as additional data). */
export function encryptValue(
  value: string | number | boolean,
  dataKey: Buffer,
  additionalData: string,
): string {
  const type =
    typeof value === 'string'
      ? 'str'
      : typeof value === 'boolean'
        ? 'bool'
        : Number.isInteger(value)
          ? 'int'
          : 'float';
  const text = String(value);
  if (text === '' && type === 'str') return '';
  const iv = randomBytes(32);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(Buffer.from(additionalData, 'utf8'));
  const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return `ENC[AES256_GCM,data:${data.toString('base64')},iv:${iv.toString('base64')},tag:${cipher.getAuthTag().toString('base64')},type:${type}]`;
}
