/**
 * bpa plan on large sites (half the nodes pinned by MAC, half placed by resources, one
 * dnsmasq lease per host), as a whole process, against the parsing floor (js-yaml loadAll
 * of the same files).
 *
 *   npx tsx bench/plan.ts [runs=3] [hosts...=2000 10000 20000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSite } from './gen-site.js';
import { fmt, measure, median, type Measured } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const [runsArg, ...sizesArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 3);
const sizes = sizesArg.length ? sizesArg.map(Number) : [2000, 10000, 20000];
const results: Array<{ hosts: number; bpa: Measured; floor: Measured }> = [];

for (const hosts of sizes) {
  const clusters = hosts / 10;
  const site = await generateSite(
    join(root, 'bench', 'out', `plan-${hosts}`, 'site'),
    clusters,
    hosts,
  );
  const state = await mkdtemp(join(tmpdir(), 'bpa-bench-state-'));
  const bpa = await median(runs, () =>
    measure(join(root, 'bin', 'bpa'), [
      'plan',
      site.dir,
      '--leases',
      site.leaseFile,
      '--state',
      state,
      '-o',
      'json',
    ]),
  );
  await rm(state, { recursive: true, force: true });
  if (bpa.code !== 2) throw new Error(`bpa plan exited ${bpa.code}: ${bpa.stdout.slice(0, 2000)}`);
  const plan = JSON.parse(bpa.stdout) as {
    problems: unknown[];
    clusters: Array<{ actions: unknown[] }>;
  };
  if (plan.problems.length)
    throw new Error(`unexpected problems: ${JSON.stringify(plan.problems.slice(0, 3))}`);
  const floor = await median(runs, () =>
    measure(process.execPath, [join(root, 'bench', 'floor-parse.mjs'), site.dir]),
  );
  console.log(
    `${hosts} hosts, ${clusters} clusters, ${site.documents} documents, ${(site.bytes / 1e6).toFixed(1)} MB:`,
  );
  console.log(
    `  bpa plan: ${fmt(bpa)}   floor: ${fmt(floor)}   ratio ${(bpa.seconds / floor.seconds).toFixed(2)}`,
  );
  results.push({ hosts, bpa, floor });
}
const at = (h: number): Measured | undefined => results.find((r) => r.hosts === h)?.bpa;
const ten = at(10000);
const twenty = at(20000);
if (ten && twenty)
  console.log(`growth 10k → 20k: ${(twenty.seconds / ten.seconds).toFixed(2)}× (target ≤ 2.3×)`);
