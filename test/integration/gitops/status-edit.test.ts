import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import type { ClusterStatusDoc, SiteStatusDoc } from '../../../src/report/status.js';
import { GitSource } from '../../../src/source/git-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { writeResourceSite } from '../../fakes/resource-site.js';
import { configWith } from '../../fakes/site.js';
import { readTree } from '../../fakes/tree.js';

/**
 * status/ is bpa's: a commit of someone else that edits it (a made-up phase, a forged report
 * for a cluster that does not exist) is undone, in a commit that says so, whether or not the
 * input changed with it; bpa's own status commits still trigger nothing. Against a real git
 * server (http-backend); a new Reconciler for each reconcile, as after a restart.
 */
describe('status/ edited by someone else: bpa writes its reports back', function () {
  this.timeout(120_000);
  let git: GitServer;
  let tmp: string;
  let stateDir: string;
  let repo: string;
  let source: GitSource;
  let ports: ReturnType<typeof fakePorts>;

  before(async () => {
    git = await startGitServer();
  });
  after(async () => {
    await git?.stop();
  });
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-status-edit-'));
    stateDir = join(tmp, 'state');
    repo = `site-${Math.random().toString(16).slice(2)}`;
    await writeResourceSite(join(tmp, 'v1'), { workers: 0, jq: '1.6-2.1ubuntu3' });
    const url = await git.createRepo(repo, { files: await readTree(join(tmp, 'v1'), 'site') });
    source = new GitSource({ url, ref: 'main', path: 'site', stateDir });
    ports = fakePorts(new FakeNodes({ jq: ['1.6-2.1ubuntu3'], curl: ['7.88.1-10'] }));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const reconcile = (trigger: 'startup' | 'webhook' = 'webhook', flags = {}) =>
    new Reconciler({
      source,
      configFor: configWith({ stateDir, ...flags }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
    }).reconcile(trigger);

  const read = (path: string): Promise<string | undefined> =>
    git.readFile(repo, 'main', `site/status/${path}`);

  /** bpa's report, with a made-up phase and a node that does not exist. */
  const forge = (text: string): string =>
    text
      .replace(/phase: \w+/g, 'phase: Ready')
      .replace(
        /nodes:\n/,
        'nodes:\n  - { name: ghost, roles: [master], host: x/ghost, ip: 10.9.9.9 }\n',
      );

  const forgedCluster = `apiVersion: bpa.akraino.org/v1alpha1
kind: ClusterStatus
metadata:
  name: west
status:
  phase: Ready
  nodes:
    - { name: w-1, roles: [master], host: x/w-1, mac: "02:00:00:00:00:01", ip: 10.9.9.1 }
`;

  it("a status-only edit (forged as bpa's, by author and trailers) is restored; nothing is applied", async () => {
    const first = await reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    const runs = ports.installer.runs.length;
    const east = (await read('east.yaml')) ?? '';
    const site = (await read('site.yaml')) ?? '';
    assert.match(east, /kind: ClusterStatus/);

    // bpa's own status commit, fetched: no work, no commit.
    const own = (await git.log(repo, 'main')).length;
    assert.equal((await reconcile()).result, 'skipped');
    assert.equal((await git.log(repo, 'main')).length, own, "no commit for bpa's own reports");

    // Someone pushes status/ only, dressed up as bpa's status commit.
    const top = (await git.log(repo, 'main'))[0];
    await git.commitAs(
      repo,
      {
        'site/status/east.yaml': forge(east),
        'site/status/site.yaml': `${site}reviewedBy: a person\n`,
        'site/status/west.yaml': forgedCluster,
      },
      top?.message ?? 'bpa: status',
      { author: top?.author ?? { name: 'bpa', email: 'bpa@bpa.akraino.org' } },
    );
    const r = await reconcile();
    assert.equal(r.result, 'skipped', 'the input did not change: nothing planned or applied');
    assert.equal(ports.installer.runs.length, runs, 'no installer run');
    const log = await git.log(repo, 'main');
    assert.match(log[0]?.subject ?? '', /^bpa: status\/ edited by someone else, restored @ /);
    assert.match(
      log[0]?.message ?? '',
      /status\/ was edited by someone else \(status\/east\.yaml, status\/site\.yaml, status\/west\.yaml\): restored/,
    );
    assert.match(log[0]?.message ?? '', /\n\nBpa-Source: [0-9a-f]{40}\nBpa-Plan: [0-9a-f]{64}$/);
    assert.equal(await read('east.yaml'), east, 'the true report is back');
    assert.equal(await read('site.yaml'), site);
    assert.equal(await read('west.yaml'), undefined, 'the forged report is gone');

    // The restore is bpa's own commit: it triggers nothing.
    const after = (await git.log(repo, 'main')).length;
    assert.equal((await reconcile()).result, 'skipped');
    assert.equal((await git.log(repo, 'main')).length, after);
    assert.equal(ports.installer.runs.length, runs);
  });

  it('with no record of its reports (a new state volume), the startup reconcile writes them anew and keeps them', async () => {
    await reconcile('startup');
    const east = (await read('east.yaml')) ?? '';
    await rm(join(stateDir, 'status.json'));
    await git.commitAs(repo, { 'site/status/east.yaml': forge(east) }, 'bpa: status');
    // Nothing tells the edit apart now, but a start always reconciles in full: bpa's reports.
    const r = await reconcile('startup');
    assert.equal(r.result, 'unchanged', JSON.stringify(r.error));
    assert.ok(!((await read('east.yaml')) ?? '').includes('ghost'), 'the made-up node is gone');
    assert.doesNotMatch((await git.log(repo, 'main'))[0]?.message ?? '', /edited by someone else/);
    const rewritten = (await read('east.yaml')) ?? '';
    // From then on an edit is known again.
    await git.commitAs(repo, { 'site/status/east.yaml': forge(rewritten) }, 'bpa: status');
    assert.equal((await reconcile()).result, 'skipped');
    assert.match(
      (await git.log(repo, 'main'))[0]?.subject ?? '',
      /edited by someone else, restored/,
    );
    assert.equal(await read('east.yaml'), rewritten);
  });

  it('an edit that comes with a change of the input is undone by the reconcile of that change', async () => {
    // Blocked: waits for an approved plan.
    const first = await reconcile('startup', { requireApprovedPlan: true });
    assert.equal(first.result, 'blocked');
    const east = (await read('east.yaml')) ?? '';
    const site = (await read('site.yaml')) ?? '';
    assert.match(east, /phase: Blocked/);
    await git.commitAs(
      repo,
      {
        'site/status/east.yaml': forge(east),
        'site/status/site.yaml': site.replace(/phase: \w+/, 'phase: Ready'),
        'site/README.md': 'a note\n',
      },
      'looks fine to me',
    );
    const r = await reconcile('webhook', { requireApprovedPlan: true });
    assert.equal(r.result, 'blocked');
    assert.equal(ports.installer.runs.length, 0);
    const log = await git.log(repo, 'main');
    assert.match(log[0]?.subject ?? '', /^bpa: plan not applied/);
    assert.match(
      log[0]?.message ?? '',
      /status\/ was edited by someone else \(.*status\/east\.yaml.*\): restored/,
    );
    const now = parse((await read('east.yaml')) ?? '') as ClusterStatusDoc;
    assert.equal(now.status.phase, 'Blocked');
    assert.ok(!JSON.stringify(now.status.nodes ?? []).includes('ghost'));
    assert.equal((parse((await read('site.yaml')) ?? '') as SiteStatusDoc).status.phase, 'Blocked');
  });
});
