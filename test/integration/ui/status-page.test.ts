import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { readTree } from '../../fakes/tree.js';
import { sendPush } from '../../fakes/webhook.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { REFERENCE, kill, labReady, spawnBpa, waitFor } from '../apply/harness.js';
import { updateLabSite, writeLabSite } from '../apply/lab-site.js';

const CHROMIUM = '/usr/bin/chromium';
const SECRET = 'webhook-secret-for-the-page-test';

/**
 * Chromium reaches the bpa under test on 127.0.0.1 and nothing else: every other host goes
 * to a proxy that is not there and resolves to nothing, and its own background traffic
 * (updates, safe browsing, metrics) is off.
 */
const OFFLINE_ARGS = [
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=127.0.0.1',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-domain-reliability',
  '--disable-sync',
  '--no-first-run',
  '--no-pings',
  '--no-sandbox',
];

/**
 * An installer command that prints a line, waits until the test creates `<gates>/<cluster>`,
 * then runs the reference installer (or fails, when `<gates>/<cluster>.fail` exists).
 */
async function gatedInstaller(dir: string, gates: string): Promise<string> {
  const path = join(dir, 'gated-installer.sh');
  await writeFile(
    path,
    `#!/bin/sh
cluster=$1; shift
# $2: the reference installer's playbook (cluster, addon): each run's line is its own.
echo "waiting for the gate of $cluster ($2)"
while [ ! -e "${gates}/$cluster" ]; do sleep 0.05; done
if [ -e "${gates}/$cluster.fail" ]; then echo "the addon of $cluster failed on purpose"; exit 3; fi
exec "$@"
`,
  );
  await chmod(path, 0o755);
  return path;
}

