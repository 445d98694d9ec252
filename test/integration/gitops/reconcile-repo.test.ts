import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { StateLock } from '../../../src/state/lock.js';
import { bpa, labArgs, labReady } from '../apply/harness.js';
import { updateLabSite, writeLabSite } from '../apply/lab-site.js';
import { readTree } from '../../fakes/tree.js';

const TOKEN = 's3cret-t0ken-for-tests';

/** The GitOps loop against a real git http-backend server and real lab hosts. */
describe('reconcile --once --repo: a site repository, with status committed back', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let git: GitServer;
  let tmp: string;
  let url: string;
  let state: string;
  let badSite: Record<string, string>;
  let siteDir: string;

  const reconcile = (
    extra: string[] = [],
    env: Record<string, string> = {},
  ): ReturnType<typeof bpa> =>
    bpa(
      [
        'reconcile',
        '--once',
        '--repo',
        url,
        '--ref',
        'main',
        '--path',
        'site',
        '--git-username',
        'bpa',
        ...labArgs(lab!, state, extra),
      ],
      { BPA_GIT_TOKEN: TOKEN, ...env },
    );

  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 3, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-gitops-'));
    state = join(tmp, 'state');
    git = await startGitServer({ auth: { username: 'bpa', password: TOKEN } });
    siteDir = await writeLabSite(
      lab.hosts,
      {
        cluster: 'lab',
        nodes: [
          { name: 'master-1', roles: ['master'], host: 0 },
          { name: 'worker-1', roles: ['worker'], host: 1 },
        ],
      },
      join(tmp, 'site'),
    );
    const files = await readTree(siteDir, 'site');
    badSite = {
      'site/cluster.yaml': (files['site/cluster.yaml'] ?? '').replace(
        'cluster: lab\nspec:\n  provisioningCR',
        'cluster: lab\nspec:\n  provisioningCr',
      ),
    };
    url = (
      await git.createRepo('site', { files: { ...files, 'README.md': 'site repo\n' } })
    ).replace('://', `://`);
  });
  after(async () => {
    await git?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('applies a new revision and commits its status back, with the trailers', async () => {
    const head = (await git.log('site', 'main'))[0]?.sha ?? '';
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^applied /m);
    const log = await git.log('site', 'main');
    assert.equal(log.length, 2, "one status commit on top of the person's");
    assert.match(
      log[0]?.subject ?? '',
      new RegExp(`^bpa: lab provision-cluster @ ${head.slice(0, 7)}$`),
    );
    assert.match(log[0]?.message ?? '', new RegExp(`Bpa-Source: ${head}\\nBpa-Plan: [0-9a-f]{64}`));
    const status = await git.readFile('site', 'main', 'site/status/lab.yaml');
    assert.match(status ?? '', /kind: ClusterStatus/);
    assert.match(status ?? '', /phase: Ready/);
    assert.match(
      (await git.readFile('site', 'main', 'site/status/site.yaml')) ?? '',
      /phase: Ready/,
    );
  });

  it('another bpa holding the state lock: refused with STATE_LOCKED, nothing reported or committed', async () => {
    await git.commitAs('site', { 'site/locked.yaml': '# a comment-only file\n' }, 'while locked');
    const before = await git.log('site', 'main');
    const applied = await readFile(join(state, 'clusters', 'lab', 'applied.json'), 'utf8');
    const other = new StateLock(state);
    await other.acquire();
    let r;
    try {
      r = await reconcile();
    } finally {
      await other.release();
    }
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^failed .*STATE_LOCKED/m);
    assert.deepEqual(await git.log('site', 'main'), before, 'no status commit');
    assert.match(
      (await git.readFile('site', 'main', 'site/status/lab.yaml')) ?? '',
      /phase: Ready/,
    );
    assert.equal(await readFile(join(state, 'clusters', 'lab', 'applied.json'), 'utf8'), applied);
    // Unlocked, the revision is reconciled (it was never attempted).
    const again = await reconcile();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /^(unchanged|applied) /m);
  });

  it('a status-only commit, or a commit outside the site path, causes no work', async () => {
    await git.commitAs(
      'site',
      { 'site/status/note.yaml': 'touched: by a person\n' },
      'status only',
    );
    const r1 = await reconcile();
    assert.equal(r1.code, 0, r1.stdout + r1.stderr);
    assert.match(r1.stdout, /^skipped /m);
    await git.commitAs('site', { 'README.md': 'changed\n' }, 'outside the site');
    const r2 = await reconcile();
    assert.match(r2.stdout, /^skipped /m);
    assert.doesNotMatch(r2.stderr, /step started/);
    assert.match(
      (await git.log('site', 'main'))[0]?.subject ?? '',
      /^outside the site$/,
      'no status commit for skipped work',
    );
  });

  it("a person pushing between bpa's fetch and its push: both commits end on the branch", async () => {
    await git.commitAs(
      'site',
      {
        'site/extra.yaml': `${badSite['site/cluster.yaml'] !== undefined ? '' : ''}# a comment-only file\n`,
      },
      'a change inside the site',
    );
    let raced = false;
    git.intercept({ method: 'POST', path: 'git-receive-pack' }, async () => {
      if (raced) return;
      raced = true;
      await git.commitAs('site', { 'site/notes.yaml': '# meanwhile\n' }, 'meanwhile, a person');
    });
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(raced, 'the race happened');
    const subjects = (await git.log('site', 'main')).map((e) => e.subject);
    assert.match(subjects[0] ?? '', /^bpa: /);
    assert.equal(subjects[1], 'meanwhile, a person');
    assert.equal(subjects[2], 'a change inside the site');
  });

  it('git server down: a clear transient error; back up: it works', async () => {
    await git.down();
    try {
      const r = await reconcile();
      assert.equal(r.code, 1);
      assert.match(r.stderr, /GIT_UNAVAILABLE/);
    } finally {
      await git.up();
    }
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  it('a lost state directory is rebuilt from the status reports: nothing is provisioned again', async () => {
    await rm(state, { recursive: true, force: true });
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /applied state rebuilt from the status reports/);
    assert.match(r.stdout, /^unchanged /m);
    assert.doesNotMatch(r.stderr, /provision-cluster/);
    const rebuilt = JSON.parse(
      await readFile(join(state, 'clusters', 'lab', 'applied.json'), 'utf8'),
    ) as { nodes: Array<{ name: string }> };
    assert.deepEqual(
      rebuilt.nodes.map((n) => n.name),
      ['master-1', 'worker-1'],
    );
  });

  it('an installer failure: running again retries the revision and reports it failed, never skipped', async () => {
    await updateLabSite(siteDir, lab!.hosts, {
      cluster: 'lab',
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
        { name: 'worker-2', roles: ['worker'], host: 2 },
      ],
    });
    await git.commitAs(
      'site',
      { 'site/cluster.yaml': await readFile(join(siteDir, 'cluster.yaml'), 'utf8') },
      'add worker-2',
    );
    for (let attempt = 1; attempt <= 2; attempt++) {
      const r = await reconcile([], { BPA_REFERENCE_FAIL: '1' });
      assert.equal(r.code, 1, `attempt ${attempt}: ${r.stdout}${r.stderr}`);
      assert.match(
        r.stdout,
        /^failed .*APPLY_FAILED: cluster lab: add-nodes failed at step installer: INSTALLER_FAILED, exit \d+; log lab\/scale-/m,
        `attempt ${attempt}`,
      );
      const report = (await git.readFile('site', 'main', 'site/status/lab.yaml')) ?? '';
      assert.match(report, /action: add-nodes\n(.*\n)*?\s+result: failed\n\s+step: installer/);
      assert.doesNotMatch(report, /exited|fatal|TASK|message: .*log:/, 'no installer output');
    }
    const fixed = await reconcile();
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
    assert.match(fixed.stdout, /^applied /m);
    assert.match((await git.log('site', 'main'))[0]?.subject ?? '', /^bpa: lab add-nodes @/);
  });

  it('an invalid revision: a Rejected report with file:line errors, the last good revision stays applied', async () => {
    const applied = JSON.parse(
      await readFile(join(state, 'clusters', 'lab', 'applied.json'), 'utf8'),
    ) as { revision: string };
    const bad = await git.commitAs('site', badSite, 'a typo');
    const r = await reconcile();
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^rejected /m);
    const site = (await git.readFile('site', 'main', 'site/status/site.yaml')) ?? '';
    assert.match(site, /phase: Rejected/);
    assert.match(site, /code: UNKNOWN_FIELD/);
    assert.match(site, /file: cluster\.yaml\n\s+line: \d+/);
    assert.match(site, new RegExp(`revision: ${bad}`));
    const after = JSON.parse(
      await readFile(join(state, 'clusters', 'lab', 'applied.json'), 'utf8'),
    ) as { revision: string };
    assert.equal(after.revision, applied.revision, 'nothing was applied');
    assert.match(
      (await git.readFile('site', 'main', 'site/status/lab.yaml')) ?? '',
      /phase: Ready/,
      'the cluster keeps its last report',
    );
    const again = await reconcile();
    assert.match(again.stdout, /^skipped /m, 'an invalid revision is reported once');
  });

  it('no report and no commit ever holds a secret', async () => {
    const key = await readFile(lab!.keyPath, 'utf8');
    const keyBody = key.split('\n').filter((l) => l && !l.startsWith('-----'))[0] ?? 'x';
    const everything: string[] = [];
    for (const e of await git.log('site', 'main')) everything.push(e.message);
    const tree = await git.git('site', ['ls-tree', '-r', '--name-only', 'main']);
    for (const path of tree.split('\n').filter((p) => p.startsWith('site/status/')))
      everything.push((await git.readFile('site', 'main', path)) ?? '');
    const text = everything.join('\n');
    assert.ok(text.length > 100);
    for (const secret of [TOKEN, keyBody, lab!.password])
      assert.ok(!text.includes(secret), 'a secret leaked into a report or commit');
    assert.doesNotMatch(text, /PRIVATE KEY/);
  });
});
