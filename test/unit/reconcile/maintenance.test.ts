import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { writeSuspensions } from '../../../src/state/suspensions.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith, hostIp, writeSite, type SiteSpec } from '../../fakes/site.js';

/**
 * Maintenance windows and suspend through the real reconciler, planner, engine and reports,
 * over in-memory ports, with an injected clock.
 */
describe('maintenance windows and suspend (reconcile, injected clock)', () => {
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;
  let source: FakeSiteSource;
  let clock: number;

  const TUESDAY = Date.parse('2026-11-24T10:00:00Z');
  const SATURDAY_OPEN = Date.parse('2026-11-28T01:00:00Z');
  const saturdayOnly = [
    '  maintenanceWindows:',
    "    - { days: [sat], start: '01:00', end: '05:00', timezone: UTC }",
  ];
  const v1: SiteSpec = {
    nodes: [
      { name: 'master-1', roles: ['master'], host: 0 },
      { name: 'worker-1', roles: ['worker'], host: 1 },
    ],
    masterSoftware: ['jq=1.6-2.1ubuntu3'],
    workerSoftware: ['curl'],
    siteSpec: saturdayOnly,
  };
  const v2: SiteSpec = { ...v1, masterSoftware: ['jq=1.7.1-3'] };

  const reconciler = (flags: { ignoreWindows?: boolean } = {}): Reconciler =>
    new Reconciler({
      source,
      configFor: configWith({ stateDir, ...flags }),
      env: {},
      log: silentLogger(),
      now: () => clock,
      resyncIntervalMs: 30 * 86_400_000,
      ports,
    });

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-windows-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'], curl: ['7.88.1-10'] });
    ports = fakePorts(nodes);
    source = new FakeSiteSource(siteDir);
    clock = TUESDAY;
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('a Saturday-only window: a new cluster is provisioned on Tuesday, a package upgrade waits for Saturday', async () => {
    await writeSite(siteDir, v1);
    const first = await reconciler().reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');

    await writeSite(siteDir, v2);
    const calls = ports.packages.calls.length;
    const r = reconciler();
    const waiting = await r.reconcile('webhook');
    assert.equal(waiting.result, 'unchanged', JSON.stringify(waiting.error));
    assert.equal(ports.packages.calls.length, calls, 'no package change started on Tuesday');
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.6-2.1ubuntu3');
    assert.equal(waiting.wakeAt, SATURDAY_OPEN, 'serve is told when to come back');
    const report = source.clusterReport('east');
    assert.equal(report?.status.phase, 'Waiting');
    const ready = report?.status.conditions.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'OutsideMaintenanceWindow');
    assert.match(
      ready?.message ?? '',
      /upgrade-packages deferred to the next maintenance window, which opens at 2026-11-28T01:00:00Z/,
    );
    assert.deepEqual(report?.status.gate, {
      state: 'deferred',
      reason: 'OutsideMaintenanceWindow',
      opensAt: '2026-11-28T01:00:00Z',
    });
    assert.equal(waiting.clusters.find((c) => c.name === 'east')?.phase, 'Waiting');
    assert.equal(
      waiting.clusters.find((c) => c.name === 'east')?.windowOpen,
      false,
      'bpa_window_open',
    );

    // The same input before the window: nothing new, no new commit.
    const commits = source.commits.length;
    clock = SATURDAY_OPEN - 60_000;
    assert.equal((await r.reconcile('interval')).result, 'skipped');
    assert.equal(source.commits.length, commits);

    // At the opening (the boundary minute), the same input runs again and applies.
    clock = SATURDAY_OPEN;
    const applied = await r.reconcile('window');
    assert.equal(applied.result, 'applied', JSON.stringify(applied.error));
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
    assert.equal(source.clusterReport('east')?.status.phase, 'Ready');
    assert.equal(source.clusterReport('east')?.status.gate, undefined);
    assert.equal(applied.clusters.find((c) => c.name === 'east')?.windowOpen, true);
  });

  it('a window that closes during the apply: the action running finishes, nothing new starts', async () => {
    await writeSite(siteDir, v1);
    clock = SATURDAY_OPEN;
    await reconciler().reconcile('startup');
    // A worker added (add-nodes, then install-packages) and jq upgraded, inside the window;
    // the add-nodes installer takes until after the window has closed.
    await writeSite(siteDir, {
      ...v2,
      nodes: [...v2.nodes, { name: 'worker-2', roles: ['worker'], host: 2 }],
    });
    const run = ports.installer.run.bind(ports.installer);
    ports.installer.run = async (...args) => {
      await run(...args);
      clock = Date.parse('2026-11-28T05:30:00Z');
    };
    const calls = ports.packages.calls.length;
    const r = await reconciler().reconcile('window');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    const report = source.clusterReport('east');
    assert.deepEqual(
      report?.status.lastOperation?.map((o) => [o.action, o.result]),
      [['add-nodes', 'done']],
    );
    assert.equal(ports.packages.calls.length, calls, 'no package action started after the close');
    assert.equal(report?.status.phase, 'Waiting');
    assert.equal(report?.status.gate?.opensAt, '2026-12-05T01:00:00Z');
    assert.equal(r.wakeAt, Date.parse('2026-12-05T01:00:00Z'));
  });

  it('an action bpa was stopped in the middle of is finished after the window closed; the rest waits', async () => {
    await writeSite(siteDir, v1);
    clock = SATURDAY_OPEN;
    await reconciler().reconcile('startup');
    await writeSite(siteDir, {
      ...v2,
      nodes: [...v2.nodes, { name: 'worker-2', roles: ['worker'], host: 2 }],
    });
    const stop = new AbortController();
    ports.installer.next({ kind: 'hang', signal: stop.signal });
    const running = reconciler().reconcile('window', stop.signal);
    await ports.installer.started;
    stop.abort();
    assert.equal((await running).result, 'interrupted');

    clock = Date.parse('2026-11-28T06:00:00Z'); // closed
    const calls = ports.packages.calls.length;
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.equal(ports.installer.runs.at(-1)?.path, 'scale', 'the add-nodes installer resumed');
    assert.ok(ports.installer.runs.at(-1)?.previous, 'handed its journal record');
    assert.equal(ports.packages.calls.length, calls, 'the packages wait');
    assert.equal(source.clusterReport('east')?.status.phase, 'Waiting');
  });

  it('--ignore-windows applies outside the windows, and the report says so', async () => {
    await writeSite(siteDir, v1);
    await reconciler().reconcile('startup');
    await writeSite(siteDir, v2);
    const r = await reconciler({ ignoreWindows: true }).reconcile('webhook');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
    const report = source.clusterReport('east');
    assert.equal(report?.status.phase, 'Ready');
    assert.deepEqual(report?.status.gate, {
      state: 'ignored',
      reason: 'OutsideMaintenanceWindow',
      opensAt: '2026-11-28T01:00:00Z',
    });
  });

  it('a suspension through the API during an apply: the action running finishes, nothing new starts', async () => {
    await writeSite(siteDir, { ...v1, siteSpec: undefined });
    await reconciler().reconcile('startup');
    await writeSite(siteDir, {
      ...v2,
      siteSpec: undefined,
      nodes: [...v2.nodes, { name: 'worker-2', roles: ['worker'], host: 2 }],
    });
    const run = ports.installer.run.bind(ports.installer);
    ports.installer.run = async (...args) => {
      await run(...args);
      await writeSuspensions(stateDir, { east: { since: '2026-11-24T10:01:00Z' } });
    };
    const calls = ports.packages.calls.length;
    await reconciler().reconcile('webhook');
    const report = source.clusterReport('east');
    assert.deepEqual(
      report?.status.lastOperation?.map((o) => [o.action, o.result]),
      [['add-nodes', 'done']],
    );
    assert.equal(ports.packages.calls.length, calls);
    assert.equal(report?.status.phase, 'Suspended');
  });

  it('windows on the Cluster replace the Site ones; an empty list means any time', async () => {
    await writeSite(siteDir, v1);
    await reconciler().reconcile('startup');
    await writeSite(siteDir, { ...v2, clusterSpec: ['  maintenanceWindows: []'] });
    const r = await reconciler().reconcile('webhook');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
  });

  it('maintenanceGate: all also holds the provisioning of a new cluster', async () => {
    await writeSite(siteDir, { ...v1, siteSpec: [...saturdayOnly, '  maintenanceGate: all'] });
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'unchanged', JSON.stringify(r.error));
    assert.equal(ports.installer.runs.length, 0, 'no installer started');
    assert.equal(source.clusterReport('east')?.status.phase, 'Waiting');
  });

  it('an invalid time zone is rejected with its file, line and field', async () => {
    await writeSite(siteDir, {
      ...v1,
      siteSpec: [
        '  maintenanceWindows:',
        "    - { days: [sat], start: '01:00', end: '05:00', timezone: Mars/Olympus }",
      ],
    });
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'rejected');
    const site = source.reports.get('status/site.yaml') ?? '';
    assert.match(site, /code: INVALID_TIMEZONE/);
    assert.match(site, /Mars\/Olympus/);
    assert.match(site, /file: site\.yaml/);
    assert.match(site, /line: 7/);
    assert.equal(ports.installer.runs.length, 0);
  });

  it('suspend: true on the Cluster: planned and reported Suspended, nothing applied; resuming applies', async () => {
    await writeSite(siteDir, { ...v1, siteSpec: undefined });
    await reconciler().reconcile('startup');
    await writeSite(siteDir, { ...v2, siteSpec: undefined, clusterSpec: ['  suspend: true'] });
    const calls = ports.packages.calls.length;
    const r = await reconciler().reconcile('webhook');
    assert.equal(r.result, 'unchanged', JSON.stringify(r.error));
    assert.equal(ports.packages.calls.length, calls);
    const report = source.clusterReport('east');
    assert.equal(report?.status.phase, 'Suspended');
    assert.deepEqual(report?.status.gate, { state: 'suspended', reason: 'Suspended', by: 'site' });
    assert.match(source.reports.get('status/site.yaml') ?? '', /phase: Suspended/);

    await writeSite(siteDir, { ...v2, siteSpec: undefined });
    const resumed = await reconciler().reconcile('webhook');
    assert.equal(resumed.result, 'applied', JSON.stringify(resumed.error));
    assert.equal(nodes.packagesOf(hostIp(0)).get('jq'), '1.7.1-3');
  });

  it('suspend: true on the Site holds every cluster, even a new one', async () => {
    await writeSite(siteDir, { ...v1, siteSpec: ['  suspend: true'] });
    const r = await reconciler().reconcile('startup');
    assert.equal(r.result, 'unchanged', JSON.stringify(r.error));
    assert.equal(ports.installer.runs.length, 0);
    assert.equal(source.clusterReport('east')?.status.phase, 'Suspended');
  });
});
