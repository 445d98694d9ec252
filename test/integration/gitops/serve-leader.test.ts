import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, spawnBpa, waitFor } from '../apply/harness.js';
import { useRealKube } from '../../k8s/envtest.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

interface Replica {
  child: ChildProcess;
  url: string;
  log: () => string;
}

async function status(url: string): Promise<{ leader: boolean | null; lastReconcile: unknown }> {
  return (await (await fetch(`${url}/api/v1/status`)).json()) as {
    leader: boolean | null;
    lastReconcile: unknown;
  };
}

async function runs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^bpa_reconcile_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

/**
 * Two `bpa serve --leader-elect` replicas on a real kube-apiserver, as bpa's service account
 * with deploy/rbac.yaml's grants: one reconciles, the other stands by and takes over.
 */
describe('bpa serve --leader-elect', function () {
  this.timeout(90_000);
  // Serves the example's inventory: its hosts' addresses must be unreachable.
  requireLoopbackOnly();
  const kube = useRealKube({ name: 'serve-leader' });
  let tmp: string;
  const replicas: Replica[] = [];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-leader-'));
  });
  after(async () => {
    for (const r of replicas) {
      if (r.child.exitCode === null) {
        r.child.kill('SIGKILL');
        await new Promise((res) => r.child.once('exit', res));
      }
    }
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function start(name: string): Promise<Replica> {
    const site = join(tmp, `${name}-site`);
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    // Hosts and no cluster yet: a site says so with a Site document (else SITE_NO_CLUSTERS).
    await writeFile(
      join(site, 'site.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: s}\nspec: {}\n',
    );
    const child = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(tmp, `${name}-state`),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
      '--leader-elect',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
    ]);
    let log = '';
    child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const url = await waitFor(
      `${name}'s URL`,
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(log)?.[1],
      20_000,
    );
    const r = { child, url, log: () => log };
    replicas.push(r);
    return r;
  }

  it('one replica leads and reconciles; the standby is ready but idle, and takes over when the leader stops', async () => {
    const a = await start('a');
    await waitFor(
      'a to lead and reconcile',
      async () => ((await status(a.url)).leader && (await runs(a.url)) >= 1 ? true : undefined),
      30_000,
      100,
    );
    const lease = async (): Promise<{ resourceVersion?: string; holder?: string }> => {
      const r = await kube.env.admin<{
        metadata?: { resourceVersion?: string };
        spec?: { holderIdentity?: string };
      }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${kube.env.namespace}/leases/bpa-leader`);
      return {
        resourceVersion: r.body.metadata?.resourceVersion,
        holder: r.body.spec?.holderIdentity,
      };
    };
    const b = await start('b');
    await waitFor(
      'b to be ready',
      async () => ((await fetch(`${b.url}/readyz`)).status === 200 ? true : undefined),
      30_000,
      100,
    );
    // The leader renews every retry period, the standby tries as often: two renewals seen
    // after the standby is up mean it has met the held Lease, and stayed a follower.
    for (let i = 0; i < 2; i++) {
      const seen = (await lease()).resourceVersion;
      await waitFor(
        'a renewal by the leader',
        async () => ((await lease()).resourceVersion !== seen ? true : undefined),
        30_000,
        50,
      );
    }
    assert.equal((await status(b.url)).leader, false);
    assert.equal(await runs(b.url), 0, 'the standby does not reconcile');
    assert.ok((await lease()).holder, 'the Lease names a holder');

    const exited = new Promise<number | null>((r) => a.child.once('exit', r));
    a.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    await waitFor(
      'b to take over and reconcile',
      async () => ((await status(b.url)).leader && (await runs(b.url)) >= 1 ? true : undefined),
      30_000,
      100,
    );
  });
});
