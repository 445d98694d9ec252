import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buildDeb } from '../../lab/apt-repo.js';
import { startServe, TOKEN, type ServeProcess } from './serve-process.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const sha = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** One HTTP request with a raw path (no normalisation), the body from a buffer or a stream. */
function send(
  url: string,
  method: string,
  path: string,
  opts: { body?: Buffer | Readable; headers?: Record<string, string | number> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body instanceof Readable) opts.body.pipe(req);
    else req.end(opts.body);
  });
}

function put(
  url: string,
  kind: string,
  name: string,
  body: Buffer,
  opts: { sha256?: string; token?: string } = {},
): Promise<Answer> {
  return send(url, 'PUT', `/api/v1/artifacts/${kind}/${name}`, {
    body,
    headers: {
      authorization: `Bearer ${opts.token ?? TOKEN}`,
      'x-checksum-sha256': opts.sha256 ?? sha(body),
      'content-length': body.length,
    },
  });
}

async function list(url: string): Promise<Array<Record<string, unknown>>> {
  const r = await send(url, 'GET', '/api/v1/artifacts', {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { artifacts: Array<Record<string, unknown>> }).artifacts;
}

function curl(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', ...args], { encoding: 'buffer' }, (err, stdout, stderr) => {
      resolve({
        code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
        stdout,
        stderr: stderr.toString(),
      });
    });
  });
}

/** `size` pseudo-random bytes as a stream of 64 KiB chunks, and their sha256, without holding them. */
function generated(size: number, seed: string): { stream: () => Readable; sha256: string } {
  const chunk = (i: number): Buffer => {
    const block = Buffer.alloc(Math.min(65_536, size - i * 65_536));
    const h = createHash('sha256').update(`${seed}:${i}`).digest();
    for (let o = 0; o < block.length; o += h.length) h.copy(block, o);
    return block;
  };
  const n = Math.ceil(size / 65_536);
  const hash = createHash('sha256');
  for (let i = 0; i < n; i++) hash.update(chunk(i));
  return {
    sha256: hash.digest('hex'),
    stream: () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < n; i++) yield chunk(i);
        })(),
      ),
  };
}

const files = async (dir: string): Promise<string[]> => {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
};

