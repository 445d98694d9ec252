import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { AptRepository } from '../../../src/artifacts/apt-repo.js';
import { ArtifactStore, type StoreOptions } from '../../../src/artifacts/store.js';
import { artifactRoutes } from '../../../src/serve/artifacts/routes.js';
import { GuessLimiter } from '../../../src/serve/guess-limit.js';
import type { RouteSet } from '../../../src/serve/http.js';
import { createLogger } from '../../../src/util/log.js';

const TOKEN = 'artifact-token-4f1c8a';
const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The artifact routes on a real HTTP server, dispatched by exact path or longest prefix. */
async function serveRoutes(routes: RouteSet[]): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const route =
      routes.find((r) => r.path === path) ??
      routes
        .filter((r) => r.path.endsWith('/') && path.startsWith(r.path))
        .sort((a, b) => b.path.length - a.path.length)[0];
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    const handler = route?.handlers[method];
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    void Promise.resolve(handler(req, res, path)).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('serve: the artifact routes against an attacker on the provisioning network', () => {
  let dir = '';
  let outside = '';
  let store: ArtifactStore;
  let server: { url: string; close(): Promise<void> };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-artifact-routes-'));
    outside = join(dir, 'secret-outside-the-store');
    await writeFile(outside, 'BMC password: hunter2\n');
    store = await ArtifactStore.open(join(dir, 'artifacts'));
    const routes = artifactRoutes({
      store,
      apt: new AptRepository(),
      token: TOKEN,
      limiter: new GuessLimiter(),
      maxBytes: 64 * 1024 * 1024,
      log,
    });
    server = await serveRoutes(routes);
  });
  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const put = (name: string, content: Buffer | string): Promise<Answer> => {
    const body = Buffer.from(content);
    return request(`${server.url}/api/v1/artifacts/files/${name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha(body) },
      body,
    });
  };

  it('a range of an empty file is 416, not a 206 with an impossible Content-Range', async () => {
    assert.equal((await put('empty', '')).status, 201);
    for (const range of ['bytes=-5', 'bytes=0-', 'bytes=0-0']) {
      const a = await request(`${server.url}/artifacts/files/empty`, { headers: { range } });
      assert.equal(a.status, 416, range);
      assert.equal(a.headers['content-range'], 'bytes */0', range);
    }
    const whole = await request(`${server.url}/artifacts/files/empty`);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['content-length'], '0');
  });

  it('Range edge cases of a stored file: suffix, open end, past the end, several ranges, If-Range', async () => {
    assert.equal((await put('ten', '0123456789')).status, 201);
    const get = (headers: Record<string, string>): Promise<Answer> =>
      request(`${server.url}/artifacts/files/ten`, { headers });
    const suffix = await get({ range: 'bytes=-3' });
    assert.equal(suffix.status, 206);
    assert.equal(suffix.body.toString(), '789');
    assert.equal(suffix.headers['content-range'], 'bytes 7-9/10');
    assert.equal((await get({ range: 'bytes=8-' })).body.toString(), '89');
    assert.equal((await get({ range: 'bytes=10-' })).status, 416);
    assert.equal((await get({ range: 'bytes=99999999999999999999-' })).status, 416);
    assert.equal(
      (await get({ range: 'bytes=0-99999999999999999999' })).body.toString(),
      '0123456789',
    );
    // Several ranges or another unit: the whole file, never a multipart body.
    assert.equal((await get({ range: 'bytes=0-1,3-4' })).status, 200);
    const etag = suffix.headers.etag as string;
    assert.equal((await get({ range: 'bytes=0-1', 'if-range': etag })).status, 206);
    assert.equal((await get({ range: 'bytes=0-1', 'if-range': '"stale"' })).status, 200);
  });

  it('names with a path in them are refused on upload and find nothing on download', async () => {
    assert.equal((await put('ok', 'data')).status, 201);
    for (const name of ['..%2F..%2Fsecret', '%2E%2E', 'a%5Cb', '..']) {
      const a = await put(name, 'x');
      assert.ok(a.status === 400 || a.status === 404, `${name}: ${a.status}`);
    }
    for (const path of [
      '/artifacts/files/..%2F..%2Fsecret-outside-the-store',
      '/artifacts/files/..%2Fmeta%2Ffiles%2Fok.json',
      '/artifacts/apt/pool/..%2F..%2Fsecret-outside-the-store',
      '/artifacts/files/%2e%2e',
    ]) {
      const a = await request(`${server.url}${path}`);
      assert.equal(a.status, 404, path);
      assert.doesNotMatch(a.body.toString(), /hunter2/);
    }
  });

  it('a blob replaced by a symbolic link is not followed: 404, not the file it points at', async () => {
    assert.equal((await put('image.qcow2', 'the image')).status, 201);
    const blob = store.blobPath(sha('the image'));
    await unlink(blob);
    await symlink(outside, blob);
    const a = await request(`${server.url}/artifacts/files/image.qcow2`);
    assert.equal(a.status, 404);
    assert.doesNotMatch(a.body.toString(), /hunter2/);
  });

  it('the checksum files of a blob replaced by a symbolic link are 404 too, and nothing of it is recorded', async () => {
    assert.equal((await put('image.qcow2', 'the image')).status, 201);
    const blob = store.blobPath(sha('the image'));
    await unlink(blob);
    await symlink(outside, blob);
    const outsideMd5 = createHash('md5').update('BMC password: hunter2\n').digest('hex');
    for (const suffix of ['.md5sum', '.sha256sum']) {
      const a = await request(`${server.url}/artifacts/files/image.qcow2${suffix}`);
      assert.equal(a.status, 404, suffix);
      assert.doesNotMatch(a.body.toString(), new RegExp(outsideMd5), suffix);
    }
    assert.equal(store.get('files', 'image.qcow2')?.md5, undefined);
    const record = await readFile(
      join(dir, 'artifacts', 'meta', 'files', 'image.qcow2.json'),
      'utf8',
    );
    assert.doesNotMatch(record, /md5/);
  });

  it('a record that is a symbolic link is not read when the store opens', async () => {
    assert.equal((await put('real', 'content')).status, 201);
    // A record elsewhere, well formed, naming content the store holds.
    const elsewhere = join(dir, 'record-elsewhere.json');
    const record = await readFile(join(dir, 'artifacts', 'meta', 'files', 'real.json'), 'utf8');
    await writeFile(elsewhere, record.replace('"real"', '"linked"'));
    await symlink(elsewhere, join(dir, 'artifacts', 'meta', 'files', 'linked.json'));
    const warnings: string[] = [];
    const reopened = await ArtifactStore.open(join(dir, 'artifacts'), {
      warn: (m) => warnings.push(m),
    });
    assert.ok(reopened.get('files', 'real'));
    assert.equal(reopened.get('files', 'linked'), undefined);
    assert.match(warnings.join('\n'), /files\/linked\.json is a symbolic link/);
  });

  it('a directory of the store that is a symbolic link stops the store from opening', async () => {
    const elsewhere = join(dir, 'blobs-elsewhere');
    await mkdir(elsewhere);
    await rm(join(dir, 'artifacts', 'blobs', 'sha256'), { recursive: true });
    await symlink(elsewhere, join(dir, 'artifacts', 'blobs', 'sha256'));
    await assert.rejects(
      ArtifactStore.open(join(dir, 'artifacts')),
      /artifacts\/blobs\/sha256 is a symbolic link/,
    );
  });

  it('a record whose blob is a symbolic link is dropped when the store opens', async () => {
    assert.equal((await put('linked', 'content')).status, 201);
    const blob = store.blobPath(sha('content'));
    await unlink(blob);
    await symlink(outside, blob);
    const warnings: string[] = [];
    const reopened = await ArtifactStore.open(join(dir, 'artifacts'), {
      warn: (m) => warnings.push(m),
    });
    assert.equal(reopened.get('files', 'linked'), undefined);
    assert.match(
      warnings.join('\n'),
      /files\/linked\.json is unreadable or its content is missing/,
    );
  });

  it('a DELETE while a GET is being sent: the GET still gets the whole file, the next one 404', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 7);
    assert.equal((await put('big', big)).status, 201);
    const got = await new Promise<Buffer>((resolve, reject) => {
      const req = http.get(`${server.url}/artifacts/files/big`, (res) => {
        const chunks: Buffer[] = [];
        let deleted = false;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (deleted) return;
          deleted = true;
          res.pause();
          void request(`${server.url}/api/v1/artifacts/files/big`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${TOKEN}` },
          }).then((d) => {
            assert.equal(d.status, 204);
            res.resume();
          }, reject);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
    assert.equal(got.length, big.length);
    assert.ok(got.equals(big));
    assert.equal((await request(`${server.url}/artifacts/files/big`)).status, 404);
  });

  it('the upload API wants the token; oversized headers are refused by the server', async () => {
    const noToken = await request(`${server.url}/api/v1/artifacts/files/x`, {
      method: 'PUT',
      headers: { 'x-checksum-sha256': sha('x') },
      body: Buffer.from('x'),
    });
    assert.equal(noToken.status, 401);
    const huge = await request(`${server.url}/artifacts/files/ok`, {
      headers: { 'x-padding': 'a'.repeat(64 * 1024) },
    });
    assert.equal(huge.status, 431);
  });
});

