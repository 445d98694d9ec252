import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

/** The system git, isolated from the machine's configuration. */
function git(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
    };
    execFile('git', args, { cwd, env, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args.join(' ')}: ${stderr}`));
      else resolve(stdout);
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('fake git server (git http-backend behind Node http)', function () {
  this.timeout(60_000);
  let server: GitServer;
  let tmp: string;
  let url: string;

  beforeEach(async () => {
    server = await startGitServer();
    tmp = await mkdtemp(join(tmpdir(), 'bpa-gitsrv-'));
    url = await server.createRepo('site', { files: { 'a.txt': 'a\n' } });
  });
  afterEach(async () => {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('serves native clone, fetch and push; people commit straight into the bare repository', async () => {
    const clone = join(tmp, 'clone');
    await git(['clone', '--quiet', url, clone], tmp);
    assert.equal(await readFile(join(clone, 'a.txt'), 'utf8'), 'a\n');
    await writeFile(join(clone, 'b.txt'), 'b\n');
    await git(['add', 'b.txt'], clone);
    await git(
      ['-c', 'user.name=N', '-c', 'user.email=n@x', 'commit', '--quiet', '-m', 'native push'],
      clone,
    );
    await git(['push', '--quiet', 'origin', 'main'], clone);
    assert.equal(await server.readFile('site', 'main', 'b.txt'), 'b\n');
    const sha = await server.commitAs('site', { 'a.txt': null, 'c.txt': 'c\n' }, 'person');
    await git(['pull', '--quiet', '--ff-only'], clone);
    assert.equal((await git(['rev-parse', 'HEAD'], clone)).trim(), sha);
    const log = await server.log('site', 'main');
    assert.deepEqual(
      log.map((c) => c.subject),
      ['person', 'native push', 'initial commit'],
    );
    assert.equal(await server.readFile('site', 'main', 'a.txt'), undefined);
    assert.ok(
      server.requests.some(
        (r) => r.method === 'POST' && r.path === '/site.git/git-receive-pack' && r.status === 200,
      ),
    );
  });

  it('passes Git-Protocol through (v2 ls-refs is a POST), or withholds it when protocolV2 is false', async () => {
    server.requests.length = 0;
    await git(['-c', 'protocol.version=2', 'ls-remote', url], tmp);
    assert.deepEqual(
      server.requests.map((r) => r.method),
      ['GET', 'POST'],
    );
    const v0 = await startGitServer({ protocolV2: false });
    try {
      const u = await v0.createRepo('r');
      const out = await git(['-c', 'protocol.version=2', 'ls-remote', u], tmp);
      assert.match(out, /refs\/heads\/main/);
      assert.deepEqual(
        v0.requests.map((r) => r.method),
        ['GET'],
      );
    } finally {
      await v0.stop();
    }
  });

  it('accepts gzip request bodies (native fetch of many branches)', async () => {
    const clone = join(tmp, 'clone');
    await git(['clone', '--quiet', url, clone], tmp);
    // 40 new branches make the request's want lines exceed git's 1 KiB gzip threshold.
    let stream = '';
    for (let i = 0; i < 40; i++) {
      stream += `commit refs/heads/b${i}\ncommitter N <n@x> 1700000000 +0000\ndata 3\nb${i}\nM 644 inline f.txt\ndata 2\n${i % 10}\n\n`;
    }
    await server.git('site', ['fast-import', '--quiet'], { input: stream });
    server.requests.length = 0;
    await git(['-c', 'protocol.version=0', 'fetch', '--quiet', 'origin'], clone);
    assert.equal(
      (await git(['rev-parse', 'origin/b39'], clone)).trim(),
      (await server.git('site', ['rev-parse', 'b39'])).trim(),
    );
    assert.ok(
      server.requests.some((r) => r.method === 'POST' && r.encoding === 'gzip' && r.status === 200),
      JSON.stringify(server.requests),
    );
  });

  it('down refuses connections, up serves again on the same port', async () => {
    await server.down();
    await assert.rejects(git(['ls-remote', url], tmp));
    await server.up();
    assert.equal(server.url, new URL(url).origin);
    assert.match(await git(['ls-remote', url], tmp), /refs\/heads\/main/);
  });

  it('intercept hooks delay or answer a request, once unless told otherwise', async () => {
    let seen = '';
    server.intercept({ method: 'GET', query: 'upload-pack' }, (req) => {
      seen = `${req.method} ${req.path}?${req.query}`;
      return { status: 503, body: 'down for maintenance' };
    });
    await assert.rejects(git(['ls-remote', url], tmp), /503|maintenance/);
    assert.equal(seen, 'GET /site.git/info/refs?service=git-upload-pack');
    assert.match(await git(['ls-remote', url], tmp), /refs\/heads\/main/);
    assert.equal(server.requests[0]?.status, 503);
    assert.ok(server.requests.slice(1).every((r) => r.status === 200));
  });

  it('basic auth: 401 with WWW-Authenticate without the right credentials; REMOTE_USER may push', async () => {
    const locked = await startGitServer({ auth: { username: 'alice', password: 'pw' } });
    try {
      const u = await locked.createRepo('r');
      await assert.rejects(git(['ls-remote', u], tmp));
      assert.equal(locked.requests[0]?.status, 401);
      const withCreds = u.replace('http://', 'http://alice:pw@');
      const clone = join(tmp, 'locked');
      await git(['clone', '--quiet', withCreds, clone], tmp);
      await git(
        [
          '-c',
          'user.name=N',
          '-c',
          'user.email=n@x',
          'commit',
          '--quiet',
          '--allow-empty',
          '-m',
          'by alice',
        ],
        clone,
      );
      await git(['push', '--quiet', 'origin', 'main'], clone);
      assert.equal((await locked.log('r', 'main'))[0]?.subject, 'by alice');
    } finally {
      await locked.stop();
    }
  });

  it('stop() kills a CGI still running and removes the repositories', async () => {
    // A POST whose body never ends keeps http-backend waiting on its stdin.
    const req = http.request(`${url}/git-upload-pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-git-upload-pack-request' },
    });
    req.on('error', () => undefined);
    req.write('0032want ');
    const deadline = Date.now() + 5_000;
    while (server.pids().length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const pids = server.pids();
    assert.equal(pids.length, 1);
    const root = server.root;
    await server.stop();
    const gone = Date.now() + 5_000;
    while (pids.some((p) => alive(p)) && Date.now() < gone)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      pids.every((p) => !alive(p)),
      'CGI killed',
    );
    await assert.rejects(readFile(join(root, 'site.git', 'HEAD')));
    req.destroy();
  });
});
