import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ArtifactStore, UploadError, outOfSpace } from '../../../src/artifacts/store.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const body = (s: string): Readable => Readable.from([Buffer.from(s)]);

describe('ArtifactStore', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const blobs = (): Promise<string[]> => readdir(join(dir, 'blobs', 'sha256'));

  it('stores by content, tells created, unchanged and replaced apart, and collects', async () => {
    const changes: string[] = [];
    const store = await ArtifactStore.open(dir, {
      now: () => new Date('2026-01-01T00:00:00Z'),
      onChange: async (kind) => void changes.push(kind),
    });
    changes.length = 0;
    const max = { maxBytes: 100 };
    assert.equal(
      (await store.put('files', 'a', body('one'), { sha256: sha('one'), ...max })).outcome,
      'created',
    );
    assert.equal(
      (await store.put('files', 'a', body('one'), { sha256: sha('one'), ...max })).outcome,
      'unchanged',
    );
    assert.equal(
      (await store.put('images', 'b', body('one'), { sha256: sha('one'), ...max })).outcome,
      'created',
    );
    assert.deepEqual(await blobs(), [sha('one')]);
    assert.equal(
      (await store.put('files', 'a', body('two'), { sha256: sha('two'), ...max })).outcome,
      'replaced',
    );
    assert.deepEqual((await blobs()).sort(), [sha('one'), sha('two')].sort());
    assert.equal(await store.delete('images', 'b'), true);
    assert.deepEqual(await blobs(), [sha('two')]);
    assert.deepEqual(changes, ['files', 'images', 'files', 'images']);
    assert.equal(store.get('files', 'a')?.uploadedAt, '2026-01-01T00:00:00.000Z');
  });

  it('refuses a wrong checksum and a body over the limit, leaving nothing', async () => {
    const store = await ArtifactStore.open(dir);
    await assert.rejects(
      store.put('files', 'x', body('data'), { sha256: sha('other'), maxBytes: 100 }),
      (err: unknown) => err instanceof UploadError && err.reason === 'checksum',
    );
    await assert.rejects(
      store.put('files', 'x', body('data'), { sha256: sha('data'), maxBytes: 3 }),
      (err: unknown) => err instanceof UploadError && err.reason === 'too-large',
    );
    assert.deepEqual(await blobs(), []);
    assert.deepEqual(await readdir(join(dir, 'tmp')), []);
    assert.deepEqual(store.list(), []);
  });

  it('at open: removes partial uploads and orphan blobs, skips records without content', async () => {
    const first = await ArtifactStore.open(dir);
    await first.put('files', 'kept', body('kept'), { sha256: sha('kept'), maxBytes: 100 });
    await first.put('files', 'lost', body('lost'), { sha256: sha('lost'), maxBytes: 100 });
    await writeFile(join(dir, 'tmp', 'abc.part'), 'half');
    await writeFile(join(dir, 'blobs', 'sha256', sha('orphan')), 'orphan');
    await rm(join(dir, 'blobs', 'sha256', sha('lost')));
    const warnings: string[] = [];
    const again = await ArtifactStore.open(dir, { warn: (m) => warnings.push(m) });
    assert.deepEqual(
      again.list().map((m) => m.name),
      ['kept'],
    );
    assert.match(warnings[0] ?? '', /files\/lost\.json .* content is missing/);
    assert.deepEqual(await readdir(join(dir, 'tmp')), []);
    assert.deepEqual(await blobs(), [sha('kept')]);
  });

  it('computes an md5 when first asked, and keeps it', async () => {
    const store = await ArtifactStore.open(dir);
    await store.put('images', 'i', body('image'), { sha256: sha('image'), maxBytes: 100 });
    assert.equal(store.get('images', 'i')?.md5, undefined);
    const md5 = createHash('md5').update('image').digest('hex');
    assert.equal(await store.md5Of('images', 'i'), md5);
    const reopened = await ArtifactStore.open(dir);
    assert.equal(reopened.get('images', 'i')?.md5, md5);
    assert.equal(await reopened.md5Of('images', 'none'), undefined);
  });

  it('never hashes through a symbolic link: no md5, nothing recorded, and the content counts as missing', async () => {
    const store = await ArtifactStore.open(dir);
    await store.put('images', 'i', body('image'), { sha256: sha('image'), maxBytes: 100 });
    const outside = join(dir, 'outside');
    await writeFile(outside, 'not the image');
    await rm(store.blobPath(sha('image')));
    await symlink(outside, store.blobPath(sha('image')));
    assert.equal(await store.md5Of('images', 'i'), undefined);
    assert.equal(store.get('images', 'i')?.md5, undefined);
    assert.doesNotMatch(await readFile(join(dir, 'meta', 'images', 'i.json'), 'utf8'), /md5/);
    assert.equal(await store.hasContent(store.get('images', 'i')!), false);
    assert.deepEqual(await store.listStored('images'), []);
    // Uploading the content again puts the real file back in place of the link.
    await store.put('images', 'i', body('image'), { sha256: sha('image'), maxBytes: 100 });
    assert.equal(await store.hasContent(store.get('images', 'i')!), true);
    assert.equal(await store.md5Of('images', 'i'), createHash('md5').update('image').digest('hex'));
  });

  it('tells a full volume and a used-up quota apart, naming the store, and nothing else', () => {
    const errno = (code: string): NodeJS.ErrnoException =>
      Object.assign(new Error(`${code}: write failed`), { code, syscall: 'write' });
    // Root ignores disk quotas, so EDQUOT is made here; a full tmpfs gives the real ENOSPC in
    // test/unit/serve/artifact-routes.test.ts.
    const quota = outOfSpace(errno('EDQUOT'), '/state/artifacts', 'images/a.img');
    assert.ok(quota instanceof UploadError);
    assert.equal(quota.reason, 'no-space');
    assert.match(
      quota.message,
      /^the disk quota of the artifact store \/state\/artifacts is used up \(EDQUOT\) while storing images\/a\.img; nothing was stored/,
    );
    const full = outOfSpace(errno('ENOSPC'), '/state/artifacts', 'files/b');
    assert.match(
      full?.message ?? '',
      /^no space left on the device of the artifact store \/state\/artifacts \(ENOSPC\)/,
    );
    assert.equal(outOfSpace(errno('EIO'), '/state/artifacts', 'files/b'), undefined);
    assert.equal(outOfSpace(new Error('other'), '/state/artifacts', 'files/b'), undefined);
  });
});
