import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kill, spawnBpa, waitFor } from '../apply/harness.js';

/** The real `bpa serve` (--watch, a site without clusters): the suspend API is wired and guarded. */
describe('bpa serve: the suspend API', function () {
  this.timeout(60_000);
  let tmp: string;
  let child: ChildProcess | undefined;

  const start = async (extra: string[]): Promise<string> => {
    let stderr = '';
    child = spawnBpa([
      'serve',
      '--watch',
      join(tmp, 'site'),
      '--state',
      join(tmp, 'state'),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
      ...extra,
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    return waitFor(
      'bpa serve to listen',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      30_000,
    );
  };

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-serve-suspend-'));
    await mkdir(join(tmp, 'site'), { recursive: true });
    await writeFile(
      join(tmp, 'site', 'site.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: s}\nspec: {}\n',
    );
    await writeFile(join(tmp, 'token'), 'serve-suspend-token-91c2\n', { mode: 0o600 });
  });
  afterEach(async () => {
    if (child) await kill(child);
    child = undefined;
    await rm(tmp, { recursive: true, force: true });
  });

  it('with --api-token-file: 401 without the token, 200 with it, kept in the state directory', async () => {
    const url = await start(['--api-token-file', join(tmp, 'token')]);
    const post = (body: object, token?: string) =>
      fetch(`${url}/api/v1/suspend`, {
        method: 'POST',
        headers: token ? { authorization: `Bearer ${token}` } : {},
        body: JSON.stringify(body),
      });
    const site = { reason: 'maintenance by hand' };
    assert.equal((await post(site)).status, 401);
    assert.equal((await post(site, 'wrong')).status, 401);
    assert.equal((await post(site, 'serve-suspend-token-91c2')).status, 200);
    const saved = JSON.parse(await readFile(join(tmp, 'state', 'suspended.json'), 'utf8')) as {
      suspended: Record<string, { reason?: string }>;
    };
    assert.equal(saved.suspended['*']?.reason, 'maintenance by hand');
  });

  it('refuses a cluster the site does not have: 404, once bpa has read the site', async () => {
    const url = await start(['--api-token-file', join(tmp, 'token')]);
    const auth = { authorization: 'Bearer serve-suspend-token-91c2' };
    // Once the first reconcile has read the site, a name it does not have is refused.
    await waitFor(
      'the first reconcile',
      async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
      30_000,
    );
    for (const cluster of ['constructor', 'east']) {
      const r = await fetch(`${url}/api/v1/suspend`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ cluster }),
      });
      assert.equal(r.status, 404, cluster);
      assert.match(
        ((await r.json()) as { message: string }).message,
        new RegExp(`^the site has no cluster ${cluster} \\(it has no clusters\\)`),
      );
    }
    const listed = await fetch(`${url}/api/v1/suspend`, { headers: auth });
    assert.deepEqual(await listed.json(), { suspended: { site: null, clusters: {} } });
  });

  it('without a token file the routes do not exist', async () => {
    const url = await start([]);
    assert.equal((await fetch(`${url}/api/v1/suspend`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${url}/api/v1/resume`, { method: 'POST' })).status, 404);
  });
});
