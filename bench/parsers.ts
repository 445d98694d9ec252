/**
 * The measurement behind the choice of parser (docs/PERFORMANCE.md): each JavaScript YAML
 * parser at hand reads the same files in one process, each in its own process run after the
 * others, median of `--runs` (the first read of a process, as `bpa validate` does it).
 *
 *   npx tsx bench/parsers.ts [--shapes block] [--runs 5] [--hosts 10000]
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { benchArgs } from './args.js';
import { generateSite } from './gen-site.js';

const PARSERS = {
  'js-yaml 4 loadAll, its core schema (the floor)': 'js4',
  "bpa's reading (parseFile: js-yaml 4 + merge keys, limits, checks listening)": 'bpa',
  'the same without the checks (readYaml, no listener)': 'plain',
  'yaml 2 parseAllDocuments + toJS': 'yaml',
} as const;

const root = fileURLToPath(new URL('..', import.meta.url));
const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  // One parser over one directory: print milliseconds.
  const [, , , which, dir] = process.argv;
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) files.push(p);
    }
  };
  walk(dir ?? '.');
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const parse = await parser(which ?? '');
  const t0 = performance.now();
  let docs = 0;
  for (const t of texts) docs += parse(t).length;
  console.log(JSON.stringify({ ms: performance.now() - t0, docs }));
} else {
  const args = benchArgs(process.argv.slice(2), { hosts: [10000] });
  const shapes =
    process.argv.includes('--shapes') || process.argv.includes('--shape')
      ? args.shapes
      : ['block' as const];
  for (const shape of shapes) {
    const site = await generateSite(
      join(root, 'bench', 'out', `parsers-${shape}`, 'site'),
      args.hosts[0]! / 10,
      args.hosts[0]!,
      shape,
    );
    console.log(
      `${shape}: ${site.files} files, ${site.documents} documents, ${(site.bytes / 1e6).toFixed(1)} MB`,
    );
    const runs = new Map<string, number[]>();
    for (let i = 0; i < args.runs; i++) {
      for (const [label, which] of Object.entries(PARSERS)) {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', self, '--child', which, site.dir],
          { cwd: root, maxBuffer: 1 << 24 },
        );
        const { ms } = JSON.parse(stdout) as { ms: number };
        runs.set(label, [...(runs.get(label) ?? []), ms]);
      }
    }
    for (const [label, ms] of runs) {
      const sorted = [...ms].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
      console.log(
        `  ${label.padEnd(76)} ${median.toFixed(0).padStart(5)} ms  (${(site.bytes / 1e3 / median).toFixed(1)} MB/s)   runs ${ms.map((m) => m.toFixed(0)).join(' ')}`,
      );
    }
  }
}

async function parser(which: string): Promise<(text: string) => unknown[]> {
  if (which === 'js4') {
    const y = await import('js-yaml');
    return (t) => y.loadAll(t, { schema: y.CORE_SCHEMA });
  }
  const { DEFAULT_LIMITS } = await import('../src/load/limits.js');
  const { parseFile, readYaml } = await import('../src/load/parse.js');
  if (which === 'bpa') return (t) => parseFile('f.yaml', t, DEFAULT_LIMITS).documents;
  if (which === 'plain') return (t) => readYaml(t, DEFAULT_LIMITS);
  const yaml = await import('yaml');
  return (t) => yaml.parseAllDocuments(t).map((d) => d.toJS() as unknown);
}
