import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Plan } from '../../../src/plan/index.js';
import { createRun } from '../../../src/reconcile/context.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import type { InventoryStatusDoc } from '../../../src/report/inventory.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { writeResourceSite } from '../../fakes/resource-site.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith } from '../../fakes/site.js';
import { runCli } from '../validate/run-cli.js';

/**
 * status/inventory.yaml written by a real reconcile (over in-memory ports), then plans made
 * offline against status/ in a pull request's checkout, compared with the controller's own.
 */
describe('plan --from-status: offline plans against what the controller reported', () => {
  let tmp: string;
  let controllerSite: string;
  let prSite: string;
  let stateDir: string;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;
  let source: FakeSiteSource;
  const NOW = Date.parse('2026-03-01T12:00:00Z');

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-from-status-'));
    controllerSite = join(tmp, 'controller');
    prSite = join(tmp, 'pr');
    stateDir = join(tmp, 'state');
    await writeResourceSite(controllerSite, { workers: 0, jq: '1.6-2.1ubuntu3' });
    nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'], curl: ['7.88.1-10'] });
    ports = fakePorts(nodes);
    source = new FakeSiteSource(controllerSite);
    const first = await new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports,
      now: () => NOW - 3 * 3600_000,
    }).reconcile('startup');
    assert.equal(first.result, 'applied', JSON.stringify(first.error));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** The pull request's checkout: its site, and the status/ the controller committed. */
  async function checkout(spec: Parameters<typeof writeResourceSite>[1]): Promise<void> {
    await writeResourceSite(prSite, spec);
    await mkdir(join(prSite, 'status'), { recursive: true });
    for (const [path, text] of source.reports) await writeFile(join(prSite, path), text);
  }

  /** What the controller would plan for the same site, observing for itself. */
  async function controllerPlan(spec: Parameters<typeof writeResourceSite>[1]): Promise<Plan> {
    await writeResourceSite(controllerSite, spec);
    const run = createRun({
      site: { kind: 'path', path: controllerSite },
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      ports,
    });
    await runSteps(run, 'plan');
    assert.equal(run.fromStatus, undefined);
    return run.plan as Plan;
  }

  async function offlinePlan(flags: Parameters<typeof configWith>[0] = {}): Promise<Plan> {
    const run = createRun({
      site: { kind: 'path', path: prSite },
      // No state directory of its own: a pull request job has none.
      configFor: configWith({ stateDir: join(tmp, 'empty-state'), ...flags }),
      env: {},
      log: silentLogger(),
      now: () => NOW,
    });
    await runSteps(run, 'plan');
    assert.ok(run.fromStatus, 'planned from status/');
    return run.plan as Plan;
  }

  it('a reconcile writes status/inventory.yaml, and a second one with nothing new commits nothing', async () => {
    const text = source.reports.get('status/inventory.yaml');
    assert.ok(text, 'written');
    const doc = parse(text) as InventoryStatusDoc;
    assert.equal(doc.status.hosts.length, 6);
    assert.deepEqual(doc.status.controller.ipOrder, ['lease', 'inventory']);
    assert.equal(doc.status.controller.flavour, 'kud');
    assert.equal(doc.status.hosts[2]?.eligible, false);
    assert.match(doc.status.hosts[2]?.reason ?? '', /powered off/);
    assert.deepEqual(doc.status.hosts[0]?.address, {
      ip: '198.18.9.11',
      from: 'inventory',
      mac: '52:54:00:bb:00:01',
    });
    assert.doesNotMatch(text, /ipmi|bmc|10\.99\./);
    const commits = source.commits.length;
    for (let i = 0; i < 2; i++) {
      const again = await new Reconciler({
        source,
        configFor: configWith({ stateDir }),
        env: {},
        log: silentLogger(),
        resyncIntervalMs: 0,
        ports,
        now: () => NOW + i,
      }).reconcile('interval');
      assert.equal(again.error, undefined);
    }
    // The first full resync turns the cluster's reason from Applied to UpToDate; nothing after.
    assert.ok(source.commits.length <= commits + 1);
    assert.ok(
      source.commits.slice(commits).every((c) => !c.files.has('status/inventory.yaml')),
      'the same observation is not committed again',
    );
    assert.equal(source.reports.get('status/inventory.yaml'), text);
  });

  it('an unchanged site plans no changes offline, with the hash the controller computes', async () => {
    await checkout({ workers: 0, jq: '1.6-2.1ubuntu3' });
    const offline = await offlinePlan();
    const live = await controllerPlan({ workers: 0, jq: '1.6-2.1ubuntu3' });
    assert.deepEqual(
      offline.clusters.map((c) => c.actions.length),
      [0],
    );
    assert.equal(offline.hash, live.hash);
  });

  it('shows only what the pull request changes, on the hosts the controller would pick', async () => {
    const pr = { workers: 2, jq: '1.7.1-3' };
    await checkout(pr);
    const offline = await offlinePlan();
    const live = await controllerPlan(pr);
    const placements = (p: Plan): string[][] =>
      p.clusters.flatMap((c) => c.nodes.map((n) => [n.name, n.host, n.ip, n.change]));
    assert.deepEqual(placements(offline), placements(live));
    assert.deepEqual(
      offline.clusters[0]?.actions.map((a) => [a.kind, a.nodes]),
      [
        ['add-nodes', ['worker-2', 'worker-3']],
        ['install-packages', ['worker-2', 'worker-3']],
        ['upgrade-packages', ['master-1']],
      ],
    );
    // Sticky: master-1 and worker-1 stay where they were applied; the new workers take free hosts.
    assert.deepEqual(
      placements(offline)
        .filter((n) => n[3] === 'add')
        .map((n) => n[0]),
      ['worker-2', 'worker-3'],
    );
    assert.equal(offline.hash, live.hash, 'the same plan, hence the same hash');
  });

  it('the CLI says first how old the observation is; BPA_FROM_STATUS=false plans live', async () => {
    await checkout({ workers: 1, jq: '1.6-2.1ubuntu3' });
    const { main } = await import('../../../src/cli/main.js');
    let out = '';
    const io = { out: (s: string) => void (out += s), err: () => undefined, exit: () => undefined };
    const code = await main(['plan', prSite, '--state', join(tmp, 'none')], io, {}, () => NOW);
    assert.equal(code, 2, out);
    assert.match(
      out.split('\n')[0] ?? '',
      /^Planned offline against status\/: the inventory and applied state bpa serve observed 2026-03-01T09:00:00Z \(3 hours ago\)\.$/,
    );
    assert.match(out, /\+ worker-2 /);
    assert.doesNotMatch(out, /\+ master-1 /, 'the applied nodes are not new');
    out = '';
    await main(
      ['plan', prSite, '--state', join(tmp, 'none')],
      io,
      { BPA_FROM_STATUS: 'false' },
      () => NOW,
    );
    assert.doesNotMatch(out, /Planned offline/);
    assert.match(out, /\+ master-1 /, 'live, with an empty state: everything is new');
  });

  it('-o markdown: the observation, the changed nodes and packages, the hash and the trailer', async () => {
    await checkout({ workers: 1, jq: '1.7.1-3' });
    const r = await runCli(['plan', prSite, '-o', 'markdown', '--state', join(tmp, 'none')]);
    assert.equal(r.code, 2, r.stderr);
    const offline = await offlinePlan();
    assert.match(r.stdout, /<sub>Planned offline against status\/: .* observed /);
    assert.match(
      r.stdout,
      /^\| `\+` \| worker-2 \| metal3\/node-\d \| 198\.18\.9\.\d+ \| worker \| /m,
    );
    assert.match(
      r.stdout,
      /^\| master-1 \| jq \| 1\.6-2\.1ubuntu3 \| 1\.7\.1-3 \| upgrade-packages \|$/m,
    );
    assert.ok(r.stdout.includes(`Bpa-Approved-Plan: ${offline.hash}\n`), r.stdout);
  });

  it('--from-status without status/inventory.yaml is a clear error', async () => {
    await writeResourceSite(prSite, { workers: 0, jq: '1.6-2.1ubuntu3' });
    const r = await runCli(['plan', prSite, '--from-status', '--state', join(tmp, 'none')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /STATUS_INVENTORY_MISSING/);
    assert.match(r.stderr, /status\/inventory\.yaml is missing/);
  });
});
