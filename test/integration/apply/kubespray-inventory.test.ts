import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { bpa, labArgs, labReady, marker } from './harness.js';
import { updateLabSite, writeLabSite, type LabSiteNode } from './lab-site.js';

/**
 * The Kubespray flavour through a whole apply with the real ansible reference installer, which
 * makes Kubespray's own inventory check (an odd etcd group) and records the pod subnet it was
 * given: two masters still provision, and the site's PodSubnet reaches the installer.
 */
describe('apply: the Kubespray inventory on lab hosts', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let tmp = '';
  const nodes: LabSiteNode[] = [
    { name: 'master-1', roles: ['master'], host: 0 },
    { name: 'master-2', roles: ['master', 'worker'], host: 1 },
  ];
  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-kubespray-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('two masters and a PodSubnet: an odd etcd group, the pod subnet given to the installer and recorded; a later PodSubnet change is shown, never applied', async () => {
    if (!lab) return;
    const state = join(tmp, 'state');
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'ks', nodes, podSubnet: '10.244.64.0/18' },
      join(tmp, 'site'),
    );
    const run = (): ReturnType<typeof bpa> =>
      bpa(['reconcile', '--once', site, ...labArgs(lab!, state, ['--flavour', 'kubespray'])]);

    const first = await run();
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /✓ provision-cluster master-1, master-2/);
    assert.match(first.stdout, /pod subnet 10\.244\.64\.0\/18/);
    assert.match(first.stdout, /etcd runs on 1 of the 2 masters \(master-1\); master-2 is not/);
    for (const h of ['h1', 'h2']) assert.match(await marker(lab, h), /pods: 10\.244\.64\.0\/18/);
    assert.match(await marker(lab, 'h1'), /groups: .*\betcd\b/);
    assert.doesNotMatch(await marker(lab, 'h2'), /\betcd\b/);
    const recorded = JSON.parse(
      await readFile(join(state, 'clusters', 'ks', 'applied.json'), 'utf8'),
    ) as { podSubnet?: string | null };
    assert.equal(recorded.podSubnet, '10.244.64.0/18');

    await updateLabSite(site, lab.hosts, { cluster: 'ks', nodes, podSubnet: '10.250.0.0/16' });
    const before = await Promise.all(['h1', 'h2'].map((h) => marker(lab!, h)));
    const changed = await run();
    assert.equal(changed.code, 0, changed.stdout + changed.stderr);
    assert.doesNotMatch(changed.stdout, /No changes/);
    assert.match(changed.stdout, /differs from the site: the pod subnet cannot change in place/);
    assert.match(changed.stdout, /PodSubnet 10\.250\.0\.0\/16 differs from 10\.244\.64\.0\/18/);
    assert.match(
      await readFile(join(state, 'clusters', 'ks', 'hosts.ini'), 'utf8'),
      /kube_pods_subnet=10\.244\.64\.0\/18/,
    );
    assert.deepEqual(await Promise.all(['h1', 'h2'].map((h) => marker(lab!, h))), before);
  });
});
