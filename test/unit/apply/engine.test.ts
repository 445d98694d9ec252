import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRun, type RunContext } from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import { StateLock } from '../../../src/state/lock.js';
import { StateStore } from '../../../src/state/store.js';
import { BpaError } from '../../../src/util/errors.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { configWith, hostIp, writeSite } from '../../fakes/site.js';

interface JournalStep {
  key: string;
  action: string;
  step: string;
  status: string;
  attempt: number;
  error?: { code: string; message: string };
  data?: Record<string, unknown>;
}

/**
 * The journaled engine (the steps up to apply, under the state lock, with the real journal and state
 * store) over in-memory ports: resuming, failing and locking without root.
 */
describe('apply engine over in-memory ports', () => {
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;

  const apply = async (signal?: AbortSignal): Promise<RunContext> => {
    const ctx = createRun({
      site: { kind: 'path', path: siteDir },
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      ports,
      signal,
    });
    await runSteps(ctx, 'apply');
    return ctx;
  };
  const journal = async (): Promise<JournalStep[]> =>
    (
      JSON.parse(await readFile(join(stateDir, 'clusters', 'east', 'journal.json'), 'utf8')) as {
        steps: JournalStep[];
      }
    ).steps;

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-engine-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    await writeSite(siteDir, {
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
      ],
      masterSoftware: ['jq=1.7.1-3'],
      workerSoftware: ['curl'],
      plugins: ['emco'],
    });
    nodes = new FakeNodes({ jq: ['1.7.1-3'], curl: ['7.88.1-10'] });
    ports = fakePorts(nodes);
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('applies a plan: every step journaled done, the applied state recorded, versions verified', async () => {
    const r = await apply();
    assert.equal(r.result?.ok, true);
    assert.deepEqual(
      r.result?.clusters[0]?.actions.map((a) => [a.kind, a.result]),
      [
        ['provision-cluster', 'done'],
        ['install-packages', 'done'],
      ],
    );
    assert.ok((await journal()).every((s) => s.status === 'done'));
    const applied = await new StateStore(stateDir).readCluster('east');
    assert.deepEqual(
      applied?.nodes.map((n) => [n.name, n.ip]),
      [
        ['master-1', hostIp(0)],
        ['worker-1', hostIp(1)],
      ],
    );
    assert.deepEqual(applied?.plugins, ['emco']);
    assert.equal(ports.publish.kubeconfigs.size, 1);
    assert.deepEqual(ports.publish.nodeMaps.get('east'), {
      'MASTER_master-1': hostIp(0),
      'WORKER_worker-1': hostIp(1),
    });
    assert.deepEqual(
      r.result?.clusters[0]?.actions[1]?.packages?.map((p) => [p.node, p.ok, p.installed]),
      [
        ['master-1', true, { jq: '1.7.1-3' }],
        ['worker-1', true, { curl: '7.88.1-10' }],
      ],
    );
    // Nothing left to do: a second run plans nothing.
    const again = await apply();
    assert.deepEqual(again.result?.clusters[0]?.actions, []);
  });

  it('a step interrupted by a stop stays running in the journal and is resumed, never repeated', async () => {
    const stop = new AbortController();
    ports.installer.next({ kind: 'hang', signal: stop.signal });
    const running = apply(stop.signal);
    await ports.installer.started;
    stop.abort();
    const first = await running;
    assert.equal(first.result?.interrupted, true);
    assert.equal(first.result?.ok, false);
    const cluster = first.result?.clusters[0];
    assert.equal(cluster?.result, 'interrupted');
    assert.deepEqual(
      cluster?.actions.map((a) => [a.kind, a.result, a.error]),
      [
        ['provision-cluster', 'interrupted', undefined],
        ['install-packages', 'not-run', undefined],
      ],
    );
    assert.deepEqual(cluster?.actions[0]?.steps, [
      { name: 'inventory', result: 'done' },
      { name: 'ssh-access', result: 'done' },
      { name: 'installer', result: 'interrupted' },
    ]);
    const steps = await journal();
    const installer = steps.find((s) => s.step === 'installer');
    assert.equal(installer?.status, 'running');
    assert.equal(installer?.error, undefined);
    assert.ok(installer?.data?.['interruptedAt']);
    assert.equal(await new StateStore(stateDir).readCluster('east'), undefined, 'nothing recorded');

    const second = await apply();
    assert.equal(second.result?.ok, true);
    const provision = second.result?.clusters[0]?.actions[0];
    assert.deepEqual(
      provision?.steps.map((s) => [s.name, s.result]),
      [
        ['inventory', 'skipped'],
        ['ssh-access', 'skipped'],
        ['installer', 'done'],
        ['kubeconfig', 'done'],
        ['configmap', 'done'],
        ['record', 'done'],
      ],
    );
    assert.equal(ports.installer.runs.length, 2);
    assert.equal(ports.installer.runs[1]?.previous?.status, 'running', 'handed its earlier record');
    assert.equal(ports.installer.runs[1]?.previous?.data?.['installer'], 'fake');
    assert.equal(ports.access.ensured.length, 1);
    const resumed = (await journal()).find((s) => s.step === 'installer');
    assert.equal(resumed?.status, 'done');
    assert.equal(resumed?.attempt, 2);
  });

  it('a stop before a step starts leaves it for the next run', async () => {
    const stop = new AbortController();
    stop.abort();
    const r = await apply(stop.signal);
    assert.equal(r.result?.interrupted, true);
    assert.equal(ports.installer.runs.length, 0);
    assert.equal(ports.access.ensured.length, 0);
  });

  it('a failure stops its cluster, is journaled failed with its reason, and is retried by the next run', async () => {
    ports.installer.next({ kind: 'fail', output: 'TASK [etcd] fatal: timeout' });
    const first = await apply();
    assert.equal(first.result?.ok, false);
    assert.equal(first.result?.interrupted, false);
    const cluster = first.result?.clusters[0];
    assert.equal(cluster?.result, 'failed');
    assert.deepEqual(
      cluster?.actions.map((a) => [a.kind, a.result, a.error?.code]),
      [
        ['provision-cluster', 'failed', 'INSTALLER_FAILED'],
        ['install-packages', 'not-run', undefined],
      ],
    );
    assert.match(cluster?.actions[0]?.error?.message ?? '', /fatal: timeout/);
    const installer = (await journal()).find((s) => s.step === 'installer');
    assert.equal(installer?.status, 'failed');
    assert.equal(installer?.error?.code, 'INSTALLER_FAILED');
    assert.equal(nodes.packagesOf(hostIp(0)).size, 0, 'no package step ran');

    const second = await apply();
    assert.equal(second.result?.ok, true);
    assert.equal(ports.installer.runs[1]?.previous?.status, 'failed');
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
  });

  it('a whole cluster gone from the site with prune: remove-cluster resets every node, then bpa forgets it; a failed reset keeps it', async () => {
    assert.equal((await apply()).result?.ok, true);
    await rm(join(siteDir, 'cluster.yaml'));
    // A site meant to have no cluster says so with a Site document.
    await writeFile(
      join(siteDir, 'site.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: test-site\nspec: {}\n',
    );
    const pruned = async (): Promise<RunContext> => {
      const ctx = createRun({
        site: { kind: 'path', path: siteDir },
        configFor: configWith({ stateDir, prune: true }),
        env: {},
        log: silentLogger(),
        ports,
      });
      await runSteps(ctx, 'apply');
      return ctx;
    };
    ports.installer.next({ kind: 'fail', output: 'TASK [reset] fatal: unreachable' });
    const failed = await pruned();
    assert.deepEqual(failed.problems, []);
    assert.deepEqual(
      failed.result?.clusters[0]?.actions.map((a) => [a.kind, a.result, a.error?.code]),
      [['remove-cluster', 'failed', 'INSTALLER_FAILED']],
    );
    assert.ok(await new StateStore(stateDir).readCluster('east'), 'still known: tried again');
    const done = await pruned();
    assert.equal(done.result?.ok, true);
    const reset = ports.installer.runs.filter((r) => r.path === 'reset');
    assert.equal(reset.length, 2);
    assert.deepEqual(reset[1]?.req.nodes, ['master-1', 'worker-1']);
    assert.equal(reset[1]?.req.inventory, join(stateDir, 'clusters', 'east', 'hosts.ini'));
    assert.equal(
      ports.installer.runs.some((r) => r.path === 'remove'),
      false,
      'no remove-nodes',
    );
    assert.equal(await new StateStore(stateDir).readCluster('east'), undefined);
    await assert.rejects(stat(join(stateDir, 'clusters', 'east', 'journal.json')), /ENOENT/);
    // Forgotten: nothing more is planned for it.
    assert.deepEqual((await pruned()).result?.clusters, []);
  });

  it('a package failure on one node: the others are done, the action fails naming the node', async () => {
    nodes.available['curl'] = []; // the workers' apt source lacks it
    const r = await apply();
    const pkgs = r.result?.clusters[0]?.actions[1];
    assert.equal(pkgs?.result, 'failed');
    assert.equal(pkgs?.error?.code, 'PACKAGES_FAILED');
    assert.match(pkgs?.error?.message ?? '', /worker-1 \(worker-1: package curl is not available/);
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
    // The applied state keeps the packages unrecorded, so the next plan installs them again.
    const applied = await new StateStore(stateDir).readCluster('east');
    assert.deepEqual(applied?.packages, { master: [], worker: [] });
  });

  it('a lock held by another bpa: refused with STATE_LOCKED, nothing written', async () => {
    const other = new StateLock(stateDir);
    await other.acquire();
    try {
      await assert.rejects(apply(), (err: unknown) => {
        assert.ok(err instanceof BpaError);
        assert.equal(err.code, 'STATE_LOCKED');
        assert.equal(err.retry, 'waiting');
        return true;
      });
    } finally {
      await other.release();
    }
    await assert.rejects(stat(join(stateDir, 'clusters')), { code: 'ENOENT' });
    assert.equal(ports.installer.runs.length, 0);
  });
});
