/**
 * `bpa plan` on large sites of several shapes (half the nodes pinned by MAC, half placed by
 * resources, one dnsmasq lease per host given with --leases, an empty state), as whole
 * processes, against the parsing floor: js-yaml 4 loadAll of the same files
 * (bench/floor-parse.mjs). The floor and bpa run alternately, median of `--runs`.
 *
 *   npx tsx bench/plan.ts [--shapes files,block,flow] [--runs 5] [--hosts 10000[,20000…]] [--bpa PATH]
 *
 * Shapes are described in bench/gen-site.ts (SHAPES); clusters are hosts / 10. With several
 * host counts, the growth of bpa's time from 10,000 to 20,000 hosts is printed too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './args.js';
import { SHAPES, generateSite } from './gen-site.js';
import { compare, measure, report, type Measured } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = benchArgs(process.argv.slice(2), { hosts: [10000] });
const rows: string[] = [];
const times = new Map<string, Measured>();

for (const hosts of args.hosts) {
  for (const shape of args.shapes) {
    const site = await generateSite(
      join(root, 'bench', 'out', `plan-${shape}-${hosts}`, 'site'),
      hosts / 10,
      hosts,
      shape,
    );
    const label = `${shape} (${SHAPES[shape]}): ${site.hosts} hosts and leases, ${site.files} files, ${site.documents} documents, ${(site.bytes / 1e6).toFixed(1)} MB`;
    const state = await mkdtemp(join(tmpdir(), 'bpa-bench-state-'));
    try {
      const c = await compare(
        args.runs,
        () => measure(process.execPath, [join(root, 'bench', 'floor-parse.mjs'), site.dir]),
        () =>
          measure(args.bpa ?? join(root, 'bin', 'bpa'), [
            'plan',
            site.dir,
            '--leases',
            site.leaseFile,
            '--state',
            state,
            '-o',
            'json',
          ]),
        (m) => {
          if (m.code !== 2)
            throw new Error(`bpa plan exited ${m.code}: ${m.stdout.slice(0, 2000)}`);
          const plan = JSON.parse(m.stdout) as { problems: unknown[] };
          if (plan.problems.length)
            throw new Error(`unexpected problems: ${JSON.stringify(plan.problems.slice(0, 3))}`);
        },
      );
      console.log(report(label, c, 2.3));
      rows.push(
        `| ${shape} | ${hosts} | ${site.files} | ${(site.bytes / 1e6).toFixed(1)} MB | ${c.floor.seconds.toFixed(2)} s | ${c.bpa.seconds.toFixed(2)} s | **${c.ratio.toFixed(2)}** | ${c.cpuRatio.toFixed(2)} | ${c.floor.peakMiB.toFixed(0)} / ${c.bpa.peakMiB.toFixed(0)} MiB | ${c.load[0].toFixed(1)}–${c.load[1].toFixed(1)} |`,
      );
      times.set(`${shape}-${hosts}`, c.bpa);
    } finally {
      await rm(state, { recursive: true, force: true });
    }
  }
}
console.log(
  '\n| shape | hosts | files | size | floor | bpa plan | bpa / floor | CPU bpa / floor | peak RSS floor / bpa | load |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
for (const shape of args.shapes) {
  const ten = times.get(`${shape}-10000`);
  const twenty = times.get(`${shape}-20000`);
  if (ten && twenty)
    console.log(
      `${shape}: growth 10k → 20k ${(twenty.seconds / ten.seconds).toFixed(2)}× (budget ≤ 2.3×)`,
    );
}
