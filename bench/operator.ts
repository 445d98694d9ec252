/**
 * Operator mode (`bpa serve --source kubernetes`) against a real kube-apiserver
 * (test/k8s/envtest.ts): 1,000 Clusters (with their Provisioning and Software objects) and
 * 10,000 BareMetalHosts (status and hardware as metal3 writes them) in one namespace, the site
 * suspended so that nothing is applied.
 *   (a) latency from an object's update (the API's answer) to the start of the reconcile it
 *       triggers, over --changes updates (target < 1 s);
 *   (b) RSS of the serve process once the site is watched and reconciled (target < 300 MB).
 * serve runs under the memory limit deploy/deployment.yaml gives bpa's container, in a memory
 * cgroup as the kubelet puts it (root): Node.js sizes its heap from that limit, so the
 * process collects its garbage as it would in the Deployment. `--memory-limit 0`: no limit
 * (Node.js then sizes its heap from the machine's memory).
 * After `npm run build` (it runs bin/bpa), with the kube-apiserver binaries cached
 * (scripts/kube-apiserver.sh):
 *   npx tsx bench/operator.ts [--clusters 1000] [--hosts 10000] [--changes 10]
 *     [--memory-limit MiB]   (default: the Deployment's)
 *     [--snapshot DIR]   (a heap snapshot of the serve process after the measures, to see what
 *                        holds its memory: open it in Chrome DevTools' Memory tab)
 */
import { mkdir, readFile, mkdtemp, readdir, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  bpaNamespace,
  kubeAssets,
  sharedKubeServer,
  stopSharedKubeServer,
} from '../test/k8s/envtest.js';
import { createObject, type KubeObjectIn } from '../test/k8s/kube-objects.js';
import { BPA, waitFor } from '../test/integration/apply/harness.js';
import { generateSite } from './gen-site.js';

const API = '/apis/bpa.akraino.org/v1alpha1';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

async function documents(dir: string): Promise<KubeObjectIn[]> {
  const out: KubeObjectIn[] = [];
  for (const f of (await readdir(dir)).sort())
    for (const d of parseAllDocuments(await readFile(join(dir, f), 'utf8')))
      out.push(d.toJS() as KubeObjectIn);
  return out;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T>(items: T[], width: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** The memory limit deploy/deployment.yaml gives the bpa container, in MiB. */
async function deploymentMemoryLimit(): Promise<number> {
  const text = await readFile(new URL('../deploy/deployment.yaml', import.meta.url), 'utf8');
  for (const d of parseAllDocuments(text)) {
    const containers = (d.toJS() as { spec?: { template?: { spec?: { containers?: unknown } } } })
      ?.spec?.template?.spec?.containers as
      Array<{ name: string; resources?: { limits?: { memory?: string } } }> | undefined;
    const memory = containers?.find((c) => c.name === 'bpa')?.resources?.limits?.memory;
    const m = memory ? /^(\d+)(Mi|Gi)$/.exec(memory) : null;
    if (m) return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
  }
  throw new Error('no memory limit for the bpa container in deploy/deployment.yaml');
}

/** A memory cgroup with this limit (v2 if mounted so, else v1's memory controller). */
async function memoryCgroup(mib: number): Promise<string> {
  const bytes = String(mib * 2 ** 20);
  const v2 = (await stat('/sys/fs/cgroup/cgroup.controllers').catch(() => undefined)) !== undefined;
  const dir = v2
    ? `/sys/fs/cgroup/bpa-bench-${process.pid}`
    : `/sys/fs/cgroup/memory/bpa-bench-${process.pid}`;
  await mkdir(dir);
  await writeFile(join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), bytes);
  return dir;
}

/** bin/bpa, started inside the cgroup (before Node.js reads its limit) when one is given. */
function spawnLimited(
  cgroup: string | undefined,
  args: string[],
  env: Record<string, string>,
): ChildProcess {
  const options = {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
  };
  if (!cgroup) return spawn(BPA, args, options);
  // The shell joins the cgroup and becomes bpa: its pid is serve's.
  return spawn(
    'sh',
    ['-c', `echo $$ > ${cgroup}/cgroup.procs && exec "$0" "$@"`, BPA, ...args],
    options,
  );
}

function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then(
    (t) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(t)?.[1] ?? 0) / 1024,
  );
}