/** The page in a real browser against bpa serve following a repository of two clusters. */
describe('the status page in a browser', function () {
  this.timeout(120_000);
  let lab: Lab | undefined;
  let git: GitServer | undefined;
  let tmp = '';
  let child: ChildProcess | undefined;
  let browser: Browser | undefined;
  let url = '';
  let stderr = '';
  let siteDir = '';
  let gates = '';

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`    skipped: ${CHROMIUM} is not installed (Debian package chromium)`);
      this.skip();
    }
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 2, isolatedPackages: true }); // the installer writes /etc on its hosts
    tmp = await mkdtemp(join(tmpdir(), 'bpa-page-'));
    gates = join(tmp, 'gates');
    await mkdir(gates);
    await writeFile(join(gates, 'alpha'), '');
    await writeFile(join(gates, 'beta'), '');
    const installer = await gatedInstaller(tmp, gates);
    siteDir = await writeLabSite(
      lab.hosts,
      { cluster: 'alpha', nodes: [{ name: 'a-master', roles: ['master'], host: 0 }] },
      join(tmp, 'site'),
    );
    const beta = join(tmp, 'beta');
    await mkdir(beta);
    await updateLabSite(beta, lab.hosts, {
      cluster: 'beta',
      nodes: [{ name: 'b-master', roles: ['master'], host: 1 }],
    });
    await copyFile(join(beta, 'cluster.yaml'), join(siteDir, 'beta.yaml'));
    git = await startGitServer();
    const repo = await git.createRepo('site', { files: await readTree(siteDir, 'site') });
    await writeFile(join(tmp, 'secret'), SECRET);
    child = spawnBpa([
      'serve',
      '--repo',
      repo,
      '--path',
      'site',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '1h',
      '--webhook-secret-file',
      join(tmp, 'secret'),
      '--state',
      join(tmp, 'state'),
      '--leases',
      lab.leaseFile,
      '--ssh-key',
      lab.keyPath,
      '--installer-command',
      `${installer} {cluster} ${REFERENCE} cluster {clusterDir} {inventory}`,
      '--addon-command',
      `${installer} {cluster} ${REFERENCE} addon {clusterDir} {inventory} {plugins}`,
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    url = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      30_000,
    );
    await waitFor(
      'both clusters Ready',
      async () => {
        const s = (await (await fetch(`${url}/api/v1/status`)).json()) as {
          running: boolean;
          lastReconcile: { clusters: Array<{ phase: string }> } | null;
        };
        const phases = s.lastReconcile?.clusters.map((c) => c.phase) ?? [];
        return phases.length === 2 && phases.every((p) => p === 'Ready') ? true : undefined;
      },
      90_000,
      200,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: OFFLINE_ARGS });
  });
  after(async () => {
    await browser?.close();
    if (child) await kill(child);
    await git?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('shows both clusters, streams the installer of a running reconcile, and updates the phase without a reload', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    const offsite: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(url) && !r.url().startsWith('data:')) offsite.push(r.url());
    });

    await page.goto(url);
    const rows = page.locator('#clusters tbody tr');
    assert.deepEqual(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-cluster'))),
      ['alpha', 'beta'],
    );
    for (const name of ['alpha', 'beta'])
      assert.equal(
        await page.locator(`#clusters tr[data-cluster="${name}"] .badge`).innerText(),
        'Ready',
      );
    await page.locator('#conn', { hasText: 'connected' }).waitFor({ timeout: 10_000 });
    const shot = process.env['BPA_SCREENSHOT'] ?? join(tmp, 'status-page.png');
    await mkdir(dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
    assert.equal((await readFile(shot)).subarray(1, 4).toString(), 'PNG');

    // On a phone: nothing wider than the screen but the tables, which scroll on their own.
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(
      Number(await page.evaluate('document.documentElement.scrollWidth')) <= 390,
      'the page fits a 390 px wide screen',
    );
    await page.setViewportSize({ width: 1280, height: 900 });

    // Open a cluster: its nodes, and a live log of its installer.
    await page.click('#clusters a[href="/clusters/beta"]');
    await page.waitForURL(`${url}/clusters/beta`);
    await page.locator('#nodes tbody tr', { hasText: 'b-master' }).waitFor();
    await page.locator('#conn', { hasText: 'connected' }).waitFor({ timeout: 10_000 });
    // Marks the document: a reload would lose it.
    await page.evaluate("document.body.setAttribute('data-loaded-once', 'yes')");

    // A change to beta: a plugin, whose addon run waits at its gate and then fails.
    await rm(join(gates, 'beta'));
    await writeFile(join(gates, 'beta.fail'), '');
    await updateLabSite(join(tmp, 'beta'), lab!.hosts, {
      cluster: 'beta',
      nodes: [{ name: 'b-master', roles: ['master'], host: 1 }],
      plugins: ['multus'],
    });
    await git!.commitAs(
      'site',
      { 'site/beta.yaml': await readFile(join(tmp, 'beta', 'cluster.yaml'), 'utf8') },
      'beta: add the multus plugin',
    );
    assert.equal((await sendPush(url, SECRET)).status, 202);

    // The replayed log also holds beta's first run (cluster): this line is the addon run's.
    const line = page.locator('#log .line', { hasText: 'waiting for the gate of beta (addon)' });
    await line.waitFor({ timeout: 30_000 });
    assert.equal((await line.locator('.pfx').innerText()).trim(), '[beta]');
    await page
      .locator('#controller .badge', { hasText: 'Reconciling' })
      .waitFor({ timeout: 10_000 });

    await writeFile(join(gates, 'beta'), '');
    await page.locator('main h2 .badge', { hasText: 'Degraded' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate("document.body.getAttribute('data-loaded-once')"), 'yes');
    assert.match(
      await page.locator('#log').innerText(),
      /\[beta\] the addon of beta failed on purpose/,
    );

    // The history: a person's commit → bpa's status commit for it → the result.
    await page.goto(`${url}/history`);
    const change = page.locator('table.history tr', { hasText: 'beta: add the multus plugin' });
    await change.waitFor();
    assert.match(await change.innerText(), /beta failed/);
    assert.match(await change.locator('.badge').innerText(), /failed/);
    const initial = page.locator('table.history tr', { hasText: 'initial commit' });
    assert.match(await initial.innerText(), /alpha provision-cluster, beta provision-cluster/);
    assert.deepEqual(violations, []);
    assert.deepEqual(offsite, []);
    await page.close();
  });
});
