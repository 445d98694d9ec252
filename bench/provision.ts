/**
 * Provisioning time of lab clusters, split into the installer's time and bpa's own overhead
 * (everything else in the `bpa reconcile --once` process: start-up, validation, planning, SSH
 * checks, journal, publishing). Needs root (the lab).
 *
 * - reference: the reference installer provisions a 3-host and a 9-host cluster.
 * - kubespray: the Kubespray-shaped stand-in (installer/kubespray-standin), run by the
 *   kubespray flavour's default commands from --kubespray-dir, provisions a 3-host and a
 *   9-host cluster, then scales each by one worker.
 *
 *   npm run build && npx tsx bench/provision.ts [runs=3] [reference|kubespray|all]
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canRunLab, startLab, type Lab } from '../test/lab/lab.js';
import {
  updateLabSite,
  writeLabSite,
  type LabSiteNode,
} from '../test/integration/apply/lab-site.js';
import { measure } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.argv[2] ?? 3);
const which = process.argv[3] ?? 'all';
const can = canRunLab({ isolatedPackages: true });
if (!can.ok) {
  console.log(`cannot run: ${can.reason}`);
  process.exit(0);
}
const bpa = join(root, 'bin', 'bpa');

interface Sample {
  total: number;
  installer: number;
  peak: number;
}

/** The installer's wall time recorded by the timing wrapper, in seconds. */
async function installerSeconds(times: string): Promise<number> {
  return (
    (await readFile(times, 'utf8'))
      .trim()
      .split('\n')
      .map(Number)
      .reduce((a, b) => a + b, 0) / 1000
  );
}

/** One `bpa reconcile --once`, its installer time taken from `times` (reset per run). */
async function timed(args: string[], times: string): Promise<Sample> {
  process.env['BPA_BENCH_TIMES'] = times;
  const m = await measure(bpa, args);
  if (m.code !== 0) throw new Error(`reconcile failed (${m.code}): ${m.stdout.slice(-2000)}`);
  return { total: m.seconds, installer: await installerSeconds(times), peak: m.peakMiB };
}

function report(what: string, samples: Sample[]): void {
  samples.sort((a, b) => a.total - b.total);
  const med = samples[Math.floor(samples.length / 2)]!;
  const overhead = med.total - med.installer;
  console.log(
    `${what}: total ${med.total.toFixed(2)} s = installer ${med.installer.toFixed(2)} s + bpa ${overhead.toFixed(2)} s (${((overhead / med.total) * 100).toFixed(1)}% of the whole; target < 5%), peak ${med.peak.toFixed(0)} MiB; runs: ${samples.map((s) => `${s.total.toFixed(2)}/${s.installer.toFixed(2)}`).join(', ')}`,
  );
}

function nodesOf(lab: Lab, count: number, masters: number): LabSiteNode[] {
  return lab.hosts.slice(0, count).map((_, i) => ({
    name: i < masters ? `master-${i + 1}` : `worker-${i - masters + 1}`,
    roles: [i < masters ? 'master' : 'worker'],
    host: i,
  }));
}

async function reference(hosts: number, masters: number): Promise<void> {
  const wrapper = join(root, 'bench', 'timed-installer.sh');
  const lab = await startLab({ hosts, isolatedPackages: true });
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-provision-'));
  try {
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'bench', nodes: nodesOf(lab, hosts, masters) },
      join(tmp, 'site'),
    );
    const samples: Sample[] = [];
    for (let r = 0; r < runs; r++) {
      // Each run starts from scratch on the same hosts: markers are rewritten, as a provision does.
      const args = ['reconcile', '--once', site, '--state', join(tmp, `state-${r}`)];
      args.push('--leases', lab.leaseFile, '--ssh-key', lab.keyPath, '--log-level', 'warn');
      args.push('--installer-command', `${wrapper} cluster {clusterDir} {inventory}`);
      samples.push(await timed(args, join(tmp, `times-${r}`)));
    }
    report(`reference, ${hosts} hosts (${masters} master${masters === 1 ? '' : 's'})`, samples);
  } finally {
    await lab.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Provision hosts-1 nodes, then scale by the last host, with the kubespray flavour's defaults. */
async function kubespray(hosts: number, masters: number): Promise<void> {
  const lab = await startLab({ hosts, isolatedPackages: true });
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-kubespray-'));
  // The timing wrapper stands first on PATH as ansible-playbook: the commands stay bpa's defaults.
  const real = execFileSync('sh', ['-c', 'command -v ansible-playbook'], { encoding: 'utf8' });
  await mkdir(join(tmp, 'bin'));
  await symlink(
    join(root, 'bench', 'timed-ansible-playbook.sh'),
    join(tmp, 'bin', 'ansible-playbook'),
  );
  const saved = { path: process.env['PATH'], real: process.env['BPA_BENCH_ANSIBLE_PLAYBOOK'] };
  process.env['PATH'] = `${join(tmp, 'bin')}:${process.env['PATH'] ?? ''}`;
  process.env['BPA_BENCH_ANSIBLE_PLAYBOOK'] = real.trim();
  try {
    const all = nodesOf(lab, hosts, masters);
    const first = all.slice(0, -1);
    const provision: Sample[] = [];
    const scale: Sample[] = [];
    for (let r = 0; r < runs; r++) {
      const site = await writeLabSite(
        lab.hosts,
        { cluster: 'bench', nodes: first },
        join(tmp, `site-${r}`),
      );
      const args = ['reconcile', '--once', site, '--state', join(tmp, `state-${r}`)];
      args.push('--leases', lab.leaseFile, '--ssh-key', lab.keyPath, '--log-level', 'warn');
      args.push('--flavour', 'kubespray');
      args.push('--kubespray-dir', join(root, 'installer', 'kubespray-standin'));
      provision.push(await timed(args, join(tmp, `provision-times-${r}`)));
      await updateLabSite(site, lab.hosts, { cluster: 'bench', nodes: all });
      scale.push(await timed(args, join(tmp, `scale-times-${r}`)));
    }
    report(
      `kubespray stand-in, provision ${hosts - 1} hosts (${masters} master${masters === 1 ? '' : 's'})`,
      provision,
    );
    report(`kubespray stand-in, scale ${hosts - 1} → ${hosts} hosts`, scale);
  } finally {
    process.env['PATH'] = saved.path;
    if (saved.real === undefined) delete process.env['BPA_BENCH_ANSIBLE_PLAYBOOK'];
    else process.env['BPA_BENCH_ANSIBLE_PLAYBOOK'] = saved.real;
    await lab.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

for (const [hosts, masters] of [
  [3, 1],
  [9, 3],
] as const) {
  if (which === 'all' || which === 'reference') await reference(hosts, masters);
}
// One host more than the cluster, for the scale: 1 master + 2 workers + 1, 3 masters + 6 workers + 1.
for (const [hosts, masters] of [
  [4, 1],
  [10, 3],
] as const) {
  if (which === 'all' || which === 'kubespray') await kubespray(hosts, masters);
}
