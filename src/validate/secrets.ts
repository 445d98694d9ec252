/**
 * Site secrets: `v1` Secret documents the Site refers to (ssh.bootstrapCredentials,
 * registryMirror.credentials, installer.variables), kept in git encrypted with SOPS. Checked
 * here without keys: the SOPS metadata, that every value is encrypted, that the keys a use
 * needs are there (SOPS leaves key names readable). Each gets a digest of its ciphertext,
 * which the plan carries: it changes when a value is re-encrypted, never reveals one, and
 * stays the same when only the recipients change (sops updatekeys). Pure.
 */
import { createHash } from 'node:crypto';
import type { LoadedDocument } from '../load/index.js';
import { ENC_VALUE, isEncryptedPath, metadataIssue, metadataOf } from '../sops/envelope.js';
import { error, pointer, warning, type Problem } from '../util/problem.js';
import type { SiteSecret, SiteSettings } from './model.js';

/** Where the Site uses a Secret of the site, and the keys that use needs. */
export const SECRET_USES = [
  { path: ['ssh', 'bootstrapCredentials'], needs: ['password'], what: "the nodes' default login" },
  {
    path: ['registryMirror', 'credentials'],
    needs: ['username', 'password'],
    what: 'the registry credentials',
  },
  { path: ['installer', 'variables'], needs: [], what: 'installer variables' },
] as const;

export type SecretUse = (typeof SECRET_USES)[number];

