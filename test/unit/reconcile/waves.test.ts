import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith, hostIp, writeSite } from '../../fakes/site.js';

/** Waves across two clusters through the real reconciler, engine and reports; injected clock. */
describe('waves across clusters (reconcile, injected clock)', () => {
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;
  let source: FakeSiteSource;
  let clock: number;
  const T0 = Date.parse('2026-11-24T10:00:00Z');
  const MIN = 60_000;

  const write = async (jq: string, curl: string): Promise<void> => {
    await writeSite(siteDir, {
      cluster: 'canary',
      nodes: [{ name: 'master-1', roles: ['master'], host: 0 }],
      masterSoftware: [`jq=${jq}`],
      siteSpec: ['  rollout:', '    waves: [[canary], [main]]', '    soak: 30m'],
    });
    await writeSite(join(siteDir, 'main'), {
      cluster: 'main',
      nodes: [{ name: 'master-1', roles: ['master'], host: 1 }],
      masterSoftware: [`jq=${jq}`, `curl=${curl}`],
      extraCluster: true,
    });
  };
  const reconciler = (): Reconciler =>
    new Reconciler({
      source,
      configFor: configWith({ stateDir }),
      env: {},
      log: silentLogger(),
      now: () => clock,
      resyncIntervalMs: 24 * 3_600_000,
      ports,
    });
  const phase = (c: string): string | undefined => source.clusterReport(c)?.status.phase;

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-waves-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    nodes = new FakeNodes({ jq: ['1.6', '1.7'], curl: ['8.5', '8.6'] });
    ports = fakePorts(nodes);
    source = new FakeSiteSource(siteDir);
    clock = T0;
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('the second wave starts only after the first has stayed Ready for the soak; a failed first wave stops it', async () => {
    await write('1.6', '8.5');
    const first = await reconciler().reconcile('startup');
    assert.equal(phase('canary'), 'Ready', JSON.stringify(first.error));
    assert.equal(phase('main'), 'Waiting');
    assert.equal(ports.installer.runs.length, 1, 'only the canary was provisioned');
    const soaked = T0 + 30 * MIN;
    assert.equal(first.wakeAt, soaked, 'serve comes back when the soak can have ended');

    clock = soaked - MIN;
    await reconciler().reconcile('interval');
    assert.equal(phase('main'), 'Waiting', 'not yet soaked');
    clock = soaked;
    await reconciler().reconcile('window');
    assert.equal(phase('main'), 'Ready');
    assert.equal(ports.installer.runs.length, 2);

    // A change to both: the canary first; its apply fails (its node is down): main waits.
    clock = T0 + 2 * 3_600_000;
    await write('1.7', '8.6');
    nodes.down.add(hostIp(0));
    const failed = await reconciler().reconcile('webhook');
    assert.equal(failed.result, 'failed');
    assert.equal(phase('main'), 'Waiting');
    assert.equal(nodes.packagesOf(hostIp(1)).get('jq'), '1.6', 'main untouched');
    clock += 3_600_000;
    await reconciler().reconcile('retry');
    assert.equal(phase('main'), 'Waiting', 'a failed wave stops the rest, however long');
    const report = source.clusterReport('main');
    assert.match(
      report?.status.conditions.find((c) => c.type === 'Ready')?.message ?? '',
      /wave 2 waits for the waves before it: canary/,
    );

    // The canary recovers and applies; main follows once it has soaked.
    nodes.down.delete(hostIp(0));
    await reconciler().reconcile('retry');
    assert.equal(phase('canary'), 'Ready');
    assert.equal(nodes.packagesOf(hostIp(1)).get('jq'), '1.6');
    clock += 30 * MIN;
    await reconciler().reconcile('window');
    assert.equal(nodes.packagesOf(hostIp(1)).get('jq'), '1.7');
    assert.equal(phase('main'), 'Ready');
  });
});
