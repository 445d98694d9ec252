import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BpaError } from '../../../src/util/errors.js';
import { syncRepo, type RepoOptions } from '../../../src/source/git.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

const SITE = {
  'sites/edge/site.yaml': 'kind: Site\nname: edge\n',
  'sites/edge/clusters/east.yaml': 'kind: Cluster\nname: east\n',
  'README.md': '# site repo\n',
};

async function expectCode(p: Promise<unknown>, code: string): Promise<BpaError> {
  try {
    await p;
  } catch (err: unknown) {
    assert.ok(err instanceof BpaError, `expected a BpaError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}`);
}

describe('syncRepo against git http-backend', function () {
  this.timeout(60_000);
  let server: GitServer;
  let tmp: string;
  let url: string;
  let n = 0;
  const wc = (): string => join(tmp, `wc-${++n}`);

  beforeEach(async () => {
    server = await startGitServer();
    tmp = await mkdtemp(join(tmpdir(), 'bpa-sync-'));
    url = await server.createRepo('site', { files: SITE });
  });
  afterEach(async () => {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('clones shallow on the first sync and checks the files out', async () => {
    const dir = wc();
    const head = (await server.log('site', 'main'))[0]?.sha;
    const { revision, changed } = await syncRepo({ url, ref: 'main', dir });
    assert.equal(changed, true);
    assert.equal(revision.commit, head);
    assert.equal(revision.ref, 'refs/heads/main');
    assert.ok(revision.fetchedAt > 0);
    assert.equal(
      await readFile(join(dir, 'sites/edge/site.yaml'), 'utf8'),
      SITE['sites/edge/site.yaml'],
    );
    assert.equal((await readFile(join(dir, '.git', 'shallow'), 'utf8')).trim(), head);
  });

  it('a no-op poll is one ref advertisement and no pack download', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir });
    server.requests.length = 0;
    const { changed, revision } = await syncRepo({ url, ref: 'main', dir });
    assert.equal(changed, false);
    assert.equal(revision.commit, (await server.log('site', 'main'))[0]?.sha);
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.path, r.query]),
      [['GET', '/site.git/info/refs', 'service=git-upload-pack']],
    );
  });

  it('fetches a new commit, reports it changed and fetches only it', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir });
    const sha = await server.commitAs(
      'site',
      { 'sites/edge/clusters/west.yaml': 'kind: Cluster\nname: west\n' },
      'add west',
    );
    server.requests.length = 0;
    const { changed, revision } = await syncRepo({ url, ref: 'main', dir });
    assert.equal(changed, true);
    assert.equal(revision.commit, sha);
    assert.equal(
      await readFile(join(dir, 'sites/edge/clusters/west.yaml'), 'utf8'),
      'kind: Cluster\nname: west\n',
    );
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1);
    // and a deletion on the remote deletes the file in the working copy
    await server.commitAs('site', { 'sites/edge/clusters/west.yaml': null }, 'drop west');
    await syncRepo({ url, ref: 'main', dir });
    assert.equal(existsSync(join(dir, 'sites/edge/clusters/west.yaml')), false);
  });

  it('discards local edits and stray files when it checks out a new commit', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir });
    await writeFile(join(dir, 'sites/edge/site.yaml'), 'tampered: true\n');
    await writeFile(join(dir, 'sites/edge/stray.yaml'), 'stray: true\n');
    await server.commitAs('site', { 'README.md': 'changed\n' }, 'touch readme');
    await syncRepo({ url, ref: 'main', dir });
    assert.equal(
      await readFile(join(dir, 'sites/edge/site.yaml'), 'utf8'),
      SITE['sites/edge/site.yaml'],
    );
    assert.equal(existsSync(join(dir, 'sites/edge/stray.yaml')), false);
  });

  it('follows a lightweight and an annotated tag', async () => {
    const first = (await server.log('site', 'main'))[0]?.sha ?? '';
    await server.git('site', ['tag', 'v1', first]);
    await server.git('site', ['tag', '-a', '-m', 'release 2', 'v2', first], {
      env: { GIT_COMMITTER_NAME: 'Rel', GIT_COMMITTER_EMAIL: 'rel@example.org' },
    });
    await server.commitAs('site', { 'sites/edge/site.yaml': 'kind: Site\nname: edge2\n' }, 'later');

    const d1 = wc();
    const light = await syncRepo({ url, ref: 'v1', dir: d1 });
    assert.equal(light.revision.commit, first);
    assert.equal(light.revision.ref, 'refs/tags/v1');
    assert.equal(
      await readFile(join(d1, 'sites/edge/site.yaml'), 'utf8'),
      SITE['sites/edge/site.yaml'],
    );

    const d2 = wc();
    const annotated = await syncRepo({ url, ref: 'refs/tags/v2', dir: d2 });
    assert.equal(annotated.revision.commit, first, 'an annotated tag is peeled to its commit');
    server.requests.length = 0;
    assert.equal((await syncRepo({ url, ref: 'v2', dir: d2 })).changed, false);
    assert.equal(server.requests.length, 1);
  });

  it('checks out a commit id, and a checked-out commit id costs no request at all', async () => {
    const first = (await server.log('site', 'main'))[0]?.sha ?? '';
    await server.commitAs('site', { 'README.md': 'newer\n' }, 'newer');
    const dir = wc();
    const { revision, changed } = await syncRepo({ url, ref: first, dir });
    assert.equal(changed, true);
    assert.deepEqual([revision.commit, revision.ref], [first, first]);
    assert.equal(await readFile(join(dir, 'README.md'), 'utf8'), SITE['README.md']);
    server.requests.length = 0;
    assert.equal((await syncRepo({ url, ref: first, dir })).changed, false);
    assert.equal(server.requests.length, 0);
  });

  it('switches the same cache from a branch to an older commit id and back', async () => {
    const first = (await server.log('site', 'main'))[0]?.sha ?? '';
    const second = await server.commitAs('site', { 'README.md': 'second\n' }, 'second');
    const dir = wc();
    assert.equal((await syncRepo({ url, ref: 'main', dir })).revision.commit, second);
    assert.equal((await syncRepo({ url, ref: first, dir })).revision.commit, first);
    assert.equal(await readFile(join(dir, 'README.md'), 'utf8'), SITE['README.md']);
    assert.equal((await syncRepo({ url, ref: 'main', dir })).revision.commit, second);
  });

  it('a missing ref or commit is GIT_REF_NOT_FOUND (stalled), a missing repository GIT_REPO_NOT_FOUND', async () => {
    const e1 = await expectCode(
      syncRepo({ url, ref: 'no-such-branch', dir: wc() }),
      'GIT_REF_NOT_FOUND',
    );
    assert.equal(e1.retry, 'stalled');
    await expectCode(syncRepo({ url, ref: 'f'.repeat(40), dir: wc() }), 'GIT_REF_NOT_FOUND');
    const e3 = await expectCode(
      syncRepo({ url: server.repoUrl('nope'), ref: 'main', dir: wc() }),
      'GIT_REPO_NOT_FOUND',
    );
    assert.equal(e3.retry, 'stalled');
  });

  it('server down: GIT_UNAVAILABLE (transient); back up: syncs again', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir });
    await server.down();
    const err = await expectCode(syncRepo({ url, ref: 'main', dir }), 'GIT_UNAVAILABLE');
    assert.equal(err.retry, 'transient');
    const sha = await server.commitAs('site', { 'README.md': 'while down\n' }, 'while down');
    await server.up();
    const { changed, revision } = await syncRepo({ url, ref: 'main', dir });
    assert.equal(changed, true);
    assert.equal(revision.commit, sha);
  });

  it('a 5xx answer is GIT_UNAVAILABLE; a hung server times out as GIT_UNAVAILABLE', async () => {
    server.intercept({ path: '/info/refs' }, () => ({ status: 503, body: 'maintenance' }));
    await expectCode(syncRepo({ url, ref: 'main', dir: wc() }), 'GIT_UNAVAILABLE');
    server.intercept(
      { path: '/info/refs' },
      () => new Promise((resolve) => setTimeout(resolve, 1_500)),
    );
    const opts: RepoOptions = { url, ref: 'main', dir: wc(), timeoutMs: 300 };
    await expectCode(syncRepo(opts), 'GIT_UNAVAILABLE');
  });

  it('recovers from a corrupt cache by cloning again', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir });
    const sha = await server.commitAs('site', { 'README.md': 'after corruption\n' }, 'next');
    for (const name of await readdir(join(dir, '.git', 'objects', 'pack'))) {
      await writeFile(join(dir, '.git', 'objects', 'pack', name), 'garbage');
    }
    const { revision } = await syncRepo({ url, ref: 'main', dir });
    assert.equal(revision.commit, sha);
    assert.equal(await readFile(join(dir, 'README.md'), 'utf8'), 'after corruption\n');
  });

  it('refuses a non-empty directory that is not a cache, and leaves it alone', async () => {
    const dir = wc();
    await mkdir(dir);
    await writeFile(join(dir, 'precious.txt'), 'keep me\n');
    const err = await expectCode(syncRepo({ url, ref: 'main', dir }), 'GIT_CACHE_INVALID');
    assert.equal(err.retry, 'stalled');
    assert.equal(await readFile(join(dir, 'precious.txt'), 'utf8'), 'keep me\n');
    assert.equal(existsSync(join(dir, '.git')), false);
  });

  it('a deeper history on request (depth 3)', async () => {
    for (let i = 0; i < 4; i++) await server.commitAs('site', { 'README.md': `v${i}\n` }, `c${i}`);
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir, depth: 3 });
    const heads = (await server.log('site', 'main')).map((c) => c.sha);
    const shallow = (await readFile(join(dir, '.git', 'shallow'), 'utf8')).trim();
    assert.equal(shallow, heads[2]);
  });
});
