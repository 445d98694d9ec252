/**
 * Provisioning time of a 3-host and a 9-host lab cluster with the reference installer,
 * split into the installer's time and bpa's own overhead (everything else in the
 * `bpa reconcile --once` process: start-up, validation, planning, SSH checks, journal,
 * publishing). Needs root (the lab).
 *
 *   npm run build && npx tsx bench/provision.ts [runs=3]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canRunLab, startLab } from '../test/lab/lab.js';
import { writeLabSite, type LabSiteNode } from '../test/integration/apply/lab-site.js';
import { measure } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.argv[2] ?? 3);
const can = canRunLab({ isolatedPackages: true });
if (!can.ok) {
  console.log(`cannot run: ${can.reason}`);
  process.exit(0);
}
const wrapper = join(root, 'bench', 'timed-installer.sh');

for (const [hosts, masters] of [
  [3, 1],
  [9, 3],
] as const) {
  const lab = await startLab({ hosts, isolatedPackages: true });
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-provision-'));
  try {
    const nodes: LabSiteNode[] = lab.hosts.map((_, i) => ({
      name: i < masters ? `master-${i + 1}` : `worker-${i - masters + 1}`,
      roles: [i < masters ? 'master' : 'worker'],
      host: i,
    }));
    const site = await writeLabSite(lab.hosts, { cluster: 'bench', nodes }, join(tmp, 'site'));
    const samples: Array<{ total: number; installer: number; peak: number }> = [];
    for (let r = 0; r < runs; r++) {
      const state = join(tmp, `state-${r}`);
      const times = join(tmp, `times-${r}`);
      const args = [
        'reconcile',
        '--once',
        site,
        '--state',
        state,
        '--leases',
        lab.leaseFile,
        '--ssh-key',
        lab.keyPath,
        '--installer-command',
        `${wrapper} cluster {clusterDir} {inventory}`,
        '--log-level',
        'warn',
      ];
      process.env['BPA_BENCH_TIMES'] = times;
      const m = await measure(join(root, 'bin', 'bpa'), args);
      if (m.code !== 0) throw new Error(`reconcile failed (${m.code}): ${m.stdout.slice(-2000)}`);
      const installer =
        (await readFile(times, 'utf8'))
          .trim()
          .split('\n')
          .map(Number)
          .reduce((a, b) => a + b, 0) / 1000;
      samples.push({ total: m.seconds, installer, peak: m.peakMiB });
      // Next run starts from scratch on the same hosts: markers are rewritten, which is what a provision does.
    }
    samples.sort((a, b) => a.total - b.total);
    const med = samples[Math.floor(samples.length / 2)]!;
    const overhead = med.total - med.installer;
    console.log(
      `${hosts} hosts (${masters} masters): total ${med.total.toFixed(2)} s = installer ${med.installer.toFixed(2)} s + bpa ${overhead.toFixed(2)} s (${((overhead / med.total) * 100).toFixed(1)}% of the whole; target < 5%), peak ${med.peak.toFixed(0)} MiB; runs: ${samples.map((s) => `${s.total.toFixed(2)}/${s.installer.toFixed(2)}`).join(', ')}`,
    );
  } finally {
    await lab.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
