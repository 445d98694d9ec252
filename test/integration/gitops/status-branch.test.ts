import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { GitSource } from '../../../src/source/git-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { configWith, writeSite } from '../../fakes/site.js';
import { readTree } from '../../fakes/tree.js';

/**
 * Reports pushed to a separate status branch, against a real git http-backend server; the
 * nodes, installer and publishing are in-memory ports (tests/integration/gitops/*.test.ts
 * with lab hosts cover them for real).
 */
describe('reconcile with --status-branch: reports on their own branch', function () {
  this.timeout(120_000);
  let git: GitServer;
  let tmp: string;
  let url: string;
  let state: string;
  let ports: ReturnType<typeof fakePorts>;

  const reconciler = (): Reconciler =>
    new Reconciler({
      source: new GitSource({
        url,
        ref: 'main',
        path: 'site',
        stateDir: state,
        statusBranch: 'bpa-status',
      }),
      configFor: configWith({ stateDir: state }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
    });

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-status-branch-'));
    state = join(tmp, 'state');
    git = await startGitServer();
    const site = join(tmp, 'site');
    await writeSite(site, {
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
      ],
      masterSoftware: ['jq'],
    });
    url = await git.createRepo('site', { files: await readTree(site, 'site') });
    ports = fakePorts(new FakeNodes({ jq: ['1.7.1-3'] }));
  });
  after(async () => {
    await git?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('provisions, and pushes the reports to the status branch only', async () => {
    const main = (await git.log('site', 'main')).length;
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.equal((await git.log('site', 'main')).length, main, 'nothing pushed to main');
    const status = await git.readFile('site', 'bpa-status', 'site/status/east.yaml');
    assert.match(status ?? '', /phase: Ready/);
    assert.equal(ports.installer.runs.length, 1);
  });

  it('the earlier reports are read from the status branch: an unchanged site makes no new commit', async () => {
    // The first full reconcile after the apply says "UpToDate" instead of "Applied"…
    assert.equal((await reconciler().reconcile('startup')).result, 'unchanged');
    const before = (await git.log('site', 'bpa-status')).length;
    // …and from then on the reports are byte-identical (times carried over from the branch).
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'unchanged', JSON.stringify(r.error));
    assert.equal((await git.log('site', 'bpa-status')).length, before);
  });

  it('a lost state directory is rebuilt from the status branch: the running cluster is not provisioned again', async () => {
    await rm(state, { recursive: true, force: true });
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'unchanged', JSON.stringify(r.error));
    assert.equal(ports.installer.runs.length, 1, 'the installer did not run again');
    const applied = JSON.parse(
      await readFile(join(state, 'clusters', 'east', 'applied.json'), 'utf8'),
    ) as { nodes: Array<{ name: string }> };
    assert.deepEqual(
      applied.nodes.map((n) => n.name),
      ['master-1', 'worker-1'],
    );
    assert.match(
      (await git.readFile('site', 'bpa-status', 'site/status/east.yaml')) ?? '',
      /phase: Ready/,
    );
  });
});
