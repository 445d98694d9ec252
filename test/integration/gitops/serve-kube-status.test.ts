import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BPA, ROOT, spawnBpa, waitFor } from '../apply/harness.js';
import { useRealKube } from '../../k8s/envtest.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

const run = promisify(execFile);

interface SiteObject {
  metadata: { annotations?: Record<string, string> };
  status?: {
    conditions?: Array<{ type: string; status: string; reason: string }>;
    lastHandledReconcileAt?: string;
  };
}

/**
 * `bpa serve` with a bootstrap cluster (a real kube-apiserver, bpa's service account with
 * deploy/rbac.yaml's grants): --kube-status is on by default, --no-kube-status and
 * BPA_KUBE_STATUS=false turn it off, and `bpa reconcile --now` makes the running serve
 * reconcile at once and echo the request.
 */
describe('bpa serve --kube-status', function () {
  this.timeout(90_000);
  // Serves the example's inventory: its hosts' addresses must be unreachable.
  requireLoopbackOnly();
  const kube = useRealKube({ name: 'serve-kube-status' });
  let tmp: string;
  let child: ChildProcess | undefined;
  let log = '';

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-serve-kube-'));
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await writeFile(
      join(site, 'site.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: edge}\nspec: {}\n',
    );
  });
  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((res) => child?.once('exit', res));
    }
    child = undefined;
    await kube.env.admin(
      'DELETE',
      `/apis/bpa.akraino.org/v1alpha1/namespaces/${kube.env.namespace}/sites`,
    );
    await rm(tmp, { recursive: true, force: true });
  });

  const serve = async (extra: string[], env: Record<string, string> = {}): Promise<string> => {
    log = '';
    child = spawnBpa(
      [
        'serve',
        '--watch',
        join(tmp, 'site'),
        '--state',
        join(tmp, 'state'),
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1h',
        '--bootstrap-kubeconfig',
        kube.env.bpaKubeconfigPath,
        '--bootstrap-namespace',
        kube.env.namespace,
        ...extra,
      ],
      env,
    );
    child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    return waitFor(
      'serve to listen',
      async () => /"url":"(http:\/\/[^"]+)"/.exec(log)?.[1],
      20_000,
    );
  };
  const site = async (): Promise<{ status: number; body: SiteObject }> =>
    kube.env.admin<SiteObject>(
      'GET',
      `/apis/bpa.akraino.org/v1alpha1/namespaces/${kube.env.namespace}/sites/edge`,
    );
  const reconciles = async (url: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    let n = 0;
    for (const m of text.matchAll(/^bpa_reconcile_total\{[^}]*\} (\d+)/gm)) n += Number(m[1]);
    return n;
  };

  it('is on by default with a bootstrap cluster; bpa reconcile --now reconciles at once and is echoed', async () => {
    const url = await serve([]);
    const ready = await waitFor(
      'the Site object with its status',
      async () => {
        const r = await site();
        return r.status === 200 && r.body.status?.conditions ? r.body : undefined;
      },
      30_000,
    );
    assert.deepEqual(
      ready.status?.conditions?.map((c) => [c.type, c.status]),
      [['Ready', 'True']],
      log,
    );
    const before = await reconciles(url);
    const { stdout } = await run(BPA, [
      'reconcile',
      '--now',
      '--bootstrap-kubeconfig',
      kube.env.bpaKubeconfigPath,
      '--bootstrap-namespace',
      kube.env.namespace,
      '-o',
      'json',
    ]);
    const { requestedAt, sites } = JSON.parse(stdout) as { requestedAt: string; sites: string[] };
    assert.deepEqual(sites, ['edge']);
    const handled = await waitFor(
      'the request echoed',
      async () => {
        const r = await site();
        return r.body.status?.lastHandledReconcileAt === requestedAt ? r.body : undefined;
      },
      30_000,
    );
    assert.equal(
      handled.metadata.annotations?.['reconcile.bpa.akraino.org/requestedAt'],
      requestedAt,
    );
    // Counted once the run is over, just after its status was written.
    await waitFor(
      'a reconcile for it (the interval is 1h)',
      async () => ((await reconciles(url)) > before ? true : undefined),
      10_000,
    );
    assert.match(log, /"trigger":"requested"/);
  });

  for (const [how, args, env] of [
    ['--no-kube-status', ['--no-kube-status'], {}],
    ['BPA_KUBE_STATUS=false', [], { BPA_KUBE_STATUS: 'false' }],
  ] as Array<[string, string[], Record<string, string>]>) {
    it(`${how} writes nothing to the cluster`, async () => {
      const url = await serve(args, env);
      await waitFor(
        'a reconcile',
        async () => ((await reconciles(url)) >= 1 ? true : undefined),
        30_000,
      );
      assert.equal((await site()).status, 404);
      assert.match(log, /"kubeStatus":false/);
    });
  }

  it('--kube-status without a bootstrap cluster refuses to start, saying what to give', async () => {
    const r = await run(
      BPA,
      ['serve', '--watch', join(tmp, 'site'), '--state', join(tmp, 'state'), '--kube-status'],
      {
        env: { ...process.env, KUBERNETES_SERVICE_HOST: '' },
      },
    ).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(r?.code, 1);
    assert.match(r?.stderr ?? '', /NO_KUBECONFIG: .*--kube-status.*--no-kube-status/);
  });
});
