import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BpaError } from '../../../src/util/errors.js';
import { syncRepo, type RepoOptions } from '../../../src/source/git.js';
import { commitAndPush, type StatusCommit } from '../../../src/source/git-push.js';
import { PERSON, startGitServer, type GitServer } from '../../fakes/git-server.js';

const BPA = { name: 'bpa', email: 'bpa@edge.example' };

function status(files: Record<string, string | null>, branch = 'main'): StatusCommit {
  return {
    files,
    branch,
    author: BPA,
    message: 'bpa: east Ready @ 1234567\n\nBpa-Source: 1234567890abcdef\nBpa-Plan: p1\n',
  };
}

describe('commitAndPush against git http-backend', function () {
  this.timeout(60_000);
  let server: GitServer;
  let tmp: string;
  let repo: RepoOptions;

  beforeEach(async () => {
    server = await startGitServer();
    tmp = await mkdtemp(join(tmpdir(), 'bpa-push-'));
    const url = await server.createRepo('site', {
      files: { 'sites/edge/site.yaml': 'kind: Site\n', 'README.md': 'readme\n' },
    });
    repo = { url, ref: 'main', dir: join(tmp, 'wc') };
    await syncRepo(repo);
  });
  afterEach(async () => {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('creates one commit with the message, author and files, on top of the head', async () => {
    const before = await server.log('site', 'main');
    const res = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }),
      { now: () => 1_700_000_000_000 },
    );
    assert.equal(res.attempts, 1);
    const after = await server.log('site', 'main');
    assert.equal(after.length, before.length + 1);
    const top = after[0];
    assert.equal(top?.sha, res.commit);
    assert.deepEqual(top?.parents, [before[0]?.sha]);
    assert.deepEqual(top?.author, BPA);
    assert.equal(top?.subject, 'bpa: east Ready @ 1234567');
    assert.match(top?.message ?? '', /\n\nBpa-Source: 1234567890abcdef\nBpa-Plan: p1$/);
    assert.equal(
      await server.readFile('site', 'main', 'sites/edge/status/east.yaml'),
      'phase: Ready\n',
    );
    assert.equal(await server.readFile('site', 'main', 'sites/edge/site.yaml'), 'kind: Site\n');
    assert.equal(
      (await server.git('site', ['log', '-1', '--format=%at %ct', 'main'])).trim(),
      '1700000000 1700000000',
    );
    // trailers parse as git trailers, and the objects pass git's strict checks
    const trailers = await server.git('site', [
      'log',
      '-1',
      '--format=%(trailers:key=Bpa-Source,valueonly)',
      'main',
    ]);
    assert.equal(trailers.trim(), '1234567890abcdef');
    await server.git('site', ['fsck', '--strict', '--no-dangling']);
  });

  it('identical content makes no commit and no push', async () => {
    await commitAndPush(repo, status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }));
    const head = (await server.log('site', 'main'))[0]?.sha;
    server.requests.length = 0;
    const res = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }),
    );
    assert.equal(res.commit, undefined);
    assert.equal((await server.log('site', 'main'))[0]?.sha, head);
    assert.equal(
      server.requests.filter(
        (r) => r.query.includes('receive-pack') || r.path.endsWith('receive-pack'),
      ).length,
      0,
    );
    // deleting a path that does not exist is no change either
    assert.equal(
      (await commitAndPush(repo, status({ 'sites/edge/status/none.yaml': null }))).commit,
      undefined,
    );
  });

  it('deletes files (null) and keeps everything else', async () => {
    await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'a\n', 'sites/edge/status/west.yaml': 'b\n' }),
    );
    await commitAndPush(repo, status({ 'sites/edge/status/west.yaml': null }));
    assert.equal(await server.readFile('site', 'main', 'sites/edge/status/west.yaml'), undefined);
    assert.equal(await server.readFile('site', 'main', 'sites/edge/status/east.yaml'), 'a\n');
    await commitAndPush(repo, status({ 'sites/edge/status/east.yaml': null }));
    const tree = await server.git('site', ['ls-tree', '-r', '--name-only', 'main']);
    assert.deepEqual(
      tree.trim().split('\n'),
      ['README.md', 'sites/edge/site.yaml'],
      'an emptied directory disappears',
    );
  });

  it('a person pushes between its fetch and its push (server-side rejection): re-created on the new head, nothing lost', async () => {
    let personSha = '';
    server.intercept({ method: 'POST', path: '/git-receive-pack' }, async () => {
      personSha = await server.commitAs(
        'site',
        { 'sites/edge/clusters/west.yaml': 'kind: Cluster\n' },
        'add west',
      );
    });
    const res = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }),
      { backoffMs: 10 },
    );
    assert.equal(res.attempts, 2);
    const log = await server.log('site', 'main');
    assert.equal(log[0]?.sha, res.commit);
    assert.deepEqual(log[0]?.parents, [personSha], 'the status commit sits on the person commit');
    assert.equal(log[1]?.sha, personSha);
    assert.equal(log[1]?.author.email, PERSON.email);
    assert.equal(
      await server.readFile('site', 'main', 'sites/edge/clusters/west.yaml'),
      'kind: Cluster\n',
    );
    assert.equal(
      await server.readFile('site', 'main', 'sites/edge/status/east.yaml'),
      'phase: Ready\n',
    );
    assert.equal(
      log.filter((c) => c.author.email === BPA.email).length,
      1,
      'one status commit, no merge',
    );
    assert.ok(
      log.every((c) => c.parents.length <= 1),
      'no merge commit',
    );
  });

  it('a person pushes before its ref advertisement for push (client-side fast-forward check): same outcome', async () => {
    let personSha = '';
    server.intercept({ method: 'GET', query: 'service=git-receive-pack' }, async () => {
      personSha = await server.commitAs(
        'site',
        { 'README.md': 'edited by a person\n' },
        'edit readme',
      );
    });
    const res = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }),
      { backoffMs: 10 },
    );
    assert.equal(res.attempts, 2);
    const log = await server.log('site', 'main');
    assert.deepEqual(log[0]?.parents, [personSha]);
    assert.equal(await server.readFile('site', 'main', 'README.md'), 'edited by a person\n');
  });

  it('gives up after maxAttempts with GIT_PUSH_REJECTED (transient), keeping every person commit', async () => {
    const people: string[] = [];
    server.intercept({ method: 'POST', path: '/git-receive-pack', times: 10 }, async () => {
      people.push(
        await server.commitAs(
          'site',
          { [`people/${people.length}.txt`]: 'x\n' },
          `person ${people.length}`,
        ),
      );
    });
    await assert.rejects(
      commitAndPush(repo, status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }), {
        maxAttempts: 3,
        backoffMs: 5,
      }),
      (err: unknown) =>
        err instanceof BpaError && err.code === 'GIT_PUSH_REJECTED' && err.retry === 'transient',
    );
    assert.equal(people.length, 3);
    const log = await server.log('site', 'main');
    assert.deepEqual(
      log.slice(0, 3).map((c) => c.sha),
      [...people].reverse(),
    );
    assert.equal(log.filter((c) => c.author.email === BPA.email).length, 0);
  });

  it('a server hook declining the push is GIT_PUSH_DECLINED (stalled), not retried', async () => {
    const hook = join(server.root, 'site.git', 'hooks', 'pre-receive');
    await writeFile(hook, '#!/bin/sh\necho "main is protected" >&2\nexit 1\n');
    await chmod(hook, 0o755);
    server.requests.length = 0;
    await assert.rejects(
      commitAndPush(repo, status({ 'sites/edge/status/east.yaml': 'x\n' }), { backoffMs: 5 }),
      (err: unknown) =>
        err instanceof BpaError && err.code === 'GIT_PUSH_DECLINED' && err.retry === 'stalled',
    );
    assert.equal(
      server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('receive-pack')).length,
      1,
    );
  });

  it('a separate status branch: created as an orphan holding only status files, then extended', async () => {
    const mainHead = (await server.log('site', 'main'))[0]?.sha;
    const first = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'a\n' }, 'bpa-status'),
    );
    assert.ok(first.commit);
    const log1 = await server.log('site', 'bpa-status');
    assert.equal(log1.length, 1);
    assert.deepEqual(log1[0]?.parents, []);
    assert.equal(
      (await server.git('site', ['ls-tree', '-r', '--name-only', 'bpa-status'])).trim(),
      'sites/edge/status/east.yaml',
    );
    const second = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'b\n' }, 'bpa-status'),
    );
    assert.deepEqual((await server.log('site', 'bpa-status'))[0]?.parents, [first.commit]);
    assert.ok(second.commit);
    assert.equal(
      (await commitAndPush(repo, status({ 'sites/edge/status/east.yaml': 'b\n' }, 'bpa-status')))
        .commit,
      undefined,
    );
    assert.equal(
      (await server.log('site', 'main'))[0]?.sha,
      mainHead,
      'the source branch is untouched',
    );
  });

  it('pushes from a shallow cache without touching its checkout; the next sync needs no download', async () => {
    for (let i = 0; i < 3; i++) await server.commitAs('site', { 'README.md': `r${i}\n` }, `r${i}`);
    const { revision } = await syncRepo(repo);
    assert.ok(
      (await readFile(join(repo.dir, '.git', 'shallow'), 'utf8')).trim().length > 0,
      'cache is shallow',
    );
    const count = (await server.log('site', 'main')).length;
    const res = await commitAndPush(
      repo,
      status({ 'sites/edge/status/east.yaml': 'phase: Ready\n' }),
    );
    assert.equal(
      (await server.log('site', 'main')).length,
      count + 1,
      'the whole history is still there',
    );
    await server.git('site', ['fsck', '--strict', '--no-dangling']);
    // the working copy still shows the revision being applied
    const { default: git } = await import('isomorphic-git');
    const fs = await import('node:fs');
    assert.equal(await git.resolveRef({ fs, dir: repo.dir, ref: 'HEAD' }), revision.commit);
    assert.equal(
      await readFile(join(repo.dir, 'sites/edge/status/east.yaml'), 'utf8').catch(() => 'absent'),
      'absent',
    );
    server.requests.length = 0;
    const next = await syncRepo(repo);
    assert.equal(next.revision.commit, res.commit);
    assert.equal(
      server.requests.length,
      1,
      'the status commit is already local: one ref advertisement, no fetch',
    );
    assert.equal(
      await readFile(join(repo.dir, 'sites/edge/status/east.yaml'), 'utf8'),
      'phase: Ready\n',
    );
  });

  it('works into an empty cache and from a deep one', async () => {
    const fresh = { ...repo, dir: join(tmp, 'fresh') };
    const a = await commitAndPush(fresh, status({ 'sites/edge/status/a.yaml': '1\n' }));
    assert.ok(a.commit);
    const deep = { ...repo, dir: join(tmp, 'deep'), depth: 1000 };
    await syncRepo(deep);
    const b = await commitAndPush(deep, status({ 'sites/edge/status/b.yaml': '2\n' }));
    assert.deepEqual((await server.log('site', 'main'))[0]?.parents, [a.commit]);
    assert.equal((await server.log('site', 'main'))[0]?.sha, b.commit);
  });

  it('server down while pushing: GIT_UNAVAILABLE (transient)', async () => {
    await server.down();
    await assert.rejects(
      commitAndPush(repo, status({ 'sites/edge/status/east.yaml': 'x\n' })),
      (err: unknown) =>
        err instanceof BpaError && err.code === 'GIT_UNAVAILABLE' && err.retry === 'transient',
    );
    await server.up();
    assert.ok((await commitAndPush(repo, status({ 'sites/edge/status/east.yaml': 'x\n' }))).commit);
  });
});
