/**
 * Rolling node changes at 30 nodes (3 masters, 27 workers), simulated: the real rollout
 * (src/apply/rollout/roll.ts), the real journal in a temp directory, and the real
 * KubeNodeOps driving a protocol fake of the cluster's API through @kubernetes/client-node
 * (cordon, list pods, evict one pod per node, read the node, uncordon). The change itself is a
 * fixed wait standing in for apt (CHANGE_MS); nodes are Ready at once. For maxUnavailable 1, 3
 * and 10 it prints the wall time against the ideal ceil(n / maxUnavailable) × per-node time
 * (and against the ideal with masters one at a time, which bpa enforces), and bpa's own
 * overhead per node: wall time minus the simulated changes, per node.
 *
 *   npx tsx bench/rollout.ts
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { rollPackages } from '../src/apply/rollout/roll.js';
import { KubeNodeOps } from '../src/apply/rollout/kube-nodes.js';
import type { PackagePort } from '../src/apply/ports.js';
import type { PlannedNode } from '../src/plan/index.js';
import { Journal } from '../src/state/journal.js';
import { silentLogger } from '../src/util/log.js';
import type { RolloutSettings } from '../src/validate/model.js';
import { readyNode, startFakeKube } from '../test/fakes/kube-api-server.js';

const N = 30;
const MASTERS = 3;
const CHANGE_MS = Number(process.env['CHANGE_MS'] ?? 300);

function nodes(): PlannedNode[] {
  return Array.from({ length: N }, (_, i) => ({
    name: i < MASTERS ? `master-${i + 1}` : `worker-${i - MASTERS + 1}`,
    roles: [i < MASTERS ? 'master' : 'worker'],
    host: `metal3/node-${i + 1}`,
    mac: `52:54:00:00:01:${i.toString(16).padStart(2, '0')}`,
    ip: `198.18.1.${i + 10}`,
    ipSource: 'inventory',
    change: 'keep',
    placement: 'bench',
  }));
}

async function once(maxUnavailable: number): Promise<{ wallMs: number; batches: number }> {
  const kube = await startFakeKube();
  const dir = await mkdtemp(join(tmpdir(), 'bpa-bench-rollout-'));
  try {
    const list = nodes();
    for (const n of list) {
      kube.put(readyNode(n.name));
      kube.put({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `app-${n.name}`, namespace: 'apps' },
        spec: { nodeName: n.name, containers: [{ name: 'c', image: 'x' }] },
      });
    }
    const journal = await Journal.open(dir, 'bench');
    const packages: PackagePort = {
      apply: async (_c, ns) => {
        await new Promise((r) => setTimeout(r, CHANGE_MS));
        return ns.map((n) => ({ node: n.name, ok: true, installed: { jq: '1.7' } }));
      },
    };
    const rollout: RolloutSettings = {
      maxUnavailable,
      drain: {
        enabled: true,
        timeoutMs: 60_000,
        ignoreDaemonSets: true,
        deleteEmptyDirData: false,
      },
      healthCheck: { timeoutMs: 60_000 },
    };
    const started = performance.now();
    await rollPackages({
      cluster: 'bench',
      clusterSize: N,
      nodes: list,
      changes: list.map((n) => ({ node: n.name, name: 'jq', to: '1.7' })),
      mode: 'upgrade',
      rollout,
      packages,
      ops: new KubeNodeOps({
        kubeconfig: () => readFile(kube.kubeconfigPath, 'utf8'),
        log: silentLogger(),
        pollMs: 20,
      }),
      step: async (name, fn) => {
        const key = `bench:${name}`;
        const prev = journal.get(key);
        await journal.start(key, 'upgrade-packages', name);
        await fn({ previous: prev, record: (data) => journal.update(key, data) });
        await journal.finish(key, 'done');
      },
      onResult: () => undefined,
      log: silentLogger(),
    });
    // Masters one at a time, then the workers maxUnavailable at a time (rollout/roll.ts).
    const batches = MASTERS + Math.ceil((N - MASTERS) / maxUnavailable);
    return { wallMs: performance.now() - started, batches };
  } finally {
    await kube.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(
  `rolling change of ${N} nodes (${MASTERS} masters), simulated change ${CHANGE_MS} ms per node, drain = 1 eviction per node, Ready at once`,
);
console.log(
  'maxUnavailable  wall (s)  ideal ceil(n/k)×t (s)  ideal, masters 1 by 1 (s)  overhead per node (ms)',
);
await once(3); // warm-up: module loading, first connections
for (const k of [1, 3, 10]) {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await once(k));
  const best = runs.reduce((a, b) => (a.wallMs < b.wallMs ? a : b));
  const ideal = Math.ceil(N / k) * CHANGE_MS;
  const idealMasters = best.batches * CHANGE_MS;
  const overheadPerNode = (best.wallMs - idealMasters) / N;
  console.log(
    `${String(k).padStart(14)}  ${(best.wallMs / 1000).toFixed(2).padStart(8)}  ${(ideal / 1000).toFixed(2).padStart(21)}  ${(idealMasters / 1000).toFixed(2).padStart(25)}  ${overheadPerNode.toFixed(1).padStart(21)}`,
  );
}
