/**
 * `bpa validate` on large sites of several shapes, as whole processes, against the parsing
 * floor: js-yaml 4 loadAll of the same files (bench/floor-parse.mjs). The floor and bpa run
 * alternately, median of `--runs`; with --peer, also ajv-cli validating the same documents
 * against the same schemas.
 *
 *   npx tsx bench/validate.ts [--shapes files,block,flow] [--runs 5] [--hosts 10000] [--peer]
 *     [--reference]   (also the least any validator can do: bench/floor-validate.mjs)
 *     [--bpa PATH]   (another build's bin/bpa, to compare before and after)
 *
 * Shapes are described in bench/gen-site.ts (SHAPES); clusters are hosts / 10.
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { benchArgs } from './args.js';
import { SHAPES, generateSite, type GeneratedSite } from './gen-site.js';
import { compare, measure, median, report, type Measured } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = benchArgs(process.argv.slice(2), { hosts: [10000] });
const rows: string[] = [];

for (const hosts of args.hosts) {
  for (const shape of args.shapes) {
    const out = join(root, 'bench', 'out', `validate-${shape}-${hosts}`);
    const site = await generateSite(join(out, 'site'), hosts / 10, hosts, shape);
    const label = `${shape} (${SHAPES[shape]}): ${site.hosts} hosts, ${site.files} files, ${site.documents} documents, ${(site.bytes / 1e6).toFixed(1)} MB`;
    const c = await compare(
      args.runs,
      () =>
        measure(process.execPath, [join(root, 'bench', 'floor-parse.mjs'), site.dir], {
          cwd: root,
        }),
      () =>
        measure(args.bpa ?? join(root, 'bin', 'bpa'), ['validate', '--format', 'json', site.dir]),
      (m) => {
        if (m.code !== 0)
          throw new Error(`bpa validate failed (${m.code}): ${m.stdout.slice(0, 2000)}`);
      },
    );
    console.log(report(label, c, 1.6));
    rows.push(
      `| ${shape} | ${site.files} | ${(site.bytes / 1e6).toFixed(1)} MB | ${c.floor.seconds.toFixed(2)} s | ${c.bpa.seconds.toFixed(2)} s | **${c.ratio.toFixed(2)}** | ${c.cpuRatio.toFixed(2)} | ${c.floor.peakMiB.toFixed(0)} / ${c.bpa.peakMiB.toFixed(0)} MiB | ${c.load[0].toFixed(1)}–${c.load[1].toFixed(1)} |`,
    );
    if (args.flags.has('reference')) {
      const ref = await median(args.runs, () =>
        measure(process.execPath, [join(root, 'bench', 'floor-validate.mjs'), site.dir], {
          cwd: root,
        }),
      );
      console.log(
        `  reference (parse, keep, schema-check only): ${ref.seconds.toFixed(2)} s, ${(ref.seconds / c.floor.seconds).toFixed(2)}× the floor, peak ${ref.peakMiB.toFixed(0)} MiB`,
      );
    }
    if (args.flags.has('peer')) await peer(site, out);
  }
}
console.log(
  '\n| shape | files | size | floor | bpa validate | bpa / floor | CPU bpa / floor | peak RSS floor / bpa | load |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);

/** ajv-cli reads one document per file: it gets the same documents split one per file, by kind. */
async function peer(site: GeneratedSite, out: string): Promise<void> {
  const peerDir = join(out, 'ajv-cli');
  await rm(peerDir, { recursive: true, force: true });
  const byKind = new Map<string, string[]>();
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (/\.ya?ml$/.test(e.name)) {
        const text = await readFile(p, 'utf8');
        for (const [i, chunk] of text.split(/^---\n/m).entries()) {
          const [doc] = loadAll(chunk, { schema: CORE_SCHEMA }) as Array<{ kind: string }>;
          const kind = doc?.kind ?? 'unknown';
          const name = `${p.slice(site.dir.length + 1).replace(/\//g, '_')}-${i}.yaml`;
          byKind.set(kind, [...(byKind.get(kind) ?? []), name]);
          await mkdir(join(peerDir, kind), { recursive: true });
          await writeFile(join(peerDir, kind, name), chunk);
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
  let seconds = 0;
  let peak = 0;
  for (const [kind, files] of byKind) {
    const schema = schemaFile[kind];
    if (!schema) throw new Error(`no schema for ${kind}`);
    const others = refs
      .filter((r) => r !== `${schema}.schema.json`)
      .flatMap((r) => ['-r', join(schemaDir, r)]);
    const m: Measured = await median(args.runs, () =>
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
    console.log(`  ajv-cli ${kind}: ${files.length} documents, ${m.seconds.toFixed(2)} s`);
    seconds += m.seconds;
    peak = Math.max(peak, m.peakMiB);
  }
  console.log(`  peer (ajv-cli, summed): ${seconds.toFixed(2)} s, peak ${peak.toFixed(0)} MiB`);
}