/** The upload API of bpa serve as a process, against its state directory on disk. */
describe('bpa serve: artifact upload API', function () {
  this.timeout(120_000);
  let dir = '';
  let srv: ServeProcess;
  let state = '';
  const blobs = (): Promise<string[]> => files(join(state, 'artifacts', 'blobs', 'sha256'));
  const partials = (): Promise<string[]> => files(join(state, 'artifacts', 'tmp'));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-artifacts-'));
    state = join(dir, 'state');
    srv = await startServe(dir, { extra: ['--artifacts-max-mib', '150'] });
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stores 1 byte (201), the same again is 200, and serves it back', async () => {
    const one = Buffer.from('x');
    const first = await put(srv.url, 'files', 'one.txt', one);
    assert.equal(first.status, 201, first.body);
    assert.equal(first.headers['location'], '/artifacts/files/one.txt');
    const meta = JSON.parse(first.body) as Record<string, unknown>;
    assert.equal(meta['size'], 1);
    assert.equal(meta['sha256'], sha(one));
    const again = await put(srv.url, 'files', 'one.txt', one);
    assert.equal(again.status, 200, again.body);
    const got = await send(srv.url, 'GET', '/artifacts/files/one.txt');
    assert.equal(got.status, 200);
    assert.equal(got.body, 'x');
    assert.equal(got.headers['etag'], `"${sha(one)}"`);
  });

  it('stores content once, whatever the number of names', async () => {
    const data = randomBytes(4096);
    const before = (await blobs()).length;
    assert.equal((await put(srv.url, 'files', 'copy-a.bin', data)).status, 201);
    assert.equal((await put(srv.url, 'images', 'copy-b.img', data)).status, 201);
    assert.equal((await blobs()).length, before + 1);
  });

  it('lists name, kind, size, sha256 and time', async () => {
    const all = await list(srv.url);
    const one = all.find((a) => a['name'] === 'one.txt');
    assert.ok(one);
    assert.equal(one['kind'], 'files');
    assert.equal(one['size'], 1);
    assert.match(String(one['sha256']), /^[0-9a-f]{64}$/);
    assert.ok(!Number.isNaN(Date.parse(String(one['uploadedAt']))));
    const images = await send(srv.url, 'GET', '/api/v1/artifacts?kind=images', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const names = (JSON.parse(images.body) as { artifacts: Array<{ name: string }> }).artifacts;
    assert.deepEqual(
      names.map((a) => a.name),
      ['copy-b.img'],
    );
  });

  it('streams 144 MB to disk with flat memory', async () => {
    const body = generated(144 * 1024 * 1024, 'hundred');
    const before = await srv.peakRssKiB();
    const r = await send(srv.url, 'PUT', '/api/v1/artifacts/images/big.img', {
      body: body.stream(),
      headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': body.sha256 },
    });
    assert.equal(r.status, 201, r.body);
    const after = await srv.peakRssKiB();
    console.log(`    peak RSS of bpa serve: ${before} KiB before, ${after} KiB after 144 MB`);
    // The socket's chunks, written and dropped, wait for the collector until Node.js's
    // external-memory trigger (64 MiB) starts one: bounded by that, not by the file.
    assert.ok(after - before < 64 * 1024, `peak RSS grew by ${after - before} KiB`);
    const head = await send(srv.url, 'HEAD', '/artifacts/images/big.img');
    assert.equal(head.headers['content-length'], String(144 * 1024 * 1024));
  });

  it('refuses a wrong checksum with 400 and keeps nothing', async () => {
    const before = { list: await list(srv.url), blobs: await blobs() };
    const data = randomBytes(10_000);
    const r = await put(srv.url, 'files', 'wrong.bin', data, { sha256: sha(Buffer.from('no')) });
    assert.equal(r.status, 400);
    assert.match(r.body, /checksum_mismatch/);
    assert.deepEqual(await list(srv.url), before.list);
    assert.deepEqual(await blobs(), before.blobs);
    assert.deepEqual(await partials(), []);
    const missing = await send(srv.url, 'PUT', '/api/v1/artifacts/files/nosum.bin', {
      body: data,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(missing.status, 400);
    assert.match(missing.body, /X-Checksum-Sha256/);
  });

  it('leaves nothing behind when an upload is cut off half way', async () => {
    const before = await list(srv.url);
    const data = randomBytes(1024 * 1024);
    await new Promise<void>((resolve) => {
      const req = request(`${srv.url}/api/v1/artifacts/files/cut.bin`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'x-checksum-sha256': sha(data),
          'content-length': data.length,
        },
      });
      req.on('error', () => resolve());
      req.write(data.subarray(0, 300_000), () => setTimeout(() => req.destroy(), 200));
      req.on('close', () => resolve());
    });
    for (let i = 0; i < 50 && (await partials()).length; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await partials(), []);
    assert.deepEqual(await list(srv.url), before);
    assert.equal(
      (await send(srv.url, 'GET', '/artifacts/files/cut.bin')).status,
      404,
      'a cut-off upload must not become visible',
    );
  });

  it('answers 401 without the token or with another one, and never stores', async () => {
    const data = Buffer.from('secret?');
    const bad = await put(srv.url, 'files', 'x.bin', data, { token: 'not-the-token' });
    assert.equal(bad.status, 401);
    assert.match(String(bad.headers['www-authenticate']), /^Bearer/);
    const none = await send(srv.url, 'PUT', '/api/v1/artifacts/files/x.bin', {
      body: data,
      headers: { 'x-checksum-sha256': sha(data) },
    });
    assert.equal(none.status, 401);
    assert.equal((await send(srv.url, 'GET', '/api/v1/artifacts')).status, 401);
    assert.equal((await send(srv.url, 'DELETE', '/api/v1/artifacts/files/one.txt')).status, 401);
    assert.equal((await send(srv.url, 'GET', '/artifacts/files/x.bin')).status, 404);
  });

  it('refuses names with path separators or ..', async () => {
    const data = Buffer.from('evil');
    for (const name of ['..%2F..%2Fetc%2Fpasswd', 'a%2Fb', 'a%5Cb', '.hidden', 'x..y']) {
      const r = await put(srv.url, 'files', name, data);
      assert.equal(r.status, 400, `${name}: ${r.body}`);
    }
    // Paths the URL parser normalises land outside the route's shape: no artifact either.
    for (const path of ['../../../x', '%2E%2E', '%2e%2e/x']) {
      const dots = await send(srv.url, 'PUT', `/api/v1/artifacts/files/${path}`, {
        body: data,
        headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha(data) },
      });
      assert.ok([400, 404].includes(dots.status), `${path}: ${dots.status}`);
    }
    assert.equal((await put(srv.url, 'stuff', 'a.bin', data)).status, 404);
    assert.equal((await put(srv.url, 'packages', 'not-a-deb.txt', data)).status, 400);
    const fake = await put(srv.url, 'packages', 'fake_1.0_all.deb', data);
    assert.equal(fake.status, 400);
    assert.match(fake.body, /not a Debian package/);
    const r = await curl(['--path-as-is', `${srv.url}/artifacts/files/../../state/token`]);
    assert.doesNotMatch(r.stdout.toString(), new RegExp(TOKEN));
    assert.deepEqual(await partials(), []);
  });

  it('takes concurrent uploads of one name: each is whole, the last one stays', async () => {
    const a = randomBytes(2 * 1024 * 1024);
    const b = randomBytes(2 * 1024 * 1024);
    const [ra, rb] = await Promise.all([
      put(srv.url, 'images', 'race.img', a),
      put(srv.url, 'images', 'race.img', b),
    ]);
    assert.deepEqual([ra.status, rb.status], [201, 201]);
    const got = await send(srv.url, 'HEAD', '/artifacts/images/race.img');
    const etag = String(got.headers['etag']);
    assert.ok(etag === `"${sha(a)}"` || etag === `"${sha(b)}"`, etag);
    // The replaced content is collected: only the one that stayed is on disk.
    const stored = await blobs();
    assert.equal(stored.includes(sha(a)) && stored.includes(sha(b)), false);
    const same = randomBytes(100_000);
    const statuses = (
      await Promise.all([1, 2, 3].map(() => put(srv.url, 'files', 'same.bin', same)))
    )
      .map((r) => r.status)
      .sort();
    assert.deepEqual(statuses, [200, 200, 201]);
  });

  it('answers Range requests from curl, with ETag and 304', async () => {
    const data = Buffer.from('0123456789abcdefghij');
    assert.equal((await put(srv.url, 'images', 'range.img', data)).status, 201);
    const url = `${srv.url}/artifacts/images/range.img`;
    assert.equal((await curl(['--range', '0-9', url])).stdout.toString(), '0123456789');
    assert.equal((await curl(['--range', '15-', url])).stdout.toString(), 'fghij');
    assert.equal((await curl(['--range', '-3', url])).stdout.toString(), 'hij');
    const partial = await curl(['-i', '--range', '5-7', url]);
    assert.match(partial.stdout.toString(), /^HTTP\/1\.1 206/);
    assert.match(partial.stdout.toString(), /content-range: bytes 5-7\/20/i);
    const outside = await curl(['-o', '/dev/null', '-w', '%{http_code}', '--range', '50-60', url]);
    assert.equal(outside.stdout.toString(), '416');
    const etag = `"${sha(data)}"`;
    const cached = await send(srv.url, 'GET', '/artifacts/images/range.img', {
      headers: { 'if-none-match': etag },
    });
    assert.equal(cached.status, 304);
    // If-Range with an old ETag: the whole, new file.
    const stale = await send(srv.url, 'GET', '/artifacts/images/range.img', {
      headers: { range: 'bytes=0-1', 'if-range': '"old"' },
    });
    assert.equal(stale.status, 200);
    assert.equal(stale.body, data.toString());
  });

  it('serves .sha256sum and .md5sum files that sha256sum -c and md5sum -c accept', async () => {
    const work = join(dir, 'check');
    const data = randomBytes(5000);
    assert.equal((await put(srv.url, 'images', 'node.qcow2', data)).status, 201);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'node.qcow2'), data);
    for (const [suffix, tool] of [
      ['sha256sum', 'sha256sum'],
      ['md5sum', 'md5sum'],
    ] as const) {
      const r = await curl([
        '-f',
        '-o',
        join(work, `node.qcow2.${suffix}`),
        `${srv.url}/artifacts/images/node.qcow2.${suffix}`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const checked = await new Promise<number>((resolve) =>
        execFile(tool, ['-c', `node.qcow2.${suffix}`], { cwd: work }, (err) =>
          resolve(err ? 1 : 0),
        ),
      );
      assert.equal(checked, 0, `${tool} -c failed`);
    }
    assert.equal((await send(srv.url, 'GET', '/artifacts/images/none.qcow2.md5sum')).status, 404);
    // Computed when first asked for, then kept in the record.
    const record = await send(srv.url, 'GET', '/api/v1/artifacts/images/node.qcow2', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(
      (JSON.parse(record.body) as { md5?: string }).md5,
      createHash('md5').update(data).digest('hex'),
    );
  });

  it('refuses a body larger than the limit with 413, declared or not', async () => {
    const declared = await send(srv.url, 'PUT', '/api/v1/artifacts/images/huge.img', {
      body: Buffer.alloc(10),
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'x-checksum-sha256': sha(Buffer.alloc(10)),
        'content-length': 151 * 1024 * 1024,
      },
    }).catch((err: Error) => ({ status: -1, body: err.message, headers: {} }));
    assert.equal(declared.status, 413, declared.body);
    const body = generated(151 * 1024 * 1024, 'too-big');
    const chunked = await send(srv.url, 'PUT', '/api/v1/artifacts/images/huge.img', {
      body: body.stream(),
      headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': body.sha256 },
    }).catch((err: Error) => ({ status: -1, body: err.message, headers: {} }));
    assert.equal(chunked.status, 413, chunked.body);
    assert.deepEqual(await partials(), []);
    assert.equal((await send(srv.url, 'GET', '/artifacts/images/huge.img')).status, 404);
  });

  it('deletes an artifact and its content once no name holds it', async () => {
    const data = randomBytes(3000);
    assert.equal((await put(srv.url, 'files', 'gone.bin', data)).status, 201);
    const del = await send(srv.url, 'DELETE', '/api/v1/artifacts/files/gone.bin', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(del.status, 204);
    assert.equal((await send(srv.url, 'GET', '/artifacts/files/gone.bin')).status, 404);
    assert.equal((await blobs()).includes(sha(data)), false);
    const again = await send(srv.url, 'DELETE', '/api/v1/artifacts/files/gone.bin', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(again.status, 404);
  });

  it('indexes uploaded .deb files for apt, and drops them from the index on delete', async () => {
    const deb = await readFile(
      await buildDeb(join(dir, 'debs'), { name: 'tool', version: '1.2-3' }),
    );
    const name = 'tool_1.2-3_all.deb';
    assert.equal((await put(srv.url, 'packages', name, deb)).status, 201);
    const packages = await send(srv.url, 'GET', '/artifacts/apt/Packages');
    assert.match(packages.body, /^Package: tool\nVersion: 1\.2-3\n/m);
    assert.match(packages.body, new RegExp(`^SHA256: ${sha(deb)}$`, 'm'));
    const release = (await send(srv.url, 'GET', '/artifacts/apt/Release')).body;
    const listed = ` ${sha(Buffer.from(packages.body))} ${Buffer.byteLength(packages.body)} Packages`;
    assert.ok(release.includes(listed), release);
    const pool = await curl([`${srv.url}/artifacts/apt/pool/${name}`]);
    assert.equal(sha(pool.stdout), sha(deb));
    // Not signed without --apt-signing-key.
    assert.equal((await send(srv.url, 'GET', '/artifacts/apt/InRelease')).status, 404);
    const del = await send(srv.url, 'DELETE', `/api/v1/artifacts/packages/${name}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(del.status, 204);
    assert.doesNotMatch((await send(srv.url, 'GET', '/artifacts/apt/Packages')).body, /tool/);
    assert.equal((await send(srv.url, 'GET', `/artifacts/apt/pool/${name}`)).status, 404);
  });

  it('survives a restart in the middle of an upload: the half is gone, the rest stays', async () => {
    const before = await list(srv.url);
    const data = randomBytes(4 * 1024 * 1024);
    const req = request(`${srv.url}/api/v1/artifacts/images/interrupted.img`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'x-checksum-sha256': sha(data),
        'content-length': data.length,
      },
    });
    req.on('error', () => undefined);
    await new Promise<void>((resolve) => req.write(data.subarray(0, 1024 * 1024), () => resolve()));
    for (let i = 0; i < 50 && !(await partials()).length; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal((await partials()).length, 1, 'the upload should be in progress');
    await srv.stop('SIGKILL');
    req.destroy();
    srv = await startServe(dir, { extra: ['--artifacts-max-mib', '150'] });
    assert.deepEqual(await partials(), []);
    assert.deepEqual(await list(srv.url), before);
    assert.equal((await send(srv.url, 'GET', '/artifacts/images/big.img')).status, 200);
    const retry = await put(srv.url, 'images', 'interrupted.img', data);
    assert.equal(retry.status, 201, retry.body);
  });

  it('refuses to start with an apt signing key gpg cannot sign with', async () => {
    const bad = join(dir, 'not-a-key.asc');
    await writeFile(bad, '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nnot a key\n');
    await assert.rejects(
      startServe(join(dir, 'bad-key'), { extra: ['--apt-signing-key', bad] }),
      /APT_SIGNING_KEY_INVALID: --apt-signing-key .*not-a-key\.asc holds no usable OpenPGP secret key/,
    );
  });

  it('without a token file, the upload API does not exist and downloads still work', async () => {
    const other = await startServe(join(dir, 'no-token'), { token: false });
    try {
      const data = Buffer.from('x');
      const r = await send(other.url, 'PUT', '/api/v1/artifacts/files/x', {
        body: data,
        headers: { authorization: `Bearer ${TOKEN}`, 'x-checksum-sha256': sha(data) },
      });
      assert.equal(r.status, 404);
      assert.equal((await send(other.url, 'GET', '/artifacts/apt/Release')).status, 200);
    } finally {
      await other.stop();
    }
  });
});
