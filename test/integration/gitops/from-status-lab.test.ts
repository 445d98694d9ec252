import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { main } from '../../../src/cli/main.js';
import type { InventoryStatusDoc } from '../../../src/report/inventory.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { readTree } from '../../fakes/tree.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { bpa, labArgs, labReady } from '../apply/harness.js';
import { writeLabSite } from '../apply/lab-site.js';

interface JsonPlan {
  hash: string;
  observed?: { at: string };
  clusters: Array<{
    cluster: string;
    nodes: Array<{ name: string; host: string; ip: string; change: string }>;
    actions: Array<{ kind: string; nodes: string[] }>;
  }>;
}

/**
 * The controller reconciles a repository on real lab hosts (sshd in network namespaces, DHCP
 * leases from dnsmasq) and commits status/; a pull request's plan made offline from that
 * status/ places its nodes on the hosts, at the addresses, the controller's own plan does,
 * with the same hash.
 */
describe('plan --from-status against a status/ written by a real reconcile on lab hosts', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let git: GitServer;
  let tmp: string;
  let state: string;

  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 3, isolatedPackages: true }); // the installer writes /etc on its hosts
    tmp = await mkdtemp(join(tmpdir(), 'bpa-from-status-lab-'));
    state = join(tmp, 'state');
    git = await startGitServer();
  });
  after(async () => {
    await git?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('the same placements, addresses and plan hash as the controller', async () => {
    const hosts = lab!.hosts;
    const site = await writeLabSite(
      hosts,
      { nodes: [{ name: 'master-1', roles: ['master'], host: 0 }] },
      join(tmp, 'site'),
    );
    const url = await git.createRepo('site', { files: await readTree(site, 'site') });
    const r = await bpa([
      'reconcile',
      '--once',
      '--repo',
      url,
      '--ref',
      'main',
      '--path',
      'site',
      ...labArgs(lab!, state),
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);

    const inventory = parse(
      (await git.readFile('site', 'main', 'site/status/inventory.yaml')) ?? '',
    ) as InventoryStatusDoc;
    assert.deepEqual(
      inventory.status.hosts.map((h) => [h.name, h.eligible, h.address?.from, h.address?.ip]),
      hosts.map((h) => [h.name, true, 'lease', h.ip]),
      'every lab host, with the address its DHCP lease gave it',
    );

    // The pull request: two workers chosen by resources (no MAC), on the hosts still free.
    const pr = join(tmp, 'pr');
    await writeLabSite(hosts, { nodes: [{ name: 'master-1', roles: ['master'], host: 0 }] }, pr);
    const cluster = await readFile(join(pr, 'cluster.yaml'), 'utf8');
    await writeFile(
      join(pr, 'cluster.yaml'),
      cluster.replace(
        /( {2}masters:\n {4}- master-1:\n {8}mac-address: "[^"]+"\n)/,
        '$1  workers:\n    - worker-1:\n        cpu: 2\n    - worker-2:\n        cpu: 4\n',
      ),
    );
    await mkdir(join(pr, 'status'), { recursive: true });
    for (const file of ['inventory.yaml', 'lab.yaml', 'site.yaml'])
      await writeFile(
        join(pr, 'status', file),
        (await git.readFile('site', 'main', `site/status/${file}`)) ?? '',
      );

    // Offline, as in a pull request job: no leases, no state directory, no SSH.
    let out = '';
    const code = await main(
      ['plan', pr, '-o', 'json', '--state', join(tmp, 'none')],
      {
        out: (s) => void (out += s),
        err: (s) => void (out += s),
        exit: () => undefined,
      },
      {},
    );
    assert.equal(code, 2, out);
    const offline = JSON.parse(out) as JsonPlan;
    assert.ok(offline.observed, 'planned from status/');

    // The controller's own plan of the same site: its leases, its state, the nodes over SSH.
    const planArgs = labArgs(lab!, state).filter(
      (a, i, all) => a !== '--log-level' && all[i - 1] !== '--log-level',
    );
    const live = await bpa(['plan', pr, '-o', 'json', ...planArgs], {
      BPA_FROM_STATUS: 'false',
    });
    assert.equal(live.code, 2, live.stderr);
    const controller = JSON.parse(live.stdout) as JsonPlan;

    const placements = (p: JsonPlan): string[][] =>
      p.clusters.flatMap((c) => c.nodes.map((n) => [n.name, n.host, n.ip, n.change]));
    assert.deepEqual(placements(offline), placements(controller));
    assert.deepEqual(
      placements(offline).map(([name, , , change]) => `${name} ${change}`),
      ['master-1 keep', 'worker-1 add', 'worker-2 add'],
    );
    assert.deepEqual(
      offline.clusters[0]?.actions.map((a) => a.kind),
      ['add-nodes'],
    );
    assert.equal(offline.hash, controller.hash);
  });
});
