import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BpaError } from '../../../src/util/errors.js';
import { syncRepo, type GitAuth } from '../../../src/source/git.js';
import { commitAndPush } from '../../../src/source/git-push.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

const TOKEN = 'tok-9f8e7d6c5b4a-SECRET';
const WRONG = 'wrong-Pa55-SECRET';

/** Every file under `dir`, recursively (the whole cache, .git included). */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

/** Fails when any file under `dir` holds one of `needles` (as bytes, so packs and the index count). */
async function assertNoneContain(dir: string, needles: string[]): Promise<void> {
  const files = await filesUnder(dir);
  assert.ok(files.length > 5, 'the cache has content to scan');
  for (const f of files) {
    const bytes = await readFile(f);
    for (const n of needles) assert.equal(bytes.includes(n), false, `${f} contains a secret`);
  }
}

async function authError(p: Promise<unknown>): Promise<BpaError> {
  try {
    await p;
  } catch (err: unknown) {
    assert.ok(err instanceof BpaError, String(err));
    return err;
  }
  assert.fail('expected an error');
}

describe('git over HTTP with credentials', function () {
  this.timeout(60_000);
  let server: GitServer;
  let tmp: string;
  let url: string;
  let n = 0;
  const wc = (): string => join(tmp, `wc-${++n}`);
  const secrets = [TOKEN, WRONG, Buffer.from(`x-access-token:${TOKEN}`).toString('base64')];

  beforeEach(async () => {
    server = await startGitServer({ auth: { username: 'x-access-token', password: TOKEN } });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-auth-'));
    url = await server.createRepo('site', { files: { 'sites/edge/site.yaml': 'kind: Site\n' } });
  });
  afterEach(async () => {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('the server refuses anonymous access (401 with WWW-Authenticate)', async () => {
    const res = await fetch(`${url}/info/refs?service=git-upload-pack`);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
    const err = await authError(syncRepo({ url, ref: 'main', dir: wc() }));
    assert.equal(err.code, 'GIT_AUTH');
  });

  it('a token syncs and pushes, sent up front (no 401 round trip); no secret lands in the cache', async () => {
    const dir = wc();
    const auth: GitAuth = { token: TOKEN };
    await syncRepo({ url, ref: 'main', dir, auth });
    await server.commitAs('site', { 'sites/edge/x.yaml': 'x: 1\n' }, 'x');
    const { changed } = await syncRepo({ url, ref: 'main', dir, auth });
    assert.equal(changed, true);
    const pushed = await commitAndPush(
      { url, ref: 'main', dir, auth },
      {
        files: { 'sites/edge/status/site.yaml': 'phase: Ready\n' },
        message: 'bpa: status',
        author: { name: 'bpa', email: 'bpa@x' },
        branch: 'main',
      },
    );
    assert.ok(pushed.commit);
    assert.deepEqual(
      server.requests.filter((r) => r.status === 401),
      [],
    );
    await assertNoneContain(dir, secrets);
  });

  it('username and password work too', async () => {
    const dir = wc();
    const { revision } = await syncRepo({
      url,
      ref: 'main',
      dir,
      auth: { username: 'x-access-token', password: TOKEN },
    });
    assert.equal(revision.commit, (await server.log('site', 'main'))[0]?.sha);
  });

  it('credentials inside the URL are used but never stored or echoed', async () => {
    const dir = wc();
    const withCreds = url.replace('http://', `http://x-access-token:${TOKEN}@`);
    await syncRepo({ url: withCreds, ref: 'main', dir });
    const config = await readFile(join(dir, '.git', 'config'), 'utf8');
    assert.ok(
      config.split('\n').some((line) => line.trim() === `url = ${url}`),
      config,
    );
    await assertNoneContain(dir, secrets);
    const bad = url.replace('http://', `http://x-access-token:${WRONG}@`);
    const err = await authError(syncRepo({ url: bad, ref: 'main', dir: wc() }));
    assert.equal(err.code, 'GIT_AUTH');
    for (const s of secrets) assert.ok(!err.message.includes(s), err.message);
    assert.ok(!JSON.stringify(err).includes(WRONG));
  });

  it('wrong credentials: GIT_AUTH (stalled) for sync and push, and the secret is in no message or file', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir, auth: { token: TOKEN } });
    const e1 = await authError(syncRepo({ url, ref: 'main', dir, auth: { token: WRONG } }));
    assert.equal(e1.code, 'GIT_AUTH');
    assert.equal(e1.retry, 'stalled');
    const e2 = await authError(
      commitAndPush(
        { url, ref: 'main', dir, auth: { username: 'bpa', password: WRONG } },
        {
          files: { 's.yaml': 'x\n' },
          message: 'm',
          author: { name: 'bpa', email: 'bpa@x' },
          branch: 'main',
        },
      ),
    );
    assert.equal(e2.code, 'GIT_AUTH');
    for (const e of [e1, e2]) {
      const text = `${e.message}\n${e.stack ?? ''}\n${JSON.stringify(e)}`;
      for (const s of [...secrets, Buffer.from(`bpa:${WRONG}`).toString('base64')])
        assert.ok(!text.includes(s), text);
    }
    await assertNoneContain(dir, secrets);
  });

  it('a server that rejects the push with 403 is GIT_AUTH', async () => {
    const dir = wc();
    await syncRepo({ url, ref: 'main', dir, auth: { token: TOKEN } });
    server.intercept({ query: 'service=git-receive-pack' }, () => ({
      status: 403,
      body: 'read-only token',
    }));
    const err = await authError(
      commitAndPush(
        { url, ref: 'main', dir, auth: { token: TOKEN } },
        {
          files: { 's.yaml': 'x\n' },
          message: 'm',
          author: { name: 'bpa', email: 'bpa@x' },
          branch: 'main',
        },
      ),
    );
    assert.equal(err.code, 'GIT_AUTH');
    assert.match(err.message, /403/);
  });
});
