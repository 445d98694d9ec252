import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, spawnBpa, waitFor } from '../apply/harness.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

async function watchRuns(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^bpa_reconcile_total\{([^}]*)\} (\d+)/gm))
    if (/trigger="watch"/.test(m[1] ?? '')) n += Number(m[2]);
  return n;
}

/** bpa serve --watch DIR: a local site followed with file watching, for development. */
describe('bpa serve --watch DIR', function () {
  this.timeout(60_000);
  // Serves the example's inventory: its hosts' addresses must be unreachable.
  requireLoopbackOnly();
  let tmp: string;
  let child: ChildProcess | undefined;
  let stderr = '';
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
    }
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('reconciles at start and again when a site file changes, writing status/ into the directory', async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-watch-'));
    const site = join(tmp, 'site');
    // The example's inventory and Site document, without clusters: nothing to provision.
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await cp(join(ROOT, 'sites', 'example', 'site.yaml'), join(site, 'site.yaml'));
    child = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(tmp, 'state'),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      20_000,
    );
    await waitFor(
      'the first reconcile',
      async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
      20_000,
      100,
    );
    assert.match(await readFile(join(site, 'status', 'site.yaml'), 'utf8'), /kind: SiteStatus/);
    assert.equal(await watchRuns(url), 0);
    const inv = join(site, 'inventory', 'hosts.yaml');
    await writeFile(inv, (await readFile(inv, 'utf8')) + '\n# edited\n');
    await waitFor(
      'a reconcile triggered by the change',
      async () => ((await watchRuns(url)) >= 1 ? true : undefined),
      20_000,
      100,
    );
    const exited = new Promise<number | null>((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  it('an inventory it cannot read (--kubeconfig MISSING): status/site.yaml says Failed with the error, never Ready', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bpa-watch-failed-'));
    const site = join(dir, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await cp(join(ROOT, 'sites', 'example', 'site.yaml'), join(site, 'site.yaml'));
    let err = '';
    const failing = spawnBpa([
      'serve',
      '--watch',
      site,
      '--kubeconfig',
      join(dir, 'missing'),
      '--state',
      join(dir, 'state'),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
    ]);
    try {
      failing.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const url = await waitFor(
        'the server URL',
        async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(err)?.[1],
        20_000,
      );
      const status = await waitFor(
        'the first reconcile',
        async () => {
          const body = (await (await fetch(`${url}/api/v1/status`)).json()) as {
            lastReconcile: { result: string; error: { code: string } } | null;
            status: { site?: { status: { phase: string } } } | null;
          };
          return body.lastReconcile ? body : undefined;
        },
        20_000,
        100,
      );
      assert.equal(status.lastReconcile?.result, 'failed');
      assert.equal(status.status?.site?.status.phase, 'Failed');
      const report = await readFile(join(site, 'status', 'site.yaml'), 'utf8');
      assert.match(report, /phase: Failed/);
      assert.doesNotMatch(report, /phase: Ready|AllClustersReady|clusters ready/);
      assert.match(report, /type: Ready\n\s+status: "False"/);
      assert.match(report, /type: Stalled\n\s+status: "True"/);
      assert.match(
        report,
        new RegExp(`reason: ${status.lastReconcile?.error.code ?? '-'}\n`),
        'the error code is the reason',
      );
      assert.match(report, /kubeconfig .*missing.* does not exist/);
    } finally {
      const exited = new Promise((r) => failing.once('exit', r));
      failing.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a plaintext Secret the Site uses: a warning in a watched directory, an error for bpa validate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bpa-watch-plain-'));
    const site = join(dir, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    const PASSWORD = 'plain-pw-31337';
    await writeFile(
      join(site, 'site.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: w\nspec:\n  inventory:\n    source: embedded\n    directory: inventory\n  ssh:\n    bootstrapCredentials: {secret: login}\n',
    );
    await writeFile(
      join(site, 'login.yaml'),
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: login\nstringData:\n  password: ${PASSWORD}\n`,
    );
    const validate = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const v = spawnBpa(['validate', site]);
      let out = '';
      v.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      v.once('exit', (code) => resolve({ code, out }));
    });
    assert.equal(validate.code, 1);
    assert.match(validate.out, /site\.yaml:10:\d+: error SECRET_NOT_ENCRYPTED/);
    const watching = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(dir, 'state'),
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
    ]);
    let err = '';
    try {
      watching.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const report = await waitFor(
        'the first report',
        async () => readFile(join(site, 'status', 'site.yaml'), 'utf8').catch(() => undefined),
        20_000,
        100,
      );
      // Accepted: the site reconciles; the warning is in bpa's log.
      assert.match(report, /phase: Ready/);
      assert.doesNotMatch(report, /SECRET_NOT_ENCRYPTED/);
      await waitFor(
        'the warning',
        async () => (/SECRET_PLAINTEXT/.test(err) ? true : undefined),
        5_000,
        100,
      );
      assert.ok(!report.includes(PASSWORD) && !err.includes(PASSWORD), 'the value is nowhere');
    } finally {
      const exited = new Promise((r) => watching.once('exit', r));
      watching.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