/**
 * Mounts a tmpfs of `size` bytes (and at most `inodes` files and directories) at `path`, so that
 * a store there runs out of room for real; returns how to unmount it, or why it cannot.
 */
async function smallDisk(
  path: string,
  size: number,
  inodes?: number,
): Promise<{ unmount(): Promise<void> } | { reason: string }> {
  if (process.getuid?.() !== 0) return { reason: 'mounting a tmpfs needs root' };
  await mkdir(path, { recursive: true });
  const options = [`size=${size}`, ...(inodes ? [`nr_inodes=${inodes}`] : []), 'mode=0755'];
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', options.join(','), 'tmpfs', path], {
    encoding: 'utf8',
  });
  if (mount.status !== 0)
    return { reason: `mount -t tmpfs failed: ${(mount.stderr || String(mount.error)).trim()}` };
  return {
    async unmount() {
      const r = spawnSync('umount', [path], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`umount ${path}: ${r.stderr}`);
    },
  };
}

describe('serve: an upload to a full disk', () => {
  let dir = '';
  let disk: { unmount(): Promise<void> } | undefined;
  let server: { url: string; close(): Promise<void> } | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-artifact-full-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await disk?.unmount();
    disk = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** A store on a tmpfs of `size` bytes and `inodes` inodes, served; undefined when skipped. */
  const serveSmall = async (
    ctx: Mocha.Context,
    size: number,
    inodes?: number,
    storeOptions: (path: string) => StoreOptions = () => ({}),
  ): Promise<{ store: ArtifactStore; path: string; url: string }> => {
    const path = join(dir, 'small');
    const got = await smallDisk(path, size, inodes);
    if ('reason' in got) {
      console.log(`    skipped: ${got.reason}`);
      ctx.skip();
    }
    disk = got as { unmount(): Promise<void> };
    const store = await ArtifactStore.open(path, storeOptions(path));
    server = await serveRoutes(
      artifactRoutes({
        store,
        apt: new AptRepository(),
        token: TOKEN,
        maxBytes: 64 << 20,
        log,
        limiter: new GuessLimiter(),
      }),
    );
    return { store, path, url: server.url };
  };
  const put = (url: string, name: string, body: Buffer): Promise<Answer> =>
    request(`${url}/api/v1/artifacts/files/${name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha(body) },
      body,
    });
  const leftovers = async (path: string): Promise<string[]> => [
    ...(await readdir(join(path, 'tmp'))),
    ...(await readdir(join(path, 'blobs', 'sha256'))),
    ...(await readdir(join(path, 'meta', 'files'))),
  ];

  it('no space for the body: 507 naming ENOSPC and the store directory, nothing left', async function () {
    const { store, path, url } = await serveSmall(this, 512 * 1024);
    const a = await put(url, 'big.img', randomBytes(2 * 1024 * 1024));
    assert.equal(a.status, 507, a.body.toString());
    const body = JSON.parse(a.body.toString()) as { error: string; message: string };
    assert.equal(body.error, 'insufficient_storage');
    assert.match(body.message, /no space left/);
    assert.match(body.message, /ENOSPC/);
    assert.ok(body.message.includes(path), body.message);
    assert.doesNotMatch(body.message, /\n\s+at /);
    assert.deepEqual(await leftovers(path), []);
    assert.deepEqual(store.list(), []);
    // The space was given back: what fits is stored.
    assert.equal((await put(url, 'small.img', Buffer.from('fits'))).status, 201);
  });

  it('no room for the record once the body is stored: 507, and the body is removed too', async function () {
    // The mount point, the store's 7 directories and the upload's file: the record finds none.
    const { store, path, url } = await serveSmall(this, 1024 * 1024, 9);
    const a = await put(url, 'image.img', Buffer.from('the image'));
    assert.equal(a.status, 507, a.body.toString());
    assert.match(a.body.toString(), /insufficient_storage/);
    assert.deepEqual(await leftovers(path), []);
    assert.deepEqual(store.list(), []);
  });

  /**
   * A store whose onChange writes an index of `indexBytes` next to it once `full.on` is set:
   * on a disk with room for the record, the index runs out of space for real (ENOSPC).
   */
  const failingIndex = (full: { on: boolean }, errors: string[], calls: string[]) => {
    return (path: string): StoreOptions => ({
      onChange: async (kind) => {
        calls.push(kind);
        if (!full.on) return;
        const index = join(path, 'index');
        try {
          await writeFile(index, Buffer.alloc(2 << 20));
        } finally {
          await rm(index, { force: true });
        }
      },
      error: (message) => errors.push(message),
    });
  };

  it('the index not rebuilt after the record is written: 201 with a warning, the artifact served', async function () {
    const full = { on: false };
    const errors: string[] = [];
    const calls: string[] = [];
    const { store, path, url } = await serveSmall(
      this,
      1024 * 1024,
      undefined,
      failingIndex(full, errors, calls),
    );
    assert.equal((await put(url, 'image.img', Buffer.from('old image'))).status, 201);
    full.on = true;
    // A new name, and a replacement: both stored, the client told that the index lags.
    for (const [name, content, outcome] of [
      ['new.img', 'new', 'created'],
      ['image.img', 'new image', 'replaced'],
    ] as const) {
      const a = await put(url, name, Buffer.from(content));
      assert.equal(a.status, 201, a.body.toString());
      const body = JSON.parse(a.body.toString()) as { sha256: string; warning?: string };
      assert.equal(body.sha256, sha(content));
      assert.match(body.warning ?? '', /is stored, but the apt index was not rebuilt \(ENOSPC/);
      assert.doesNotMatch(a.body.toString(), /nothing was stored/);
      assert.equal(store.get('files', name)?.sha256, sha(content), outcome);
      const got = await request(`${url}/artifacts/files/${name}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.toString(), content);
    }
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.match(errors[0] ?? '', /ENOSPC/);
    // The store agrees with itself: one blob per record, nothing half-done, the old one gone.
    assert.deepEqual(
      (await readdir(join(path, 'blobs', 'sha256'))).sort(),
      [sha('new'), sha('new image')].sort(),
    );
    assert.deepEqual(await readdir(join(path, 'tmp')), []);
    assert.deepEqual((await readdir(join(path, 'meta', 'files'))).sort(), [
      'image.img.json',
      'new.img.json',
    ]);
    // The stale index is rebuilt with the next change, of any kind.
    full.on = false;
    calls.length = 0;
    const later = await request(`${url}/api/v1/artifacts/images/other.img`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha('x') },
      body: Buffer.from('x'),
    });
    assert.equal(later.status, 201);
    assert.equal(JSON.parse(later.body.toString()).warning, undefined);
    assert.deepEqual(calls.sort(), ['files', 'images']);
    calls.length = 0;
    assert.equal((await put(url, 'third.img', Buffer.from('3'))).status, 201);
    assert.deepEqual(calls, ['files'], 'rebuilt once: no longer stale');
  });
});
