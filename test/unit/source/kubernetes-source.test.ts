import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesSource } from '../../../src/source/kubernetes-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { waitFor } from '../../integration/apply/harness.js';
import { fieldPath, hostFingerprint, siteDocument } from '../../../src/source/kubernetes-source.js';
import { coalesce } from '../../../src/serve/operator.js';

describe('operator mode: objects as site documents', () => {
  it('gives a problem the field path of its pointer', () => {
    assert.equal(
      fieldPath('/spec/masters/0/master-1/mac-address'),
      'spec.masters[0].master-1.mac-address',
    );
    assert.equal(fieldPath(''), '');
    assert.equal(
      fieldPath('/metadata/labels/bpa.akraino.org~1sriov'),
      'metadata.labels["bpa.akraino.org/sriov"]',
    );
  });

  it('keeps of an object only what was applied: no status, server metadata or annotations', () => {
    const doc = siteDocument({
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Cluster',
      metadata: {
        name: 'east',
        namespace: 'bpa-system',
        uid: 'u',
        resourceVersion: '7',
        generation: 2,
        labels: { cluster: 'east' },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        managedFields: [],
        finalizers: ['bpa.akraino.org/cluster'],
      },
      spec: { provisioningCR: 'p' },
      status: { phase: 'Ready' },
    } as never);
    assert.deepEqual(doc, {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'east', labels: { cluster: 'east' } },
      spec: { provisioningCR: 'p' },
    });
  });

  it("changes a host's fingerprint only for what the plan reads", () => {
    const host = (over: Record<string, unknown> = {}, status: Record<string, unknown> = {}) => ({
      metadata: { name: 'n', labels: { rack: 'a' }, resourceVersion: String(Math.random()) },
      spec: { online: true, bootMACAddress: '52:54:00:00:00:01', bmc: { address: 'x' }, ...over },
      status: {
        provisioning: { state: 'provisioned' },
        poweredOn: true,
        lastUpdated: String(Math.random()),
        hardware: { cpu: { count: 8 }, nics: [{ mac: '52:54:00:00:00:01', ip: '10.0.0.1' }] },
        ...status,
      },
    });
    const base = hostFingerprint(host());
    assert.equal(hostFingerprint(host({ bmc: { address: 'y' } })), base, 'the BMC address');
    assert.equal(hostFingerprint(host()), base, 'a new resourceVersion and lastUpdated');
    assert.notEqual(hostFingerprint(host({ online: false })), base);
    assert.notEqual(hostFingerprint(host({ consumerRef: { name: 'm' } })), base);
    assert.notEqual(hostFingerprint(host({}, { provisioning: { state: 'deprovisioning' } })), base);
    assert.notEqual(
      hostFingerprint(
        host(
          {},
          { hardware: { cpu: { count: 8 }, nics: [{ mac: '52:54:00:00:00:01', ip: '10.0.0.2' }] } },
        ),
      ),
      base,
    );
  });
});

describe('operator mode: a burst of changes is one trigger', () => {
  it('fires once for calls close together, and at the latest maxMs after the first', async () => {
    let fired = 0;
    const c = coalesce(() => fired++, 30, 100);
    for (let i = 0; i < 100; i++) c.call();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(fired, 1);
    // Calls that never pause still fire by maxMs.
    const start = Date.now();
    while (Date.now() - start < 250) {
      c.call();
      await new Promise((r) => setTimeout(r, 10));
    }
    c.cancel();
    assert.ok(fired >= 3 && fired <= 4, `fired ${fired} times`);
  });
});

describe('operator mode: the watch of the site objects (fake API server, for its faults)', function () {
  this.timeout(20_000);
  const SITE_TYPES = [
    ['sites', 'site', 'Site'],
    ['clusters', 'cluster', 'Cluster'],
    ['provisionings', 'provisioning', 'Provisioning'],
    ['softwares', 'software', 'Software'],
  ].map(([plural, singular, kind]) => ({
    group: 'bpa.akraino.org',
    version: 'v1alpha1',
    plural: plural as string,
    singular: singular as string,
    kind: kind as string,
    namespaced: true,
    statusSubresource: true,
    builtin: false,
    returnsDeletedObject: true,
  }));
  let fake: FakeKube;
  let source: KubernetesSource | undefined;
  let tmp: string;
  beforeEach(async () => {
    fake = await startFakeKube({ resources: SITE_TYPES, historyLimit: 3 });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ksrc-'));
  });
  afterEach(async () => {
    await source?.stop();
    await fake.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  const cluster = (name: string) => ({
    apiVersion: 'bpa.akraino.org/v1alpha1',
    kind: 'Cluster',
    metadata: { name, namespace: 'ns' },
    spec: { provisioningCR: `${name}-p` },
  });

  it('relists after a watch that ends finds its resourceVersion expired (410 Gone), and sees what changed meanwhile', async () => {
    fake.put(cluster('east'));
    let changes = 0;
    source = new KubernetesSource({
      kubeConfig: fake.kubeConfig('ns'),
      namespaces: ['ns'],
      stateDir: tmp,
      log: silentLogger(),
      onChange: () => changes++,
    });
    await source.start();
    const listsBefore = fake.requests.filter(
      (r) => r.path.endsWith('/clusters') && r.query['watch'] !== 'true',
    ).length;
    // Other kinds move the history on: the clusters watch's resourceVersion is compacted away.
    for (let i = 0; i < 5; i++)
      fake.put({
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Site',
        metadata: { name: `s${i}`, namespace: 'ns' },
        spec: {},
      });
    fake.endWatches();
    fake.put(cluster('west'));
    await waitFor('a relist of the clusters', async () =>
      fake.requests.filter((r) => r.path.endsWith('/clusters') && r.query['watch'] !== 'true')
        .length > listsBefore
        ? true
        : undefined,
    );
    await waitFor('west seen', async () => {
      await source?.sync();
      return source?.siteObjects().some((o) => o.name === 'west') ? true : undefined;
    });
    assert.equal(source.notReady(), undefined);
    assert.ok(changes > 0);
  });

  it('a watch that cannot be re-established makes the source not ready, and ready again once it can', async () => {
    fake.put(cluster('east'));
    source = new KubernetesSource({
      kubeConfig: fake.kubeConfig('ns'),
      namespaces: ['ns'],
      stateDir: tmp,
      log: silentLogger(),
      failureGraceMs: 200,
      retryBaseMs: 50,
    });
    await source.start();
    assert.equal(source.notReady(), undefined);
    fake.fail(
      { method: 'GET', pathPrefix: '/apis/bpa.akraino.org' },
      { code: 500, message: 'down' },
    );
    fake.endWatches();
    const reason = await waitFor('not ready', async () => source?.notReady());
    assert.match(reason, /the watch cannot be re-established since .*HTTP 500/);
    fake.clearFaults();
    await waitFor(
      'ready again',
      async () => (source?.notReady() === undefined ? true : undefined),
      10_000,
    );
  });
});
