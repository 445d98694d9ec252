/**
 * Default credentials for bootstrapping hosts, from a file or a Kubernetes Secret, never from
 * the site repository. No message here ever includes a value read from them.
 */
import { stat, readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { StalledError, TransientError, messageOf } from '../util/errors.js';
import type { BootstrapCredentials } from './bootstrap.js';

export interface ReadCredentialsOptions {
  /** Told about a file that works but is readable by its group. */
  warn?: (message: string) => void;
}

const KEY_VALUE_LINE = /^\s*[A-Za-z_][A-Za-z0-9_]*\s*=/;

/**
 * A small file with `username` and `password`, either YAML (`password: …`) or KEY=VALUE lines
 * (`PASSWORD=…`, names case-insensitive, `#` comments). Refused when other users may read it.
 */
export async function readCredentialsFile(
  path: string,
  opts: ReadCredentialsOptions = {},
): Promise<BootstrapCredentials> {
  let mode: number;
  let text: string;
  try {
    mode = (await stat(path)).mode;
    text = await readFile(path, 'utf8');
  } catch (err: unknown) {
    const why = (err as NodeJS.ErrnoException).code ?? messageOf(err);
    throw new StalledError(
      'CREDENTIALS_MISSING',
      `cannot read the credentials file ${path} (${why})`,
      {
        cause: err,
      },
    );
  }
  if ((mode & 0o007) !== 0) {
    throw new StalledError(
      'CREDENTIALS_INSECURE',
      `the credentials file ${path} is accessible to all users (mode ${octal(mode)}); ` +
        `chmod 600 it (for a mounted Secret, set defaultMode: 0400)`,
    );
  }
  if ((mode & 0o070) !== 0) {
    opts.warn?.(
      `the credentials file ${path} is accessible to its group (mode ${octal(mode)}); chmod 600 is safer`,
    );
  }
  const fields = parseCredentialsText(path, text);
  return toCredentials(`the credentials file ${path}`, fields);
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

function parseCredentialsText(path: string, text: string): Record<string, unknown> {
  const lines = text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (lines.length > 0 && lines.every((l) => KEY_VALUE_LINE.test(l))) {
    const fields: Record<string, unknown> = {};
    for (const line of lines) {
      const eq = line.indexOf('=');
      const name = line.slice(0, eq).trim().toLowerCase();
      fields[name] = unquote(line.slice(eq + 1).trim());
    }
    return fields;
  }
  let data: unknown;
  try {
    // failsafe: every scalar stays the string written (a password 0123 must not become 123).
    data = parseYaml(text, { schema: 'failsafe' });
  } catch (err: unknown) {
    // The parser's message quotes the offending text, which may be the password: keep only where.
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new StalledError(
      'CREDENTIALS_INVALID',
      `the credentials file ${path} is neither KEY=VALUE lines nor valid YAML${line ? ` (line ${line})` : ''}`,
    );
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new StalledError(
      'CREDENTIALS_INVALID',
      `the credentials file ${path} must hold username and password`,
    );
  }
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k.toLowerCase(), v]));
}

function unquote(value: string): string {
  const q = value[0];
  if (value.length >= 2 && (q === '"' || q === "'") && value.endsWith(q)) return value.slice(1, -1);
  return value;
}

function toCredentials(source: string, fields: Record<string, unknown>): BootstrapCredentials {
  const { username, password } = fields;
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const pass = text(password);
  if (pass === undefined || pass === '') {
    throw new StalledError('CREDENTIALS_INVALID', `${source} has no password`);
  }
  const user = text(username);
  if (username !== undefined && username !== null && (user === undefined || user === '')) {
    throw new StalledError('CREDENTIALS_INVALID', `${source} has an empty or invalid username`);
  }
  return user !== undefined ? { username: user, password: pass } : { password: pass };
}

/** A Secret with data keys `username` (optional) and `password`, as the bootstrap cluster holds it. */
export async function readSecretCredentials(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<BootstrapCredentials> {
  // The Kubernetes client is large: loaded only when a Secret is read.
  const { ApiException, CoreV1Api } = await import('../kube/core-client.js');
  const source = `Secret ${namespace}/${name}`;
  let data: Record<string, string> | undefined;
  try {
    const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name, namespace });
    data = secret.data;
  } catch (err: unknown) {
    if (err instanceof ApiException && err.code === 404) {
      throw new StalledError('CREDENTIALS_MISSING', `${source} does not exist`);
    }
    if (err instanceof ApiException && (err.code === 401 || err.code === 403)) {
      throw new StalledError(
        'CREDENTIALS_FORBIDDEN',
        `bpa may not read ${source} (HTTP ${err.code})`,
      );
    }
    const why = err instanceof ApiException ? `HTTP ${err.code}` : messageOf(err);
    throw new TransientError('KUBE_API_ERROR', `cannot read ${source}: ${why}`, { cause: err });
  }
  const decode = (value: string | undefined): string | undefined =>
    value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  return toCredentials(source, {
    username: decode(data?.username),
    password: decode(data?.password),
  });
}
