/**
 * Package installation on 10 lab hosts (real apt-get and dpkg, each host with its own package
 * database, from a local repository), in parallel vs one host after another, through bpa's
 * own package executor. Needs root (the lab).
 *
 *   npx tsx bench/packages.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshPackages } from '../src/apply/packages/ssh-packages.js';
import { SshPool } from '../src/ssh/index.js';
import type { PackageChange, PlannedNode } from '../src/plan/index.js';
import { silentLogger } from '../src/util/log.js';
import { startAptRepo } from '../test/lab/apt-repo.js';
import { canRunLab, startLab } from '../test/lab/lab.js';

const can = canRunLab({ isolatedPackages: true });
if (!can.ok) {
  console.log(`cannot run: ${can.reason}`);
  process.exit(0);
}
const HOSTS = 10;
const lab = await startLab({ hosts: HOSTS, isolatedPackages: true });
const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-packages-'));
const payload = (name: string): Record<string, string> => ({
  [`/usr/share/bpa-bench/${name}.txt`]: 'x'.repeat(200_000),
});
const specs = ['p', 's'].flatMap((set) =>
  [1, 2, 3].map((i) => ({
    name: `bpa-bench-${set}${i}`,
    version: '1.0-1',
    files: payload(`${set}${i}`),
  })),
);
const repo = await startAptRepo(lab, specs);
try {
  const pool = new SshPool({
    privateKeyPath: lab.keyPath,
    knownHostsFile: join(tmp, 'known_hosts.json'),
  });
  const nodes: PlannedNode[] = lab.hosts.map((h) => ({
    name: h.name,
    roles: ['worker'],
    host: h.name,
    mac: h.mac,
    ip: h.ip,
    ipSource: 'lease',
    change: 'keep',
    placement: '',
  }));
  const changes = (set: string): PackageChange[] =>
    nodes.flatMap((n) =>
      [1, 2, 3].map((i) => ({ node: n.name, name: `bpa-bench-${set}${i}`, to: '1.0-1' })),
    );
  const run = async (parallel: number, set: string): Promise<{ wall: number; per: number[] }> => {
    const exec = new SshPackages({
      pool,
      user: 'root',
      port: 22,
      maxParallelHosts: parallel,
      packageMirror: repo.sourceLine,
      timeoutMs: 300_000,
      log: silentLogger(),
    });
    const started = performance.now();
    const results = await exec.apply('bench', nodes, changes(set), 'install');
    const wall = (performance.now() - started) / 1000;
    const bad = results.filter((r) => !r.ok);
    if (bad.length) throw new Error(`install failed: ${JSON.stringify(bad[0]?.error)}`);
    return { wall, per: results.map((r) => (r.durationMs ?? 0) / 1000) };
  };
  // Warm the SSH connections (host keys pinned) so both runs start alike.
  await Promise.all(
    nodes.map((n) => pool.run({ node: n.name, address: n.ip, port: 22, user: 'root' }, ['true'])),
  );
  const seq = await run(1, 's');
  const par = await run(HOSTS, 'p');
  const slowestAlone = Math.max(...seq.per);
  const slowestInParallel = Math.max(...par.per);
  console.log(
    `one after another: ${seq.wall.toFixed(2)} s (per host ${Math.min(...seq.per).toFixed(2)}–${slowestAlone.toFixed(2)} s)`,
  );
  console.log(
    `in parallel (${HOSTS}):   ${par.wall.toFixed(2)} s (per host ${Math.min(...par.per).toFixed(2)}–${slowestInParallel.toFixed(2)} s)`,
  );
  console.log(
    `sequential / parallel = ${(seq.wall / par.wall).toFixed(2)}×; parallel / slowest single host = ${(par.wall / slowestAlone).toFixed(2)}× (target ≤ 1.5×)`,
  );
  console.log(
    `bpa's overhead beyond the slowest host in the parallel run: ${((par.wall - slowestInParallel) * 1000).toFixed(0)} ms`,
  );
  await pool.close();
} finally {
  await repo.stop();
  await lab.stop();
  await rm(tmp, { recursive: true, force: true });
}