/** The Secret name the Site gives at a use, if any. */
export function secretRef(
  spec: Record<string, unknown> | undefined,
  use: SecretUse,
): string | undefined {
  let v: unknown = spec;
  for (const k of use.path) v = isRecord(v) ? v[k] : undefined;
  return isRecord(v) && typeof v['secret'] === 'string' ? v['secret'] : undefined;
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface SecretCheckOptions {
  /** `bpa serve --watch DIR` (development): a plaintext Secret referred to is a warning. */
  plaintextAllowed?: boolean;
}

/** Every site Secret, and problems: bad SOPS metadata, missing or plaintext referred Secrets. */
export function checkSecrets(
  documents: readonly LoadedDocument[],
  site: SiteSettings | undefined,
  problems: Problem[],
  opts: SecretCheckOptions = {},
): SiteSecret[] {
  const secrets = new Map<string, SiteSecret>();
  for (const d of documents) {
    const v = d.value;
    if (!isRecord(v)) continue;
    const where = (ptr: string): Partial<Problem> => ({ file: d.file, doc: d.index, pointer: ptr });
    const isSecret = v['apiVersion'] === 'v1' && v['kind'] === 'Secret';
    const sops = v['sops'];
    if (sops !== undefined && !isSecret) {
      const kind = v['kind'];
      const hidden = typeof kind === 'string' && kind.startsWith('ENC[');
      problems.push(
        error(
          'SOPS_UNSUPPORTED_KIND',
          hidden
            ? 'a SOPS file whose apiVersion and kind are encrypted too: encrypt only the values of a v1 Secret (sops with encrypted_regex: ^(data|stringData)$), so that bpa can tell what it is'
            : `a SOPS-encrypted ${typeof kind === 'string' ? kind : 'document'}: only v1 Secret documents may be encrypted in a site; keep the rest readable and refer to a Secret`,
          where(hidden ? '/kind' : ''),
        ),
      );
      continue;
    }
    if (!isSecret) continue;
    const meta = isRecord(v['metadata']) ? v['metadata'] : {};
    const name = typeof meta['name'] === 'string' ? meta['name'] : undefined;
    if (!name) continue;
    const values = [...entries(v, 'stringData'), ...entries(v, 'data')];
    let encrypted = false;
    if (sops !== undefined) {
      const issue = metadataIssue(sops);
      // Still a site Secret (its uses are not "not found"), but its values are not looked at.
      if (issue) problems.push(error('SOPS_INVALID', issue.message, where(issue.pointer)));
      encrypted = true;
      const m = metadataOf(sops as Record<string, unknown>);
      for (const [field, key, value] of issue ? [] : values) {
        if (!isEncryptedPath(m, [field, key])) {
          problems.push(
            error(
              'SOPS_INVALID',
              `${field}.${key} is left unencrypted by the file's SOPS rules: encrypt every value of a Secret (Flux's encrypted_regex: ^(data|stringData)$)`,
              where(pointer(field, key)),
            ),
          );
        } else if (typeof value !== 'string' || (value !== '' && !ENC_VALUE.test(value))) {
          problems.push(
            error(
              'SOPS_INVALID',
              `${field}.${key} is not an encrypted SOPS value (ENC[AES256_GCM,…]): the file was edited after it was encrypted; edit it with sops`,
              where(pointer(field, key)),
            ),
          );
        }
      }
    }
    if (secrets.has(name)) {
      problems.push(
        error(
          'DUPLICATE_NAME',
          `Secret ${JSON.stringify(name)} is defined twice in the site`,
          where('/metadata/name'),
        ),
      );
      continue;
    }
    secrets.set(name, {
      name,
      file: d.file,
      doc: d.index,
      encrypted,
      keys: values.map(([, k]) => k),
      digest: digestOf(values),
    });
  }
  checkRefs(site, secrets, problems, opts);
  return [...secrets.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function checkRefs(
  site: SiteSettings | undefined,
  secrets: ReadonlyMap<string, SiteSecret>,
  problems: Problem[],
  opts: SecretCheckOptions,
): void {
  if (!site) return;
  const at = (path: readonly string[]): Partial<Problem> => ({
    file: site.ref?.file,
    doc: site.ref?.doc,
    pointer: pointer('spec', ...path, 'secret'),
  });
  const ssh = isRecord(site.spec['ssh']) ? site.spec['ssh'] : {};
  if (
    ssh['bootstrapCredentials'] !== undefined &&
    ssh['bootstrapCredentialsSecret'] !== undefined
  ) {
    problems.push(
      error(
        'SECRET_CONFLICT',
        'ssh.bootstrapCredentials (a Secret of the site) and ssh.bootstrapCredentialsSecret (a Secret of the cluster) both set: keep one',
        { file: site.ref?.file, doc: site.ref?.doc, pointer: '/spec/ssh/bootstrapCredentials' },
      ),
    );
  }
  const referred = new Set<string>();
  for (const use of SECRET_USES) {
    const name = secretRef(site.spec, use);
    if (name === undefined) continue;
    const s = secrets.get(name);
    if (!s) {
      const known = [...secrets.keys()];
      problems.push(
        error(
          'SECRET_NOT_FOUND',
          `${use.what}: no v1 Secret named ${JSON.stringify(name)} in the site${known.length ? ` (there are: ${known.join(', ')})` : ''}`,
          at(use.path),
        ),
      );
      continue;
    }
    referred.add(`${s.file}#${s.doc}`);
    if (!s.encrypted) {
      const text = `${use.what}: Secret ${JSON.stringify(name)} (${s.file}) is not encrypted: secret values in plain text`;
      problems.push(
        opts.plaintextAllowed
          ? warning(
              'SECRET_PLAINTEXT',
              `${text}; accepted only because bpa watches a directory`,
              at(use.path),
            )
          : error(
              'SECRET_NOT_ENCRYPTED',
              `${text}; encrypt it with sops (age recipients) before it is committed`,
              at(use.path),
            ),
      );
    }
    for (const key of use.needs) {
      if (!s.keys.includes(key))
        problems.push(
          error(
            'SECRET_KEY_MISSING',
            `${use.what}: Secret ${JSON.stringify(name)} has no key ${key} (stringData or data)`,
            at(use.path),
          ),
        );
    }
    if (use.path[0] === 'installer') {
      for (const key of s.keys.filter((k) => !VARIABLE_NAME.test(k)))
        problems.push(
          error(
            'SECRET_KEY_MISSING',
            `${use.what}: key ${JSON.stringify(key)} of Secret ${JSON.stringify(name)} is not a variable name (letters, digits, _)`,
            at(use.path),
          ),
        );
    }
  }
  // A Secret the Site uses has its own problem above; the general warning would repeat it.
  for (let i = problems.length - 1; i >= 0; i--) {
    const p = problems[i] as Problem;
    if (p.code === 'SECRET_IN_SITE' && referred.has(`${p.file}#${p.doc}`)) problems.splice(i, 1);
  }
}

function entries(
  v: Record<string, unknown>,
  field: 'stringData' | 'data',
): Array<[string, string, unknown]> {
  const m = v[field];
  return isRecord(m) ? Object.entries(m).map(([k, x]) => [field, k, x]) : [];
}

function digestOf(values: ReadonlyArray<[string, string, unknown]>): string {
  const sorted = [...values].sort((a, b) => (`${a[0]}/${a[1]}` < `${b[0]}/${b[1]}` ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
