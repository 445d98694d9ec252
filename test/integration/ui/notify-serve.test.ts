import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, kill, spawnBpa, waitFor } from '../apply/harness.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

const SECRET = 'notify-secret-for-serve-test';

/** A cluster whose only master names a MAC no host has: Blocked. */
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

/** bpa serve --notify-url: a local receiver gets one signed event per transition. */
describe('bpa serve: notifications', function () {
  this.timeout(60_000);
  requireLoopbackOnly();
  let tmp = '';
  let child: ChildProcess | undefined;
  let server: http.Server | undefined;
  const got: Array<{ body: string; signature: string }> = [];

  after(async () => {
    if (child) await kill(child);
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('phase changes of a cluster and the site, once each across reconciles, signed, with a link to the page', async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({
          body: Buffer.concat(chunks).toString(),
          signature: String(req.headers['x-bpa-signature-256']),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bpa`;
    tmp = await mkdtemp(join(tmpdir(), 'bpa-notify-'));
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await cp(join(ROOT, 'sites', 'example', 'site.yaml'), join(site, 'site.yaml'));
    await writeFile(join(tmp, 'secret'), SECRET);
    let stderr = '';
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
      '--notify-url',
      hook,
      '--notify-secret-file',
      join(tmp, 'secret'),
      '--ui-url',
      'https://bpa.site.example/',
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      20_000,
    );
    const runs = async (): Promise<number> => {
      const s = (await (await fetch(`${url}/metrics`)).text()).matchAll(
        /^bpa_reconcile_total\{[^}]*\} (\d+)/gm,
      );
      return [...s].reduce((n, m) => n + Number(m[1]), 0);
    };
    await waitFor(
      'the first reconcile',
      async () => ((await runs()) >= 1 ? true : undefined),
      20_000,
      100,
    );
    assert.equal(got.length, 0, 'a site Ready at start is no news');

    await mkdir(join(site, 'clusters'));
    await writeFile(join(site, 'clusters', 'b.yaml'), BLOCKED);
    await waitFor('two events', async () => (got.length >= 2 ? true : undefined), 20_000, 50);
    // Another reconcile of the same state (an edit that changes nothing bpa acts on) says nothing new.
    const before = await runs();
    const inv = join(site, 'inventory', 'hosts.yaml');
    await writeFile(inv, (await readFile(inv, 'utf8')) + '\n# touched\n');
    await waitFor(
      'another reconcile',
      async () => ((await runs()) > before ? true : undefined),
      20_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(got.length, 2, got.map((g) => g.body).join('\n'));

    const events = got.map((g) => JSON.parse(g.body) as Record<string, string>);
    assert.deepEqual(
      events.map((e) => [e['type'], e['cluster'] ?? '(site)', e['phase']]),
      [
        ['phase-changed', 'cluster-b', 'Blocked'],
        ['phase-changed', '(site)', 'Blocked'],
      ],
    );
    assert.equal(events[0]?.['link'], 'https://bpa.site.example/clusters/cluster-b');
    assert.equal(events[0]?.['site'], 'edge-lab-1');
    assert.match(events[0]?.['message'] ?? '', /master-1/);
    for (const g of got) {
      assert.equal(
        g.signature,
        `sha256=${createHmac('sha256', SECRET).update(g.body).digest('hex')}`,
      );
      assert.ok(!g.body.includes(SECRET));
    }

    await rm(join(site, 'clusters', 'b.yaml'));
    await waitFor(
      'the site Ready again',
      async () => (got.length >= 3 ? true : undefined),
      20_000,
      50,
    );
    assert.deepEqual(JSON.parse(got[2]?.body ?? '{}').phase, 'Ready');
  });
});
