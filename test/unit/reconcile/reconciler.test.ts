import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalInstaller } from '../../../src/apply/installer/port.js';
import { pino } from 'pino';
import { parse } from 'yaml';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import type { SiteStatusDoc } from '../../../src/report/status.js';
import { readLogTail } from '../../../src/state/logs.js';
import { StateLock } from '../../../src/state/lock.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith, hostIp, writeSite, type SiteSpec } from '../../fakes/site.js';

/**
 * The real reconciler, planner, engine, journal, state store and report builder, driven
 * through in-memory ports (nodes, installer, publishing) and an in-memory repository: runs
 * everywhere, without root.
 */
describe('reconciler over in-memory ports', () => {
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;
  let source: FakeSiteSource;

  const v1: SiteSpec = {
    nodes: [
      { name: 'master-1', roles: ['master'], host: 0 },
      { name: 'worker-1', roles: ['worker'], host: 1 },
    ],
    masterSoftware: ['jq=1.6-2.1ubuntu3'],
    workerSoftware: ['curl'],
  };
  /** A person's change: a worker added, jq bumped. */
  const v2: SiteSpec = {
    nodes: [...v1.nodes, { name: 'worker-2', roles: ['worker'], host: 2 }],
    masterSoftware: ['jq=1.7.1-3'],
    workerSoftware: ['curl'],
  };

  function reconciler(
    extra: Partial<ConstructorParameters<typeof Reconciler>[0]> = {},
  ): Reconciler {
    return new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
      ...extra,
    });
  }

  async function stateFiles(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const e of await readdir(stateDir, { recursive: true, withFileTypes: true }).catch(
      () => [],
    )) {
      if (e.isFile())
        out[join(e.parentPath, e.name)] = await readFile(join(e.parentPath, e.name), 'utf8');
    }
    return out;
  }

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-reconciler-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    await writeSite(siteDir, v1);
    nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'], curl: ['7.88.1-10'] });
    ports = fakePorts(nodes);
    source = new FakeSiteSource(siteDir);
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('reports the nodes and versions verified after the apply, not those seen before it', async () => {
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    let report = source.clusterReport('east');
    assert.deepEqual(
      report?.status.nodes.map((n) => [n.name, n.reachable, n.packages]),
      [
        ['master-1', true, { jq: '1.6-2.1ubuntu3' }],
        ['worker-1', true, { curl: '7.88.1-10' }],
      ],
      'a new cluster shows what was installed',
    );

    await writeSite(siteDir, v2);
    const second = await reconciler().reconcile('webhook');
    assert.equal(second.result, 'applied', JSON.stringify(second.error));
    report = source.clusterReport('east');
    assert.deepEqual(
      report?.status.lastOperation?.map((o) => [o.action, o.result]),
      [
        ['add-nodes', 'done'],
        ['install-packages', 'done'],
        ['upgrade-packages', 'done'],
      ],
    );
    assert.deepEqual(
      report?.status.nodes.map((n) => [n.name, n.reachable, n.packages]),
      [
        ['master-1', true, { jq: '1.7.1-3' }],
        ['worker-1', true, { curl: '7.88.1-10' }],
        ['worker-2', true, { curl: '7.88.1-10' }],
      ],
    );
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3', 'the node really has it');
    // Only the nodes an action worked on are read again.
    assert.deepEqual(ports.facts.reads.at(-1), ['master-1', 'worker-2']);
  });

  it('a lost state directory is rebuilt with the Kubernetes version and pod network: no upgrade, no pod network change', async () => {
    await writeSite(siteDir, { ...v1, podSubnet: '10.244.64.0/18', kubernetesVersion: 'v1.27.10' });
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    const report = source.clusterReport('east');
    assert.equal(report?.status.kubernetesVersion, 'v1.27.10');
    assert.equal(report?.status.podSubnet, '10.244.64.0/18');
    // A new volume: nothing of the state directory is left.
    await rm(stateDir, { recursive: true, force: true });
    const runs = ports.installer.runs.length;
    const again = await reconciler().reconcile('startup');
    assert.equal(again.result, 'unchanged', JSON.stringify(again.error));
    assert.equal(ports.installer.runs.length, runs, 'the installer ran again');
    const after = source.clusterReport('east');
    assert.equal(after?.status.phase, 'Ready');
    assert.deepEqual(after?.status.notes ?? [], []);
  });

  it('an emptied site (a wrong --path, a commit that removed everything) is rejected, Stalled, and nothing is removed, even with pruning allowed', async () => {
    const pruning = (): Reconciler =>
      reconciler({ configFor: configWith({ stateDir, prune: true }) });
    const first = await pruning().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    const runs = ports.installer.runs.length;
    const packages = [...nodes.packagesOf(hostIp(0))];
    // Only status/ is left, as after a commit that deleted the site's files.
    await rm(siteDir, { recursive: true, force: true });
    await mkdir(join(siteDir, 'status'), { recursive: true });
    await writeFile(
      join(siteDir, 'status', 'east.yaml'),
      source.reports.get('status/east.yaml') ?? '',
    );
    const second = await pruning().reconcile('webhook');
    assert.equal(second.result, 'rejected', JSON.stringify(second.error));
    assert.equal(ports.installer.runs.length, runs, 'no installer ran (no remove-nodes)');
    assert.deepEqual([...nodes.packagesOf(hostIp(0))], packages, 'no package was removed');
    const site = source.reports.get('status/site.yaml') ?? '';
    assert.match(site, /SITE_EMPTY/);
    assert.match(site, new RegExp(`the site fake:${siteDir} holds no YAML documents`));
    const status = (
      parse(site) as {
        status: { phase: string; conditions: Array<{ type: string; status: string }> };
      }
    ).status;
    assert.equal(status.phase, 'Rejected');
    assert.equal(status.conditions.find((c) => c.type === 'Stalled')?.status, 'True');
    // The cluster keeps its last report: the revision was not applied.
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
  });

  it('one "bpa:" in a status commit subject', async () => {
    await reconciler().reconcile('startup');
    const subject = source.commits[0]?.message.split('\n')[0] ?? '';
    assert.match(subject, /^bpa: east provision-cluster\+install-packages @ [0-9a-f]{7}$/);
  });

  it('refused with STATE_LOCKED, a reconcile changes nothing: no report, no state', async () => {
    await reconciler().reconcile('startup');
    await writeSite(siteDir, v2);
    const commits = source.commits.length;
    const before = await stateFiles();
    const other = new StateLock(stateDir); // another bpa applying with this state directory
    await other.acquire();
    try {
      const summary = await reconciler().reconcile('webhook');
      assert.equal(summary.result, 'failed');
      assert.equal(summary.error?.code, 'STATE_LOCKED');
      assert.equal(summary.error?.retry, 'waiting');
      assert.ok((summary.error?.retryAfterMs ?? 0) > 0, 'serve retries after the delay it names');
    } finally {
      await other.release();
    }
    assert.equal(source.commits.length, commits, 'no report committed');
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
    const after = await stateFiles();
    delete after[join(stateDir, 'apply.lock')];
    delete before[join(stateDir, 'apply.lock')];
    assert.deepEqual(after, before, 'the state directory is as it was');
    assert.equal(ports.installer.runs.length, 1, 'nothing applied');
    // Once the lock is free, the same revision is applied (it was never attempted).
    const next = await reconciler().reconcile('retry');
    assert.equal(next.result, 'applied', JSON.stringify(next.error));
  });

  it('a failed revision is retried and reported failed, never skipped', async () => {
    ports.installer.next(
      { kind: 'fail', output: 'TASK [kubernetes] fatal: unreachable' },
      { kind: 'fail', output: 'TASK [kubernetes] fatal: unreachable' },
    );
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'failed');
    assert.equal(first.error?.code, 'APPLY_FAILED');
    assert.equal(source.clusterReport('east')?.status.phase, 'Failed');
    const commits = source.commits.length;
    // Again, as `bpa reconcile --once` or serve's backoff retry would: the installer runs again.
    const again = await reconciler().reconcile('retry');
    assert.equal(again.result, 'failed', 'not skipped');
    // The same failure again leaves the report as it was: no commit per retry.
    assert.equal(source.commits.length, commits, 'an identical failure made a new commit');
    assert.equal(ports.installer.runs.length, 2);
    assert.equal(ports.installer.runs[1]?.previous?.status, 'failed');
    assert.equal(ports.installer.runs[1]?.previous?.attempt, 1);
    const third = await reconciler().reconcile('retry');
    assert.equal(third.result, 'applied', JSON.stringify(third.error));
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
    // Applied: the same input is now skipped.
    assert.equal((await reconciler().reconcile('interval')).result, 'skipped');
    assert.equal(ports.installer.runs.length, 3);
  });

  it('stopped during the installer: nothing reported as failed, the next start resumes', async () => {
    const stop = new AbortController();
    ports.installer.next({ kind: 'hang', signal: stop.signal });
    const running = reconciler().reconcile('startup', stop.signal);
    await ports.installer.started;
    stop.abort();
    const summary = await running;
    assert.equal(summary.result, 'interrupted');
    assert.equal(source.commits.length, 0, 'no report for an interrupted run');
    const journal = JSON.parse(
      await readFile(join(stateDir, 'clusters', 'east', 'journal.json'), 'utf8'),
    ) as { steps: Array<{ step: string; status: string; data?: Record<string, unknown> }> };
    const installer = journal.steps.find((s) => s.step === 'installer');
    assert.equal(installer?.status, 'running', 'journaled as interrupted, not failed');
    assert.ok(installer?.data?.['interruptedAt']);
    assert.deepEqual(
      journal.steps.map((s) => s.step),
      ['inventory', 'ssh-access', 'installer'],
      'no step started after the stop',
    );

    // The next start (a new process) resumes the installer step; the steps before it are done.
    const resumed = await reconciler().reconcile('startup');
    assert.equal(resumed.result, 'applied', JSON.stringify(resumed.error));
    assert.equal(ports.installer.runs.length, 2);
    assert.equal(ports.installer.runs[1]?.previous?.status, 'running');
    assert.equal(ports.access.ensured.length, 1, 'ssh-access was not repeated');
    assert.equal(source.commits.length, 1);
    for (const c of source.commits) {
      assert.doesNotMatch(c.message, /failed/i);
      for (const text of c.files.values())
        assert.doesNotMatch(text, /result: failed|phase: Failed/);
    }
  });

  it('no installer output reaches git or the status API: step, code, exit and log id; the page has the redacted tail', async () => {
    const token = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
    const password = 'Hunter2';
    const keyDir = await mkdtemp(join(tmp, 'key-'));
    execFileSync('ssh-keygen', ['-q', '-N', '', '-t', 'ed25519', '-f', join(keyDir, 'id')]);
    const key = await readFile(join(keyDir, 'id'), 'utf8');
    const keyLines = key.split('\n').filter((l) => l && !l.startsWith('-----'));
    const script = join(tmp, 'installer.sh');
    await writeFile(
      script,
      [
        '#!/bin/sh',
        'echo "TASK [bootstrap] contacting the API"',
        `echo "curl -H 'Authorization: Bearer ${token}' https://10.0.0.1:6443"`,
        `echo "api_token=${token}"`,
        `cat ${join(keyDir, 'id')}`,
        `echo "+ docker login -u admin -p ${password} registry.example:5000"`,
        `echo "+ sshpass -p ${password} ssh root@10.0.0.1"`,
        `echo "+ mysql -u root -p${password} keystone"`,
        `echo "+ helm repo add x --password ${password}"`,
        `echo "+ tool --password=${password}"`,
        'echo "in $PWD"',
        'echo "fatal: could not bootstrap the control plane" >&2',
        'exit 3',
      ].join('\n'),
      { mode: 0o755 },
    );
    // The real local installer: a process, its output in a log file under the state directory.
    const lines: string[] = [];
    const installer = new LocalInstaller({
      commands: {
        provision: script,
        scale: script,
        addon: script,
        remove: script,
        reset: script,
        upgrade: script,
      },
      timeoutMs: 30_000,
      privateKey: join(keyDir, 'id'),
      user: 'root',
      log: silentLogger(),
      onLine: (line) => lines.push(line),
    });
    const summary = await reconciler({ ports: { ...ports, installer } }).reconcile('startup');
    assert.equal(summary.result, 'failed');
    // Git and the status API (open to whoever reaches it): no installer output at all.
    const view = summary.view;
    const committed = [
      ...source.commits.flatMap((c) => [c.message, ...c.files.values()]),
      JSON.stringify({ ...summary, view: undefined }),
    ].join('\n');
    for (const text of [
      token,
      password,
      ...keyLines,
      'TASK [bootstrap]',
      'fatal: could not bootstrap',
      'docker login',
      stateDir,
    ])
      assert.ok(!committed.includes(text), `in git or the status API: ${text}`);
    // The page (behind its access control) and bpa's log: the output, redacted.
    const page = [...lines, JSON.stringify(view)].join('\n');
    for (const secret of [token, password, ...keyLines])
      assert.ok(!page.includes(secret), `leaked: ${secret}`);
    assert.doesNotMatch(page, /PRIVATE KEY-----/);
    assert.ok(lines.some((l) => l.includes('[east] TASK [bootstrap] contacting the API')));
    const failed = view?.plan?.clusters[0]?.actions.find((a) => a.state === 'failed');
    assert.match(failed?.error?.message ?? '', /fatal: could not bootstrap the control plane/);
    // The report says which step failed, how, and where the log is.
    const report = source.clusterReport('east');
    const op = report?.status.lastOperation?.[0] as Record<string, unknown> | undefined;
    assert.deepEqual(Object.keys(op ?? {}).sort(), [
      'action',
      'code',
      'endedAt',
      'exitCode',
      'log',
      'nodes',
      'result',
      'startedAt',
      'step',
    ]);
    assert.equal(op?.['result'], 'failed');
    assert.equal(op?.['step'], 'installer');
    assert.equal(op?.['code'], 'INSTALLER_FAILED');
    assert.equal(op?.['exitCode'], 3);
    assert.match(String(op?.['log']), /^east\/provision-[0-9TZ-]+\.log$/);
    const ready = report?.status.conditions.find((c) => c.type === 'Ready');
    assert.equal(
      ready?.message,
      `provision-cluster failed at step installer: INSTALLER_FAILED, exit 3; log ${String(op?.['log'])}`,
    );
    // The id resolves to the full log, kept in the state directory.
    const full = await readLogTail(stateDir, String(op?.['log']));
    assert.ok(full?.text.includes(token) && keyLines.every((l) => full.text.includes(l)));
    assert.ok(full?.text.includes('fatal: could not bootstrap the control plane'));
  });

  it('a reconcile that fails before its plan reports the site Failed and keeps the clusters', async () => {
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    // The inventory can no longer be read: no plan can be made.
    await writeSite(siteDir, v2);
    const missing = join(tmp, 'missing-kubeconfig');
    const failing = reconciler({ configFor: configWith({ stateDir, kubeconfig: missing }) });
    const summary = await failing.reconcile('watch');
    assert.equal(summary.result, 'failed');
    const site = parse(source.reports.get('status/site.yaml') ?? '') as SiteStatusDoc;
    assert.equal(site.status.phase, 'Failed');
    const ready = site.status.conditions.find((c) => c.type === 'Ready');
    const stalled = site.status.conditions.find((c) => c.type === 'Stalled');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, summary.error?.code);
    assert.equal(stalled?.status, 'True');
    assert.match(ready?.message ?? '', /does not exist/);
    assert.equal(site.status.errors?.[0]?.code, summary.error?.code);
    assert.deepEqual(site.status.clusters, [{ name: 'east', phase: 'Ready' }]);
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready', 'the cluster report is kept');
    // The status API and the page keep the cluster too.
    const status = summary.status as { clusters: Array<{ metadata: { name: string } }> };
    assert.deepEqual(
      status.clusters.map((c) => c.metadata.name),
      ['east'],
    );
    assert.deepEqual(
      summary.clusters.map((c) => [c.name, c.phase]),
      [['east', 'Ready']],
    );
  });

  it('the status API never shows the state directory: a failure naming a file in it says <stateDir>', async () => {
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    await writeFile(join(stateDir, 'clusters', 'east', 'applied.json'), 'not json');
    await writeSite(siteDir, v2);
    const summary = await reconciler().reconcile('watch');
    assert.equal(summary.result, 'failed');
    assert.equal(summary.error?.code, 'STATE_CORRUPT');
    const message = summary.error?.message ?? '';
    assert.ok(!message.includes(stateDir), message);
    assert.match(
      message,
      /^<stateDir>\/clusters\/east\/applied\.json: not a valid applied-state file/,
    );
    assert.ok(!JSON.stringify(summary).includes(stateDir), 'nowhere in the summary');
  });

  it('holds of its reports the status of the site and its clusters, not the inventory it wrote (every host)', async () => {
    const r = reconciler();
    const summary = await r.reconcile('startup');
    assert.equal(summary.result, 'applied', JSON.stringify(summary.error));
    assert.ok(source.reports.has('status/inventory.yaml'), 'the inventory was written');
    // What the reconciler keeps between reconciles (for its summary and the objects' status).
    const held = (r as unknown as { lastStatus: Map<string, string> }).lastStatus;
    assert.deepEqual([...held.keys()].sort(), ['status/east.yaml', 'status/site.yaml']);
    assert.deepEqual(
      summary.clusters.map((c) => [c.name, c.phase]),
      [['east', 'Ready']],
    );
  });

  it('keeps the site between reconciles: a change is read and parsed alone, with the same result', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino(
      { level: 'debug' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const warm = reconciler({ log });
    const first = await warm.reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    await writeSite(siteDir, v2);
    const second = await warm.reconcile('webhook');
    const loads = lines.filter((l) => l['msg'] === 'site loaded');
    assert.equal(loads.length, 2);
    const [one, two] = loads.map((l) => ({
      reused: Number(l['reused']),
      parsed: Number(l['parsed']),
    })) as [{ reused: number; parsed: number }, { reused: number; parsed: number }];
    assert.equal(one.reused, 0);
    assert.ok(two.reused > 0 && two.parsed < one.parsed, JSON.stringify(two));
    assert.equal(two.reused + two.parsed, one.parsed);
    // The same as a reconciler that starts from nothing on the same input.
    assert.equal(second.result, 'applied', JSON.stringify(second.error));
    const report = source.clusterReport('east');
    assert.deepEqual(
      report?.status.nodes.map((n) => n.name),
      ['master-1', 'worker-1', 'worker-2'],
    );
  });
});
