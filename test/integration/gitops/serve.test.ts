import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { labArgs, labReady, spawnBpa, waitFor } from '../apply/harness.js';
import { updateLabSite, writeLabSite } from '../apply/lab-site.js';
import { readTree } from '../../fakes/tree.js';
import { pushHook, sendPush } from '../../fakes/webhook.js';

const SECRET = 'webhook-secret-for-tests';

/** Reconciles run on webhook triggers so far (interval polls are counted apart). */
async function reconciles(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^bpa_reconcile_total\{([^}]*)\} (\d+)/gm))
    if (/trigger="webhook"/.test(m[1] ?? '')) total += Number(m[2]);
  return total;
}

/** Until the scheduler has nothing running and nothing queued. */
async function settledAt(url: string): Promise<void> {
  await waitFor(
    'the scheduler to settle',
    async () => {
      const s = (await (await fetch(`${url}/api/v1/status`)).json()) as {
        running: boolean;
        queued: boolean;
      };
      return !s.running && !s.queued ? true : undefined;
    },
    60_000,
    50,
  );
}

/** bpa serve as a process: the webhook, coalescing, backoff and recovery, graceful stop. */
describe('bpa serve', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let git: GitServer;
  let tmp: string;
  let child: ChildProcess | undefined;
  let url = '';
  let siteDir = '';
  let stderr = '';

  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 3, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-serve-'));
    git = await startGitServer();
    siteDir = await writeLabSite(
      lab.hosts,
      { cluster: 'lab', nodes: [{ name: 'master-1', roles: ['master'], host: 0 }] },
      join(tmp, 'site'),
    );
    const repo = await git.createRepo('site', { files: await readTree(siteDir, 'site') });
    await writeFile(join(tmp, 'secret'), `${SECRET}\n`, { mode: 0o600 });
    child = spawnBpa([
      'serve',
      '--repo',
      repo,
      '--path',
      'site',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '10s',
      '--webhook-secret-file',
      join(tmp, 'secret'),
      ...labArgs(lab, join(tmp, 'state')).filter((a) => a !== '--log-level' && a !== 'info'),
    ]);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    url = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      30_000,
    );
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
    }
    await git?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const settled = (): Promise<void> => settledAt(url);

  it('becomes ready after its first reconcile and commits status', async () => {
    await waitFor(
      'readiness',
      async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined),
      120_000,
      250,
    );
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    const subjects = (await git.log('site', 'main')).map((e) => e.subject);
    assert.match(subjects[0] ?? '', /^bpa: lab provision-cluster @/);
    const status = (await (await fetch(`${url}/api/v1/status`)).json()) as {
      lastReconcile: { result: string; clusters: Array<{ name: string; phase: string }> };
    };
    assert.deepEqual(status.lastReconcile.clusters, [{ name: 'lab', phase: 'Ready', ready: true }]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    for (const name of [
      'bpa_reconcile_duration_seconds',
      'bpa_reconcile_total',
      'bpa_cluster_ready',
      'bpa_source_revision_info',
    ])
      assert.match(metrics, new RegExp(`^${name}`, 'm'));
    assert.match(metrics, /^bpa_cluster_ready\{cluster="lab"\} 1$/m);
  });

  it('a webhook with a bad signature: 401 and no reconcile', async () => {
    const before = await reconciles(url);
    const r = await sendPush(url, SECRET, { tamper: true });
    assert.equal(r.status, 401);
    // A signed call next: had the bad one triggered a reconcile, this one would find it
    // running or done, and two webhook reconciles would be counted. No fixed wait.
    const good = await sendPush(url, SECRET);
    assert.equal(good.status, 202);
    const { outcome } = (await good.json()) as { outcome: string };
    await settled();
    const delta = (await reconciles(url)) - before;
    // Coalesced: an interval poll was already queued, and this call rode on it.
    assert.equal(delta, outcome === 'coalesced' ? 0 : 1, `outcome ${outcome}`);
  });

  it('a pushed change is applied on a signed webhook, fast', async () => {
    await updateLabSite(siteDir, lab!.hosts, {
      cluster: 'lab',
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
      ],
    });
    await git.commitAs(
      'site',
      { 'site/cluster.yaml': await readFile(join(siteDir, 'cluster.yaml'), 'utf8') },
      'add a worker',
    );
    const sent = Date.now();
    const r = await sendPush(url, SECRET);
    assert.equal(r.status, 202);
    const mark = stderr.length;
    await waitFor(
      'the apply to start',
      async () => (/add-nodes/.test(stderr.slice(mark)) ? true : undefined),
      30_000,
      20,
    );
    const latency = Date.now() - sent;
    assert.ok(latency < 5_000, `webhook to apply start took ${latency} ms`);
    await waitFor(
      'the status commit',
      async () =>
        (await git.log('site', 'main'))[0]?.subject.includes('add-nodes') ? true : undefined,
      120_000,
      250,
    );
  });

  it('100 webhook calls in a burst cause at most 2 reconciles', async () => {
    await settled();
    const before = await reconciles(url);
    // The reconcile the burst starts is held at its fetch until every call has landed, so
    // the test shows the coalescing whatever the machine's load: one run, one queued.
    let held!: () => void;
    const release = new Promise<void>((r) => (held = r));
    let reached!: () => void;
    const atFetch = new Promise<void>((r) => (reached = r));
    git.intercept({ path: '/info/refs' }, async () => {
      reached();
      await release;
    });
    try {
      const hook = pushHook(SECRET);
      const post = (): Promise<string> =>
        fetch(`${url}/hooks/git`, { method: 'POST', ...hook }).then(async (x) => {
          assert.equal(x.status, 202);
          return ((await x.json()) as { outcome: string }).outcome;
        });
      const first = await post();
      await atFetch;
      const rest = await Promise.all(Array.from({ length: 99 }, post));
      assert.equal(first, 'started');
      assert.equal(rest.filter((o) => o === 'queued').length, 1, rest.join(' '));
      assert.ok(
        rest.every((o) => o === 'queued' || o === 'coalesced'),
        rest.join(' '),
      );
      const s = (await (await fetch(`${url}/api/v1/status`)).json()) as {
        running: boolean;
        queued: boolean;
      };
      assert.deepEqual([s.running, s.queued], [true, true]);
    } finally {
      held();
      git.clearIntercepts();
    }
    await settled();
    const delta = (await reconciles(url)) - before;
    assert.equal(delta, 2, `${delta} reconciles`);
  });

  it('git server down: failures back off; once it is back, the loop recovers', async () => {
    await git.down();
    try {
      // A push notification while the server is down: the reconcile it starts fails.
      assert.equal((await sendPush(url, SECRET)).status, 202);
      await waitFor(
        'a failed reconcile',
        async () => {
          const s = (await (await fetch(`${url}/api/v1/status`)).json()) as {
            consecutiveFailures: number;
            lastReconcile: { error: { code: string } | null };
          };
          return s.consecutiveFailures >= 1 ? s : undefined;
        },
        30_000,
        200,
      );
      const s = (await (await fetch(`${url}/api/v1/status`)).json()) as {
        lastReconcile: { error: { code: string } | null };
        nextRunAt: string;
      };
      assert.equal(s.lastReconcile.error?.code, 'GIT_UNAVAILABLE');
    } finally {
      await git.up();
    }
    await waitFor(
      'recovery',
      async () => {
        const s = (await (await fetch(`${url}/api/v1/status`)).json()) as {
          consecutiveFailures: number;
        };
        return s.consecutiveFailures === 0 ? true : undefined;
      },
      30_000,
      250,
    );
  });

  it('stops gracefully on SIGTERM', async () => {
    const exited = new Promise<number | null>((r) => child?.once('exit', r));
    child?.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(stderr, /bpa serve stopped/);
  });
});
