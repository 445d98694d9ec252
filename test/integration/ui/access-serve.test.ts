import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, kill, spawnBpa, waitFor } from '../apply/harness.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

/** bpa serve on a network address: the status page is off without a token, behind it with one. */
describe('bpa serve: access to the status page', function () {
  this.timeout(60_000);
  requireLoopbackOnly();
  let tmp = '';
  let site = '';
  const children: ChildProcess[] = [];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ui-access-'));
    site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await cp(join(ROOT, 'sites', 'example', 'site.yaml'), join(site, 'site.yaml'));
  });
  after(async () => {
    // A child killed by a signal has no exit code: only those still running.
    for (const c of children) if (c.exitCode === null && c.signalCode === null) await kill(c);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function serve(
    args: string[],
  ): Promise<{ port: string; child: ChildProcess; stderr: () => string }> {
    let stderr = '';
    const child = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(tmp, 'state'),
      '--interval',
      '1h',
      '--listen',
      '0.0.0.0:0',
      ...args,
    ]);
    children.push(child);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const port = await waitFor(
      'the server URL',
      async () => /"url":"http:\/\/0\.0\.0\.0:(\d+)"/.exec(stderr)?.[1],
      20_000,
    );
    return { port, child, stderr: () => stderr };
  }

  it('without --ui-token-file on 0.0.0.0: bpa runs, the page answers 403, the probes and status API work', async () => {
    const { port, child, stderr } = await serve([]);
    const base = `http://127.0.0.1:${port}`;
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 403);
    assert.match(await page.text(), /The status page is off/);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.match(stderr(), /the status page is off/);
    await kill(child);
  });

  it('with --ui-token-file: a login, and the bearer token gets in; an empty file stops bpa from starting', async () => {
    await writeFile(join(tmp, 'token'), 'a-long-random-token-for-the-page\n', { mode: 0o600 });
    const { port, child } = await serve(['--ui-token-file', join(tmp, 'token')]);
    const base = `http://127.0.0.1:${port}`;
    const page = await fetch(`${base}/`, { redirect: 'manual' });
    assert.equal(page.status, 303);
    assert.equal(page.headers.get('location'), '/ui/login?next=%2F');
    const ok = await fetch(`${base}/`, {
      headers: { authorization: 'Bearer a-long-random-token-for-the-page' },
    });
    assert.equal(ok.status, 200);
    await kill(child);

    await writeFile(join(tmp, 'empty'), '\n');
    let stderr = '';
    const bad = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(tmp, 'state2'),
      '--listen',
      '127.0.0.1:0',
      '--ui-token-file',
      join(tmp, 'empty'),
    ]);
    children.push(bad);
    bad.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => bad.once('exit', r));
    assert.equal(code, 1);
    assert.match(
      stderr,
      /SECRET_FILE_UNREADABLE: .*empty is empty: it must hold the status page token/,
    );
  });
});