async function main(): Promise<void> {
  const clusters = arg('clusters', 1000);
  const hosts = arg('hosts', 10000);
  const changes = arg('changes', 10);
  const limitMiB = arg('memory-limit', await deploymentMemoryLimit());
  const snapshotAt = process.argv.indexOf('--snapshot');
  const snapshotDir = snapshotAt >= 0 ? process.argv[snapshotAt + 1] : undefined;
  const assets = kubeAssets();
  if ('reason' in assets) throw new Error(assets.reason);
  const server = await sharedKubeServer(assets);
  const missing = await server.installMetal3();
  if (missing) throw new Error(missing);
  const env = await bpaNamespace(server, 'bench');
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-operator-'));
  let child: ChildProcess | undefined;
  let cgroup: string | undefined;
  try {
    const site = await generateSite(join(tmp, 'site'), clusters, hosts, 'block');
    const clusterDocs = await documents(join(site.dir, 'clusters'));
    const hostDocs = (await documents(join(site.dir, 'inventory'))).map((d) => ({
      ...d,
      metadata: { ...d.metadata, namespace: env.namespace },
    }));
    let t = Date.now();
    await pool(hostDocs, 24, (d) => createObject(env, d));
    await pool(clusterDocs, 24, (d) => createObject(env, d));
    await createObject(env, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Site',
      metadata: { name: 'bench' },
      spec: { inventory: { source: 'kubernetes' }, suspend: true },
    });
    console.log(
      `created ${hostDocs.length} BareMetalHosts and ${clusterDocs.length} bpa objects in ${((Date.now() - t) / 1000).toFixed(0)} s`,
    );
    cgroup = limitMiB ? await memoryCgroup(limitMiB) : undefined;
    const serve = spawnLimited(
      cgroup,
      [
        'serve',
        '--source',
        'kubernetes',
        '--bootstrap-kubeconfig',
        env.bpaKubeconfigPath,
        '--bootstrap-namespace',
        env.namespace,
        '--kubeconfig',
        env.bpaKubeconfigPath,
        '--inventory-namespace',
        env.namespace,
        '--leases',
        site.leaseFile,
        '--state',
        join(tmp, 'state'),
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1h',
      ],
      snapshotDir
        ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshotDir}` }
        : {},
    );
    console.log(
      cgroup
        ? `serve runs under a ${limitMiB} MiB memory limit (the Deployment's)`
        : 'serve runs without a memory limit',
    );
    child = serve;
    const lines: Array<{ at: number; line: string }> = [];
    let buf = '';
    child.stderr?.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        lines.push({ at: Date.now(), line: buf.slice(0, nl) });
        buf = buf.slice(nl + 1);
      }
    });
    const pid = child.pid as number;
    child.once('exit', (code, signal) => {
      console.log(`bpa serve exited (${code ?? signal}):`);
      console.log(
        lines
          .slice(-5)
          .map((l) => l.line)
          .join('\n'),
      );
      process.exitCode = 1;
    });
    t = Date.now();
    const finished = (after: number): Promise<true> =>
      waitFor(
        'a finished run',
        async () => {
          if (serve.exitCode !== null || serve.signalCode !== null)
            throw new Error('bpa serve exited');
          // The scheduler's line: the run is over, the objects' status written too.
          return lines.some((l) => l.at >= after && /"durationMs":/.test(l.line))
            ? true
            : undefined;
        },
        600_000,
        20,
      );
    await finished(t);
    console.log(
      `first reconcile of the watched site (its objects' status written): ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    const latencies: number[] = [];
    for (let i = 0; i < changes; i++) {
      const p = `${API}/namespaces/${env.namespace}/softwares/cluster-${String(i % clusters).padStart(4, '0')}-software`;
      const obj = (await env.admin('GET', p)).body as { spec: Record<string, unknown> };
      const put = await env.admin('PUT', p, {
        ...obj,
        spec: { ...obj.spec, workerSoftware: ['curl', 'tmux', `pkg-${i}`] },
      });
      const at = Date.now();
      if (put.status !== 200) throw new Error(`PUT ${p}: ${put.status}`);
      const started = await waitFor(
        'the reconcile started',
        async () =>
          lines.find(
            (l) =>
              l.at >= at &&
              /"msg":"reconcile started"/.test(l.line) &&
              /"trigger":"kubernetes"/.test(l.line),
          ),
        60_000,
        5,
      );
      latencies.push(started.at - at);
      await finished(started.at);
    }
    latencies.sort((x, y) => x - y);
    const rss = await rssMiB(pid, 'VmRSS');
    const peak = await rssMiB(pid, 'VmHWM');
    console.log(
      `update → reconcile start over ${changes} updates: median ${latencies[Math.floor(latencies.length / 2)]} ms, max ${latencies[latencies.length - 1]} ms (target < 1000 ms)`,
    );
    console.log(
      `serve RSS with ${clusters} Clusters and ${hosts} BareMetalHosts watched: ${rss.toFixed(0)} MiB now, ${peak.toFixed(0)} MiB peak (target < 300 MB)`,
    );
    const url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(
      lines.map((l) => l.line).join('\n'),
    )?.[1];
    if (url) {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const mib = (name: string): string =>
        (Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? 0) / 2 ** 20).toFixed(0);
      console.log(
        `  of which JS heap used ${mib('bpa_nodejs_heap_size_used_bytes')} MiB of ${mib('bpa_nodejs_heap_size_total_bytes')} MiB, external ${mib('bpa_nodejs_external_memory_bytes')} MiB`,
      );
    }
    if (snapshotDir) {
      const before = new Set(await readdir(snapshotDir));
      serve.kill('SIGUSR2');
      const file = await waitFor(
        'the heap snapshot',
        async () => {
          const made = (await readdir(snapshotDir)).find((f) => !before.has(f));
          // Written in one go, then closed: the size stops moving.
          if (!made) return undefined;
          const a = (await stat(join(snapshotDir, made))).size;
          await new Promise((r) => setTimeout(r, 1000));
          return a > 0 && (await stat(join(snapshotDir, made))).size === a ? made : undefined;
        },
        600_000,
        500,
      );
      console.log(`heap snapshot: ${join(snapshotDir, file)}`);
    }
    serve.removeAllListeners('exit');
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
  } finally {
    // A failed measure must not leave serve running (it would write into tmp meanwhile).
    if (child && child.exitCode === null && child.signalCode === null) {
      child.removeAllListeners('exit');
      const gone = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    if (cgroup) await rmdir(cgroup).catch(() => undefined);
    await env.dispose();
    await stopSharedKubeServer();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
