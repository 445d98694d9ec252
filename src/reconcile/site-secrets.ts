/**
 * The `decrypt` step: every SOPS file of the site decrypted in memory and verified, whether
 * the Site refers to it or not, so that a tampered file stops the run before anything is
 * observed or applied. Its problems (file:line) join the site's, as a validation error would.
 * The values live in the run context only; nothing here writes or logs one.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decryptFile } from '../sops/decrypt-file.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { unwrapDataKey } from '../sops/age.js';
import { unwrapPgpDataKey } from '../sops/pgp.js';
import { readAgeKeyFile, readAgeKeySecret } from '../sops/keys.js';
import { secretValues } from '../sops/values.js';
import { sortProblems, type Problem } from '../util/problem.js';
import type { RunContext } from './context.js';

export async function decryptSecrets(ctx: RunContext): Promise<void> {
  const loaded = ctx.loaded as NonNullable<RunContext['loaded']>;
  const model = ctx.model as NonNullable<RunContext['model']>;
  const values = new Map<string, Record<string, string>>();
  // A plaintext Secret the Site uses (accepted with a warning only under --watch DIR).
  for (const s of model.secrets ?? []) {
    if (s.encrypted) continue;
    const d = loaded.documents.find((x) => x.file === s.file && x.index === s.doc);
    if (d && isRecord(d.value)) values.set(s.name, secretValues(d.value));
  }
  const files = [
    ...new Set(
      loaded.documents
        .filter((d) => isRecord(d.value) && d.value['sops'] !== undefined)
        .map((d) => d.file),
    ),
  ];
  if (files.length) {
    const identities = await ageIdentitiesOf(ctx);
    const problems: Problem[] = [];
    for (const file of files) {
      const text = loaded.files.find((f) => f.path === file)?.text ?? '';
      const out = await decryptFile(
        file,
        text,
        async (meta) =>
          (await unwrapDataKey(meta.age ?? [], identities)) ??
          (meta.pgp?.length ? await unwrapPgpDataKey(meta.pgp, { env: ctx.env }) : undefined),
      );
      problems.push(...out.problems);
      for (const doc of out.documents.values()) {
        const name = (doc['metadata'] as { name?: unknown } | undefined)?.name;
        if (doc['apiVersion'] === 'v1' && doc['kind'] === 'Secret' && typeof name === 'string')
          values.set(name, secretValues(doc));
      }
    }
    if (problems.length) {
      ctx.validation = sortProblems([...ctx.validation, ...problems]);
      ctx.problems = sortProblems([...ctx.problems, ...problems]);
      ctx.log.warn(
        { problems: problems.map((p) => `${p.file}:${p.line}: ${p.code}`) },
        "the site's SOPS files do not decrypt and verify: nothing is applied",
      );
      return;
    }
  }
  ctx.secrets = values;
  if (values.size) ctx.secretDigests = await valueDigests(ctx.operator.stateDir, values);
}

/**
 * An HMAC of each Secret's values under a random key kept in the state directory: it tells a
 * re-encrypted Secret (same values, new ciphertext) from a changed one, and unlike a plain
 * hash it gives nobody without the key a way to test guesses of a value.
 */
async function valueDigests(
  stateDir: string,
  values: ReadonlyMap<string, Readonly<Record<string, string>>>,
): Promise<Map<string, string>> {
  const key = await stateKey(stateDir);
  const out = new Map<string, string>();
  for (const [name, v] of values) {
    const canonical = JSON.stringify(
      Object.keys(v)
        .sort()
        .map((k) => [k, v[k]]),
    );
    out.set(name, createHmac('sha256', key).update(canonical).digest('hex'));
  }
  return out;
}

async function stateKey(stateDir: string): Promise<Buffer> {
  const path = join(stateDir, SECRETS_KEY);
  try {
    const key = await readFile(path);
    if (key.length === 32) return key;
  } catch (err: unknown) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  await writeFileAtomic(path, key, 0o600);
  return key;
}

/** The state directory's key for the values' HMACs (never a value itself). */
export const SECRETS_KEY = 'secrets.key';

/** Every age identity bpa was given: the key file, and the bootstrap cluster's Secret. */
async function ageIdentitiesOf(ctx: RunContext): Promise<string[]> {
  const cfg = ctx.operator;
  const ids: string[] = [];
  if (cfg.sopsAgeKeyFile) ids.push(...(await readAgeKeyFile(cfg.sopsAgeKeyFile)));
  if (cfg.sopsAgeSecret) {
    if (!cfg.bootstrapKubeconfig && !ctx.env['KUBERNETES_SERVICE_HOST']) {
      const { StalledError } = await import('../util/errors.js');
      throw new StalledError(
        'SOPS_KEY_UNREADABLE',
        `--sops-age-secret ${cfg.sopsAgeSecret} needs the bootstrap cluster: give --bootstrap-kubeconfig, or run bpa in the cluster`,
      );
    }
    const { loadKubeConfig } = await import('../kube/kubeconfig.js');
    const kc = loadKubeConfig({
      file: cfg.bootstrapKubeconfig,
      env: ctx.env,
      what: 'the bootstrap cluster',
    });
    if (!kc) return ids;
    ids.push(...(await readAgeKeySecret(kc, cfg.namespace, cfg.sopsAgeSecret)));
  }
  return ids;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
