import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyFile } from 'node:fs/promises';
import {
  cordonPatches,
  readyNode,
  startFakeKube,
  type KubeObject,
} from '../../fakes/kube-api-server.js';
import { startAptRepo, type AptRepo } from '../../lab/apt-repo.js';
import { startLab, type Lab } from '../../lab/lab.js';
import {
  bpa,
  journal,
  kill,
  labArgs,
  marker,
  packageLabReady,
  spawnBpa,
  waitFor,
} from './harness.js';
import { updateLabSite, writeLabSite, type LabSiteOptions } from './lab-site.js';

/** Real apt-get and dpkg on lab hosts with their own package databases, offline, from a local repository. */
describe('apply: packages on lab hosts', function () {
  this.timeout(600_000);
  let lab: Lab | undefined;
  let repo: AptRepo | undefined;
  let tmp: string;
  let site: string;
  let state: string;

  const nodes: LabSiteOptions['nodes'] = [
    { name: 'master-1', roles: ['master'], host: 0 },
    { name: 'worker-1', roles: ['worker'], host: 1 },
    { name: 'worker-2', roles: ['worker'], host: 2 },
  ];
  const siteDoc = (): string =>
    `apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: lab\nspec:\n  packageMirror: "${repo?.sourceLine}"\n`;
  const setSite = async (opts: Partial<LabSiteOptions>): Promise<void> => {
    await updateLabSite(site, lab!.hosts, { cluster: 'pk', nodes, extraSite: siteDoc(), ...opts });
  };
  const installed = async (host: string, pkg: string): Promise<string | null> => {
    const r = await lab!
      .exec(host, ['dpkg-query', '-W', '-f=${db:Status-Abbrev} ${Version}', pkg])
      .catch(() => undefined);
    const [status, version] = (r?.stdout ?? '').trim().split(/\s+/);
    // Installed: the second letter; the first is what is wanted (i install, h hold).
    return status?.[1] === 'i' && version ? version : null;
  };
  const held = async (host: string): Promise<string[]> =>
    (await lab!.exec(host, ['apt-mark', 'showhold'])).stdout.split('\n').filter(Boolean);
  // The lab's apt repository is unsigned ([trusted=yes]): a mirror only the operator may allow.
  const reconcile = (extra: string[] = []): ReturnType<typeof bpa> =>
    bpa([
      'reconcile',
      '--once',
      site,
      ...labArgs(lab!, state, ['--allow-site-commands', ...extra]),
    ]);

  before(async function () {
    if (!(await packageLabReady())) this.skip();
    lab = await startLab({ hosts: 3, isolatedPackages: true });
    repo = await startAptRepo(lab, [
      { name: 'bpa-test-a', version: '1.0-1' },
      { name: 'bpa-test-a', version: '2.0-1' },
      { name: 'bpa-test-b', version: '1.0-1' },
      { name: 'bpa-test-c', version: '1.0-1' },
      { name: 'bpa-test-x', version: '1.0-1' },
      { name: 'bpa-test-d', version: '1.0-1' },
      // Its configuration waits while the host has /etc/bpa-gate: an upgrade held part-way.
      {
        name: 'bpa-test-d',
        version: '2.0-1',
        postinst: 'touch /etc/bpa-gate-reached\nwhile [ -e /etc/bpa-gate ]; do sleep 0.1; done',
      },
    ]);
    tmp = await mkdtemp(join(tmpdir(), 'bpa-packages-'));
    state = join(tmp, 'state');
    site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'pk',
        nodes,
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b'],
        extraSite: siteDoc(),
      },
      join(tmp, 'site'),
    );
  });
  after(async () => {
    await repo?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('installs the ICN Software shape on masters and workers, with a version pin, from the offline mirror', async () => {
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /master-1 +\+bpa-test-a=1\.0-1/);
    assert.match(r.stdout, /✓ install-packages/);
    assert.equal(await installed('h1', 'bpa-test-a'), '1.0-1');
    assert.equal(await installed('h1', 'bpa-test-b'), null, 'masters do not get worker packages');
    assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
    assert.equal(await installed('h3', 'bpa-test-b'), '1.0-1');
    assert.match(
      await lab!
        .exec('h1', ['cat', '/etc/apt/sources.list.d/bpa-mirror.list'])
        .then((x) => x.stdout),
      /trusted=yes/,
    );
    assert.deepEqual(await held('h1'), ['bpa-test-a'], 'a pinned version is held');
    // What unattended-upgrades does: upgrade whatever is upgradable. 2.0-1 is in the mirror,
    // and the pinned 1.0-1 stays.
    await lab!.exec('h1', ['apt-get', 'upgrade', '-y', '-q']);
    assert.equal(await installed('h1', 'bpa-test-a'), '1.0-1');
    assert.deepEqual(await held('h2'), [], 'an unpinned package is not');
    const again = await reconcile();
    assert.match(again.stdout, /No changes/, 'facts match: nothing to do');
  });

  it('upgrades when the pin is bumped, showing before → after', async () => {
    await setSite({
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b'],
    });
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /master-1 +~bpa-test-a 1\.0-1 → 2\.0-1/);
    assert.match(r.stdout, /✓ upgrade-packages master-1/);
    assert.equal(await installed('h1', 'bpa-test-a'), '2.0-1');
    assert.deepEqual(await held('h1'), ['bpa-test-a'], 'unheld to change it, held again after');
  });

  it('a hold removed by hand is drift, and the package is held again', async () => {
    await lab!.exec('h1', ['apt-mark', 'unhold', 'bpa-test-a']);
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /fix-drift +nodes differ from what was applied: master-1 has bpa-test-a 2\.0-1 no longer on hold/,
    );
    assert.deepEqual(await held('h1'), ['bpa-test-a']);
    assert.match((await reconcile()).stdout, /No changes/);
  });

  it('with rollout: bin/bpa cordons, drains (through the cluster API) and uncordons each node around its change', async () => {
    const kube = await startFakeKube();
    try {
      const names = nodes.map((n) => n.name);
      for (const name of names) kube.put(readyNode(name));
      kube.put({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-1', namespace: 'apps', labels: { app: 'web' } },
        spec: { nodeName: 'worker-1', containers: [{ name: 'c', image: 'busybox' }] },
      } as KubeObject);
      // The cluster's kubeconfig, where bpa stored admin.conf after provisioning.
      await copyFile(kube.kubeconfigPath, join(state, 'clusters', 'pk', 'kubeconfig'));
      await setSite({
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b: {version: 1.0-1}'],
        clusterSpec: [
          '  rollout:',
          '    maxUnavailable: 1',
          "    drain: { timeout: '30s' }",
          "    healthCheck: { timeout: '30s', command: [dpkg-query, -W, dpkg] }",
        ],
      });
      const r = await reconcile();
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(await installed('h1', 'bpa-test-a'), '1.0-1');
      assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
      const patches = cordonPatches(kube.requests);
      // One node at a time, the master first: cordoned, then uncordoned, before the next.
      assert.deepEqual(patches, [
        'master-1=true',
        'master-1=false',
        'worker-1=true',
        'worker-1=false',
        'worker-2=true',
        'worker-2=false',
      ]);
      assert.equal(kube.get('v1', 'Pod', 'apps', 'web-1'), undefined, 'evicted from worker-1');
      assert.ok(
        kube.requests.some((x) => x.path === '/api/v1/namespaces/apps/pods/web-1/eviction'),
      );
    } finally {
      await kube.stop();
      // The tests after this one change the nodes without a cluster API.
      await setSite({
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b: {version: 1.0-1}'],
      });
    }
  });

  it('with rollout: bpa killed (SIGKILL) in the middle of a drain; the next run does not touch the finished node again and uncordons the other only after its change', async () => {
    const kube = await startFakeKube();
    try {
      for (const name of nodes.map((n) => n.name)) kube.put(readyNode(name));
      for (const [pod, on] of [
        ['web-1', 'worker-1'],
        ['web-2', 'worker-2'],
      ])
        kube.put({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: pod, namespace: 'apps' },
          spec: { nodeName: on, containers: [{ name: 'c', image: 'busybox' }] },
        } as KubeObject);
      await copyFile(kube.kubeconfigPath, join(state, 'clusters', 'pk', 'kubeconfig'));
      await setSite({
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b: {version: 1.0-1}', 'bpa-test-c'],
        clusterSpec: [
          '  rollout:',
          "    drain: { timeout: '5m' }",
          "    healthCheck: { timeout: '30s' }",
        ],
      });
      // worker-2's eviction hangs: bpa is killed while it drains worker-2, after worker-1.
      kube.hold({ method: 'POST', pathPrefix: '/api/v1/namespaces/apps/pods/web-2/eviction' });
      const child = spawnBpa([
        'reconcile',
        '--once',
        site,
        ...labArgs(lab!, state, ['--allow-site-commands']),
      ]);
      await waitFor('the drain of worker-2', async () =>
        kube.requests.some((x) => x.path.endsWith('/web-2/eviction')) ? true : undefined,
      );
      await kill(child);
      const node = (name: string) =>
        (kube.get('v1', 'Node', undefined, name)?.spec as { unschedulable?: boolean })
          .unschedulable;
      assert.equal(await installed('h2', 'bpa-test-c'), '1.0-1', 'worker-1 was changed');
      assert.equal(node('worker-1'), false, 'and uncordoned');
      assert.equal(await installed('h3', 'bpa-test-c'), null, 'worker-2 was not');
      assert.equal(node('worker-2'), true, 'and stays cordoned');
      kube.release();

      const before = kube.requests.length;
      const r = await reconcile();
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const after = kube.requests.slice(before).filter((x) => x.method === 'PATCH');
      assert.ok(
        !after.some((x) => x.path.endsWith('/nodes/worker-1')),
        'worker-1 not touched again',
      );
      assert.equal(await installed('h3', 'bpa-test-c'), '1.0-1');
      assert.equal(node('worker-2'), false, 'uncordoned once changed and Ready');
      assert.equal(after.at(-1)?.path, '/api/v1/nodes/worker-2', 'its uncordon is the last write');
    } finally {
      kube.release();
      await kube.stop();
      // As before this test: bpa-test-c off the workers, no rollout.
      await setSite({
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b: {version: 1.0-1}'],
      });
      const restored = await reconcile(['--prune']);
      assert.equal(restored.code, 0, restored.stdout + restored.stderr);
    }
  });

  it('with rollout: bpa killed (SIGKILL) while the second node is upgraded; the next run does not upgrade the first again, and uncordons the second only once its upgrade has finished', async () => {
    const kube = await startFakeKube();
    const onHost = (host: string, ...argv: string[]) => lab!.exec(host, argv);
    // The step of a node in this test's upgrade (the newest of that name: earlier tests had theirs).
    const stepOf = async (name: string) =>
      (await journal(state, 'pk'))
        .filter((x) => x.action === 'upgrade-packages' && x.step === `node:${name}`)
        .at(-1);
    const worker2Step = () => stepOf('worker-2');
    try {
      for (const name of nodes.map((n) => n.name)) kube.put(readyNode(name));
      await copyFile(kube.kubeconfigPath, join(state, 'clusters', 'pk', 'kubeconfig'));
      const software = (d: string) => ({
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b: {version: 1.0-1}', `bpa-test-d: {version: ${d}}`],
      });
      await setSite(software('1.0-1'));
      const installedD = await reconcile();
      assert.equal(installedD.code, 0, installedD.stdout + installedD.stderr);
      assert.equal(await installed('h3', 'bpa-test-d'), '1.0-1');

      // worker-2's upgrade is held in its postinst: bpa is killed there, after worker-1.
      await onHost('h3', 'touch', '/etc/bpa-gate');
      await setSite({
        ...software('2.0-1'),
        clusterSpec: [
          '  rollout:',
          '    maxUnavailable: 1',
          "    drain: { timeout: '30s' }",
          "    healthCheck: { timeout: '30s' }",
        ],
      });
      const child = spawnBpa([
        'reconcile',
        '--once',
        site,
        ...labArgs(lab!, state, ['--allow-site-commands']),
      ]);
      await waitFor(
        "worker-2's upgrade under way",
        async () =>
          await onHost('h3', 'test', '-e', '/etc/bpa-gate-reached').then(
            () => true,
            () => undefined,
          ),
        120_000,
      );
      await kill(child);
      const node = (name: string) =>
        (kube.get('v1', 'Node', undefined, name)?.spec as { unschedulable?: boolean })
          .unschedulable;
      assert.equal(await installed('h2', 'bpa-test-d'), '2.0-1', 'worker-1 was upgraded');
      assert.equal(node('worker-1'), false, 'and uncordoned');
      assert.notEqual(await installed('h3', 'bpa-test-d'), '2.0-1', "worker-2's has not finished");
      assert.equal(node('worker-2'), true, 'and it stays cordoned');
      const killedAt = await worker2Step();
      assert.equal(killedAt?.status, 'running');
      assert.equal(killedAt?.attempt, 1);

      // The next run, while worker-2's upgrade is still held: worker-2 stays cordoned.
      await onHost('h3', 'rm', '-f', '/etc/bpa-gate-reached');
      const before = kube.requests.length;
      const resumed = bpa([
        'reconcile',
        '--once',
        site,
        ...labArgs(lab!, state, ['--allow-site-commands']),
      ]);
      await waitFor('the resumed step of worker-2', async () =>
        (await worker2Step())?.attempt === 2 ? true : undefined,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      assert.equal(node('worker-2'), true, 'not uncordoned while its upgrade is held');
      await onHost('h3', 'rm', '-f', '/etc/bpa-gate');
      const r = await resumed;
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const writes = kube.requests.slice(before).filter((x) => x.method === 'PATCH');
      assert.ok(
        !writes.some((x) => x.path.endsWith('/nodes/worker-1')),
        'worker-1 not touched again',
      );
      assert.match(r.stdout, /upgrade-packages worker-1, worker-2/);
      const w1 = await stepOf('worker-1');
      assert.equal(w1?.attempt, 1, 'worker-1 was not upgraded again');
      assert.equal(await installed('h3', 'bpa-test-d'), '2.0-1');
      assert.equal(node('worker-2'), false, 'uncordoned once upgraded and Ready');
      assert.equal(writes.at(-1)?.path, '/api/v1/nodes/worker-2', 'its uncordon is the last write');
      assert.match((await reconcile()).stdout, /No changes/);
    } finally {
      await onHost('h3', 'rm', '-f', '/etc/bpa-gate', '/etc/bpa-gate-reached').catch(
        () => undefined,
      );
      await kube.stop();
      // As before this test: bpa-test-d off the workers, no rollout.
      await setSite({
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b: {version: 1.0-1}'],
      });
      const restored = await reconcile(['--prune']);
      assert.equal(restored.code, 0, restored.stdout + restored.stderr);
    }
  });

  it('detects drift (a package removed by hand) and repairs it', async () => {
    await lab!.exec('h2', ['dpkg', '-r', 'bpa-test-b']);
    assert.equal(await installed('h2', 'bpa-test-b'), null);
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /fix-drift +nodes differ from what was applied: worker-1 has bpa-test-b not installed/,
    );
    assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
    assert.equal(await installed('h3', 'bpa-test-b'), '1.0-1');
  });

  it('a package that does not exist: an error naming the package and the host', async () => {
    await setSite({
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b', 'bpa-test-nope'],
    });
    const r = await reconcile();
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /worker-1: PACKAGE_NOT_FOUND: worker-1: package bpa-test-nope is not available from the node's apt sources/,
    );
    assert.match(r.stdout, /worker-2: PACKAGE_NOT_FOUND/);
  });

  it('one host down: the others still converge, and the report marks that host', async () => {
    await setSite({
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b', 'bpa-test-c'],
    });
    await lab!.stopSshd('h3');
    try {
      const r = await reconcile();
      assert.equal(r.code, 1);
      assert.match(r.stdout, /note: node worker-2 is unreachable, its packages were not checked/);
      assert.match(r.stdout, /worker-2: SSH_UNREACHABLE/);
      assert.equal(await installed('h2', 'bpa-test-c'), '1.0-1', 'the reachable worker converged');
    } finally {
      await lab!.startSshd('h3');
    }
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(await installed('h3', 'bpa-test-c'), '1.0-1');
  });

  it('with --prune: removes packages dropped from the site, never packages bpa did not manage', async () => {
    await lab!.exec('h2', ['apt-get', 'install', '-y', '-q', 'bpa-test-x']);
    await setSite({
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b'],
    });
    const noPrune = await reconcile();
    assert.equal(noPrune.code, 0);
    assert.match(noPrune.stdout, /bpa-test-c no longer listed; run with --prune/);
    assert.equal(await installed('h2', 'bpa-test-c'), '1.0-1');
    const r = await reconcile(['--prune']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ remove-packages worker-1, worker-2/);
    assert.equal(await installed('h2', 'bpa-test-c'), null);
    assert.equal(
      await installed('h2', 'bpa-test-x'),
      '1.0-1',
      'a package installed by hand is left alone',
    );
  });

  it('with --prune: remove-nodes runs the remove path for the removed node only', async () => {
    await setSite({
      nodes: nodes.slice(0, 2),
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b'],
    });
    const kept = await reconcile();
    assert.match(kept.stdout, /worker-2 is no longer in the site; run with --prune/);
    const r = await reconcile(['--prune']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ remove-nodes worker-2/);
    assert.equal(await marker(lab!, 'h3'), '', 'the removed node lost its role marker');
    assert.match(await marker(lab!, 'h2'), /kube-node/, 'the other worker keeps its role');
    const appliedState = JSON.parse(
      await readFile(join(state, 'clusters', 'pk', 'applied.json'), 'utf8'),
    ) as { nodes: Array<{ name: string }> };
    assert.deepEqual(
      appliedState.nodes.map((n) => n.name),
      ['master-1', 'worker-1'],
    );
    assert.match(
      await readFile(join(state, 'clusters', 'pk', 'pk-configmap.yaml'), 'utf8'),
      /^(?![\s\S]*worker-2)/,
    );
    // Added back under the same name: the same work as before, done again, not skipped.
    await setSite({
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b'],
    });
    const back = await reconcile();
    assert.equal(back.code, 0, back.stdout + back.stderr);
    assert.match(back.stdout, /✓ add-nodes worker-2 \(5 steps\)/);
    assert.match(await marker(lab!, 'h3'), /kube-node/);
  });
});
