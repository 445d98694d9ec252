import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, loadAll } from 'js-yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const DEPLOY_DIR = join(ROOT, 'deploy');

export type Obj = Record<string, unknown>;

export interface Manifest {
  /** Path relative to deploy/. */
  file: string;
  doc: Obj;
}

/** Every file under `dir`, relative to it, sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string): void => {
    for (const name of readdirSync(join(dir, sub)).sort()) {
      const rel = sub ? `${sub}/${name}` : name;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else out.push(rel);
    }
  };
  walk('');
  return out;
}

export function isYaml(file: string): boolean {
  return file.endsWith('.yaml') || file.endsWith('.yml');
}

/** Every document of every YAML file in deploy/, parsed as the YAML 1.2 core schema. */
export function loadManifests(): Manifest[] {
  const out: Manifest[] = [];
  for (const file of filesUnder(DEPLOY_DIR).filter(isYaml)) {
    const docs = loadAll(readFileSync(join(DEPLOY_DIR, file), 'utf8'), { schema: CORE_SCHEMA });
    for (const doc of docs) {
      if (doc === null || doc === undefined) continue;
      if (typeof doc !== 'object' || Array.isArray(doc))
        throw new Error(`${file}: a document is not a map`);
      out.push({ file, doc: doc as Obj });
    }
  }
  return out;
}

/** The one object of a kind (and name); throws when there is not exactly one. */
export function only(manifests: readonly Manifest[], kind: string, name?: string): Obj {
  const found = manifests.filter(
    (m) => m.doc.kind === kind && (name === undefined || meta(m.doc).name === name),
  );
  if (found.length !== 1)
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return (found[0] as Manifest).doc;
}

export function meta(doc: Obj): {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
} {
  return (doc.metadata ?? {}) as {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
  };
}

/** A value at a dotted path, or undefined. */
export function dig(value: unknown, path: string): unknown {
  let cur = value;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Obj)[key];
  }
  return cur;
}

export function relativeToRoot(path: string): string {
  return relative(ROOT, path);
}
