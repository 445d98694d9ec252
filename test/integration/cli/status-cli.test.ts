import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BPA, ROOT, spawnBpa, waitFor } from '../apply/harness.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function bpa(args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      BPA,
      args,
      {
        cwd: ROOT,
        timeout: 30_000,
        env: { PATH: process.env['PATH'] ?? '', HOME: '/nonexistent' },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** A cluster whose only master names a MAC no host has: Blocked, never applied. */
const BLOCKED = `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata: {name: cluster-b, labels: {cluster: cluster-b}}
spec: {provisioningCR: prov-b, softwareCR: soft-b}
---
apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: prov-b, labels: {cluster: cluster-b}}
spec:
  masters:
    - master-1: {mac-address: "02:00:00:00:00:99"}
---
apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata: {name: soft-b, labels: {cluster: cluster-b}}
spec: {masterSoftware: [], workerSoftware: []}
`;

/** `bpa status` against a running `bpa serve` and against the status/ it wrote. */
describe('bpa status', function () {
  this.timeout(90_000);
  requireLoopbackOnly();
  let tmp: string;
  let site: string;
  let child: ChildProcess | undefined;
  let url = '';
  let stderr = '';

  before(async function () {
    // requireLoopbackOnly's hook may have skipped the suite.
    tmp = await mkdtemp(join(tmpdir(), 'bpa-status-'));
    site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await cp(join(ROOT, 'sites', 'example', 'site.yaml'), join(site, 'site.yaml'));
    child = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(tmp, 'state'),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    url = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      20_000,
    );
    await waitFor(
      'the first reconcile',
      async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
      20_000,
      100,
    );
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
    }
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('a Ready site: a table from --server and from the directory, exit 0', async () => {
    const fromServer = await bpa(['status', '--server', url]);
    assert.equal(fromServer.code, 0, fromServer.stdout + fromServer.stderr);
    assert.match(fromServer.stdout, /^controller: idle, last reconcile (applied|unchanged)/m);
    assert.match(fromServer.stdout, /^NAME\s+PHASE\s+READY\s+REVISION\s+NODES\s+MESSAGE$/m);
    assert.match(
      fromServer.stdout,
      /^site\/edge-lab-1\s+Ready\s+True\s+[0-9a-f]{12}\s+-\s+0 clusters ready$/m,
    );
    const fromDir = await bpa(['status', site]);
    assert.equal(fromDir.code, 0, fromDir.stderr);
    assert.match(fromDir.stdout, /^site\/edge-lab-1\s+Ready\s+True/m);
    const json = await bpa(['status', '--server', url, '-o', 'json']);
    assert.equal(json.code, 0);
    const doc = JSON.parse(json.stdout) as { ready: boolean; site: { kind: string } };
    assert.equal(doc.ready, true);
    assert.equal(doc.site.kind, 'SiteStatus');
  });

  it('a Blocked cluster: shown with its reason, exit 1, in both modes', async () => {
    await mkdir(join(site, 'clusters'), { recursive: true });
    await writeFile(join(site, 'clusters', 'b.yaml'), BLOCKED);
    await waitFor(
      'the reconcile of the new cluster',
      async () => {
        const r = await bpa(['status', '--server', url]);
        return /cluster\/cluster-b/.test(r.stdout) && !/reconciling now/.test(r.stdout)
          ? r
          : undefined;
      },
      20_000,
      200,
    );
    const r = await bpa(['status', '--server', url]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(
      r.stdout,
      /^cluster\/cluster-b\s+Blocked\s+False\s+-\s+0\/0\s+cluster cluster-b: master-1/m,
    );
    assert.match(r.stdout, /^site\/edge-lab-1\s+Blocked\s+False/m);
    const dir = await bpa(['status', site, '-o', 'json']);
    assert.equal(dir.code, 1);
    const doc = JSON.parse(dir.stdout) as {
      ready: boolean;
      clusters: Array<{ status: { phase: string } }>;
    };
    assert.equal(doc.ready, false);
    assert.deepEqual(
      doc.clusters.map((c) => c.status.phase),
      ['Blocked'],
    );
  });

  it('errors: an unreachable server, a directory without reports, both given', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = await bpa(['status', '--server', `http://127.0.0.1:${port}`]);
    assert.equal(down.code, 1);
    assert.match(
      down.stderr,
      /^bpa status: STATUS_UNAVAILABLE: cannot read http:\/\/127\.0\.0\.1:\d+\/api\/v1\/status: ECONNREFUSED$/m,
    );
    const none = await bpa(['status', tmp]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /STATUS_NOT_FOUND: .*status\/site\.yaml does not exist/);
    const both = await bpa(['status', site, '--server', url]);
    assert.equal(both.code, 64);
    assert.match(both.stderr, /USAGE: give either a site directory or --server URL/);
  });
});
