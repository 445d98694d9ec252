/**
 * Every BareMetalHost bpa's repository shows or feeds itself: the example site, the sites the
 * test fakes and the lab write, the benchmark's generated site, the YAML blocks of the README
 * and docs. test/unit/deploy/metal3-fixtures.test.ts checks them with ajv against metal3's CRD
 * schema; test/integration/kube/metal3-fixtures.test.ts creates them on a real kube-apiserver.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { generateSite } from '../../bench/gen-site.js';
import { writeSite } from '../fakes/site.js';
import { writeResourceSite } from '../fakes/resource-site.js';
import { writeLabSite } from '../integration/apply/lab-site.js';
import type { LabHost } from '../lab/lab.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** metal3's CRDs, kept beside the repository. */
export const METAL3_CRDS = join(ROOT, '..', 'shared', 'real-world', 'metal3', 'crds');

export type Json = Record<string, unknown>;

export interface Found {
  /** Where it comes from: a file (with the line of a docs block) or a generator. */
  where: string;
  doc: Json;
}

export const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The newest BareMetalHost CRD there (by its metadata annotations' controller-gen version). */
export function bmhSchema(): Json {
  const files = readdirSync(METAL3_CRDS).filter((f) => f.startsWith('metal3.io_baremetalhosts.'));
  assert.equal(files.length, 1, `one BareMetalHost CRD in ${METAL3_CRDS}: ${files.join(', ')}`);
  const crd = parseAllDocuments(
    readFileSync(join(METAL3_CRDS, files[0] as string), 'utf8'),
  )[0]?.toJS();
  const versions = (crd as { spec: { versions: Array<{ name: string; schema: Json }> } }).spec
    .versions;
  const v1alpha1 = versions.find((v) => v.name === 'v1alpha1');
  assert.ok(v1alpha1, 'the CRD serves v1alpha1');
  return closed(structuredClone(v1alpha1.schema.openAPIV3Schema) as Json);
}

/**
 * An object schema with properties and no other opening takes only those properties, as the
 * API server's pruning keeps only them: a fixture's extra field would vanish on a real server.
 */
function closed(node: Json): Json {
  if (
    isObject(node.properties) &&
    node.additionalProperties === undefined &&
    node['x-kubernetes-preserve-unknown-fields'] !== true
  )
    node.additionalProperties = false;
  for (const child of Object.values(isObject(node.properties) ? node.properties : {}))
    if (isObject(child)) closed(child);
  if (isObject(node.items)) closed(node.items);
  if (isObject(node.additionalProperties)) closed(node.additionalProperties);
  return node;
}

const isBmh = (d: unknown): d is Json =>
  isObject(d) && d.kind === 'BareMetalHost' && String(d.apiVersion).startsWith('metal3.io/');

export function bmhsOfText(text: string, where: string): Found[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter(isBmh)
    .map((doc) => ({ where, doc }));
}

export function filesUnder(dir: string, ext: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => ext.test(f))
    .map((f) => join(dir, f));
}

/** Fenced yaml blocks of the README and docs that hold a BareMetalHost. */
export function docsBlocks(): Found[] {
  const pages = [join(ROOT, 'README.md'), ...filesUnder(join(ROOT, 'docs'), /\.md$/)];
  const out: Found[] = [];
  for (const page of pages) {
    const lines = readFileSync(page, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*```ya?ml\s*$/.test(lines[i] as string)) continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && !/^\s*```\s*$/.test(lines[end] as string)) end++;
      const block = lines.slice(start, end).join('\n');
      if (/kind:\s*BareMetalHost\b/.test(block))
        out.push(...bmhsOfText(block, `${relative(ROOT, page)}:${start + 1}`));
      i = end;
    }
  }
  return out;
}

async function inventoryOf(dir: string, label: string): Promise<Found[]> {
  const out: Found[] = [];
  for (const f of await readdir(join(dir, 'inventory'), { recursive: true })) {
    if (!/\.ya?ml$/.test(f)) continue;
    out.push(...bmhsOfText(await readFile(join(dir, 'inventory', f), 'utf8'), `${label} ${f}`));
  }
  return out;
}

/** The sites the tests and the benchmark write, each generated into a scratch directory. */
export async function generated(tmp: string): Promise<Found[]> {
  const out: Found[] = [];
  await writeSite(join(tmp, 'site'), { nodes: [] });
  out.push(...(await inventoryOf(join(tmp, 'site'), 'test/fakes/site.ts')));
  await writeResourceSite(join(tmp, 'resource'), { workers: 1, jq: '1.6' });
  out.push(...(await inventoryOf(join(tmp, 'resource'), 'test/fakes/resource-site.ts')));
  const lab = [{ name: 'lab-1', mac: '52:54:00:aa:00:01', ip: '10.0.0.11' }] as unknown[];
  await writeLabSite(lab as LabHost[], { nodes: [] }, join(tmp, 'lab'));
  out.push(...(await inventoryOf(join(tmp, 'lab'), 'test/integration/apply/lab-site.ts')));
  for (const shape of ['block', 'flow', 'files', 'terms'] as const) {
    const dir = join(tmp, `bench-${shape}`);
    await generateSite(dir, 1, 12, shape);
    out.push(...(await inventoryOf(dir, `bench/gen-site.ts (${shape})`)));
  }
  return out;
}

/** Every fixture: sites/, the docs, and the generators' output (written under `tmp`). */
export async function allFixtures(
  tmp: string,
): Promise<{ sites: Found[]; docs: Found[]; all: Found[] }> {
  const sites = filesUnder(join(ROOT, 'sites'), /\.ya?ml$/).flatMap((f) =>
    bmhsOfText(readFileSync(f, 'utf8'), relative(ROOT, f)),
  );
  const docs = docsBlocks();
  return { sites, docs, all: [...sites, ...docs, ...(await generated(tmp))] };
}

/** Each source is really read: an empty list would pass whatever the check says. */
export function assertEverySourceRead(f: { sites: Found[]; docs: Found[]; all: Found[] }): void {
  assert.ok(f.sites.length >= 10, `sites/example's hosts read (${f.sites.length})`);
  assert.ok(f.docs.length >= 1, 'the docs hold a BareMetalHost example');
  for (const source of [
    'test/fakes/site.ts',
    'test/fakes/resource-site.ts',
    'test/integration/apply/lab-site.ts',
    'bench/gen-site.ts',
  ])
    assert.ok(
      f.all.some((x) => x.where.startsWith(source)),
      `${source} writes BareMetalHosts`,
    );
}
