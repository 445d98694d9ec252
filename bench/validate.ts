/**
 * bpa validate on a large site, against the parsing floor (js-yaml loadAll of the same files)
 * and the peer (ajv-cli validating the same documents against the same schemas).
 *
 *   npx tsx bench/validate.ts [clusters=1000] [hosts=10000] [runs=3]
 *
 * Prints wall time and peak RSS of each, as whole processes.
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { generateSite } from './gen-site.js';
import { fmt, measure, median } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const [clusters = 1000, hosts = 10000, runs = 3] = process.argv.slice(2).map(Number);
const out = join(root, 'bench', 'out', `validate-${clusters}-${hosts}`);
const site = await generateSite(join(out, 'site'), clusters, hosts);
console.log(
  `site: ${site.clusters} clusters, ${site.hosts} hosts, ${site.files} files, ${site.documents} documents, ${(site.bytes / 1e6).toFixed(1)} MB`,
);

const bpa = await median(runs, () =>
  measure(join(root, 'bin', 'bpa'), ['validate', '--format', 'json', site.dir]),
);
if (bpa.code !== 0)
  throw new Error(`bpa validate failed (${bpa.code}): ${bpa.stdout.slice(0, 2000)}`);
const floor = await median(runs, () =>
  measure(process.execPath, [join(root, 'bench', 'floor-parse.mjs'), site.dir], { cwd: root }),
);

// ajv-cli reads one document per file: give it the same documents split one per file, by kind.
const peerDir = join(out, 'ajv-cli');
await rm(peerDir, { recursive: true, force: true });
const byKind = new Map<string, string[]>();
const walk = async (dir: string): Promise<void> => {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p);
    else if (/\.ya?ml$/.test(e.name)) {
      const text = await readFile(p, 'utf8');
      const chunks = text.split(/^---\n/m);
      for (const [i, chunk] of chunks.entries()) {
        const [doc] = loadAll(chunk, { schema: CORE_SCHEMA }) as Array<{ kind: string }>;
        const kind = doc?.kind ?? 'unknown';
        const target = join(
          peerDir,
          kind,
          `${p.slice(site.dir.length + 1).replace(/\//g, '_')}-${i}.yaml`,
        );
        const list = byKind.get(kind) ?? [];
        list.push(target);
        byKind.set(kind, list);
        await mkdir(join(peerDir, kind), { recursive: true });
        await writeFile(target, chunk);
      }
    }
  }
};
await walk(site.dir);
const schemaFile: Record<string, string> = {
  Cluster: 'cluster',
  Provisioning: 'provisioning',
  Software: 'software',
  BareMetalHost: 'baremetalhost',
};
const schemaDir = join(root, 'schemas');
const refs = (await readdir(schemaDir)).filter((f) => f.endsWith('.schema.json'));
let peerSeconds = 0;
let peerPeak = 0;
for (const [kind, files] of byKind) {
  const schema = schemaFile[kind];
  if (!schema) throw new Error(`no schema for ${kind}`);
  const others = refs
    .filter((r) => r !== `${schema}.schema.json`)
    .flatMap((r) => ['-r', join(schemaDir, r)]);
  const m = await median(runs, () =>
    measure(join(root, 'node_modules', '.bin', 'ajv'), [
      'validate',
      '--strict=false',
      '-s',
      join(schemaDir, `${schema}.schema.json`),
      ...others,
      '-d',
      join(peerDir, kind, '*.yaml'),
    ]),
  );
  if (m.code !== 0) throw new Error(`ajv-cli failed for ${kind}: ${m.stdout.slice(0, 500)}`);
  console.log(`  ajv-cli ${kind}: ${files.length} documents, ${fmt(m)}`);
  peerSeconds += m.seconds;
  peerPeak = Math.max(peerPeak, m.peakMiB);
}

console.log(`bpa validate:            ${fmt(bpa)}`);
console.log(`floor (js-yaml loadAll): ${fmt(floor)}`);
console.log(
  `peer (ajv-cli, summed):  ${peerSeconds.toFixed(2)} s, peak ${peerPeak.toFixed(0)} MiB`,
);
console.log(
  `bpa / floor = ${(bpa.seconds / floor.seconds).toFixed(2)} (target ≤ 1.5), bpa / peer = ${(bpa.seconds / peerSeconds).toFixed(2)} (target < 1), peak ${bpa.peakMiB.toFixed(0)} MiB (target < 300)`,
);
