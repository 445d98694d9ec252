import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BpaError } from '../../../src/util/errors.js';
import { syncRepo, type RepoOptions } from '../../../src/source/git.js';
import { commitAndPush } from '../../../src/source/git-push.js';
import { localSource } from '../../../src/reconcile/from-config.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { runCli } from '../../unit/validate/run-cli.js';

const BPA = { name: 'bpa', email: 'bpa@edge.example' };
const REPORTS = new Map([
  ['status/site.yaml', 'kind: SiteStatus\n'],
  ['status/east.yaml', 'kind: ClusterStatus\n'],
]);
const taken = (err: unknown): boolean => {
  assert.ok(err instanceof BpaError, String(err));
  assert.equal(err.code, 'STATUS_PATH_TAKEN');
  assert.equal(err.retry, 'stalled');
  assert.match(err.message, /bpa does not remove it/);
  return true;
};

/** bpa never deletes a user's file: a `status` that is not bpa's directory is reported, kept. */
describe('a status file in the site', function () {
  this.timeout(60_000);
  let tmp = '';
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-status-path-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  describe('in a repository (status commits)', () => {
    let server: GitServer;
    let repo: RepoOptions;
    beforeEach(async () => {
      server = await startGitServer();
      const url = await server.createRepo('site', {
        files: {
          'sites/edge/site.yaml': 'kind: Site\n',
          'sites/edge/status': 'the status of our rollout, written by a person\n',
          'other/status/keep.yaml': "a directory of reports that is not bpa's\n",
        },
      });
      repo = { url, ref: 'main', dir: join(tmp, 'wc') };
      await syncRepo(repo);
    });
    afterEach(() => server.stop());

    it('a file named status: no commit, the file kept, a stalled error that says so', async () => {
      const before = await server.log('site', 'main');
      await assert.rejects(
        commitAndPush(repo, {
          files: { 'sites/edge/status/east.yaml': 'phase: Ready\n' },
          message: 'bpa: east Ready @ 1234567\n',
          author: BPA,
          branch: 'main',
        }),
        (err) =>
          taken(err) &&
          /sites\/edge\/status is a file in the repository/.test((err as Error).message),
      );
      assert.deepEqual(await server.log('site', 'main'), before);
      assert.equal(
        await server.readFile('site', 'main', 'sites/edge/status'),
        'the status of our rollout, written by a person\n',
      );
    });

    it('a directory where a report file goes: kept too', async () => {
      await assert.rejects(
        commitAndPush(repo, {
          files: { 'other/status': 'kind: SiteStatus\n' },
          message: 'bpa\n',
          author: BPA,
          branch: 'main',
        }),
        taken,
      );
      assert.match(
        (await server.readFile('site', 'main', 'other/status/keep.yaml')) ?? '',
        /not bpa's/,
      );
    });
  });

  describe('in a local site directory (bpa serve --watch)', () => {
    // [what is named status, how to make it, what must still be true afterwards]
    const table: Array<[string, (site: string, elsewhere: string) => Promise<void>]> = [
      ['a file', (site) => writeFile(join(site, 'status'), 'mine\n')],
      [
        'a link to a directory elsewhere',
        (site, elsewhere) => symlink(elsewhere, join(site, 'status')),
      ],
      [
        'a link to a file elsewhere',
        (site, elsewhere) => symlink(join(elsewhere, 'site.yaml'), join(site, 'status')),
      ],
      ['a dangling link', (site) => symlink('/nonexistent/bpa-status', join(site, 'status'))],
    ];
    for (const [what, make] of table) {
      it(`${what}: reported, kept, not followed, nothing written or read`, async () => {
        const site = join(tmp, 'site');
        const elsewhere = join(tmp, 'elsewhere');
        await mkdir(site);
        await mkdir(elsewhere);
        await writeFile(join(elsewhere, 'site.yaml'), 'kind: SiteStatus\nsecret: elsewhere\n');
        await make(site, elsewhere);
        const before = await lstat(join(site, 'status'));
        const source = localSource(site);
        await assert.rejects(source.publish(site, REPORTS), taken);
        const after = await lstat(join(site, 'status'));
        assert.equal(after.ino, before.ino, 'the same entry is still there');
        assert.deepEqual(await readdir(site), ['status']);
        assert.deepEqual(await readdir(elsewhere), ['site.yaml']);
        assert.equal(
          await readFile(join(elsewhere, 'site.yaml'), 'utf8'),
          'kind: SiteStatus\nsecret: elsewhere\n',
        );
        assert.deepEqual([...(await source.previousReports(site)).keys()], [], 'not read either');
      });
    }

    it('bpa validate warns about it, and the site stays valid', async () => {
      const site = join(tmp, 'site');
      await mkdir(site);
      await writeFile(join(site, 'status'), 'mine\n');
      // A site of its own (an empty one is SITE_EMPTY).
      await writeFile(
        join(site, 'site.yaml'),
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: s}\nspec: {}\n',
      );
      const r = await runCli(['validate', site]);
      assert.equal(r.code, 0, r.stdout);
      assert.match(
        r.stdout,
        /status:1:1: warning STATUS_NOT_DIRECTORY: "status" is not a directory/,
      );
    });
  });
});
