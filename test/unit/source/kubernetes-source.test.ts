import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesSource } from '../../../src/source/kubernetes-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { DEFAULT_RESOURCES, startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { provisionedHostStatus } from '../../k8s/kube-objects.js';
import { listMetal3Objects } from '../../../src/observe/inventory/kubernetes.js';
import { hostsFromObjects } from '../../../src/observe/inventory/hosts.js';
import { observe } from '../../../src/observe/index.js';
import type { SiteModel } from '../../../src/validate/model.js';
import { SiteCache } from '../../../src/load/cache.js';
import { DEFAULT_LIMITS, loadSite } from '../../../src/load/index.js';
import { waitFor } from '../../integration/apply/harness.js';
import { fieldPath, hostFingerprint, siteDocument } from '../../../src/source/kubernetes-source.js';
import { coalesce } from '../../../src/serve/operator.js';

const INFORMER_OBJECTS = fileURLToPath(new URL('./fixtures/informer-objects.ts', import.meta.url));

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

describe('operator mode: the inventory from the watch (fake API server)', function () {
  this.timeout(20_000);
  let fake: FakeKube;
  let source: KubernetesSource | undefined;
  let tmp: string;
  beforeEach(async () => {
    fake = await startFakeKube({
      resources: [...SITE_TYPES, ...DEFAULT_RESOURCES.filter((r) => r.group === 'metal3.io')],
    });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ksrc-'));
  });
  afterEach(async () => {
    await source?.stop();
    source = undefined;
    await fake.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  // A host as metal3 keeps it: most of it is nothing the plan reads.
  const bmh = (i: number, status: Record<string, unknown> = {}) => ({
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name: `node-${i}`,
      namespace: 'ns',
      labels: { rack: 'a' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(2000) },
      managedFields: [{ manager: 'baremetal-operator', fieldsV1: { 'f:status': {} } }],
    },
    spec: {
      online: true,
      bootMACAddress: `52:54:00:00:01:0${i}`,
      bmc: { address: `ipmi://10.0.0.${i}`, credentialsName: `node-${i}-bmc` },
      image: { url: 'http://x/image.qcow2' },
    },
    status: {
      ...provisionedHostStatus(i),
      lastUpdated: '2026-11-28T00:00:00Z',
      operationHistory: { register: { start: '2026-11-28T00:00:00Z' } },
      goodCredentials: { credentials: { name: `node-${i}-bmc` } },
      hardware: {
        cpu: { count: 8, model: 'Xeon' },
        ramMebibytes: 8192,
        nics: [{ mac: `52:54:00:00:01:0${i}`, ip: `10.0.1.${i}`, name: 'eth0', model: 'virtio' }],
        storage: [{ name: '/dev/sda', sizeBytes: 1e12, rotational: false }],
      },
      ...status,
    },
  });
  const pick = (m: Record<string, unknown>) => ({
    name: m['name'],
    namespace: m['namespace'],
    resourceVersion: m['resourceVersion'],
  });
  const hostLists = (): number =>
    fake.requests.filter((r) => r.path.endsWith('/baremetalhosts') && r.query['watch'] !== 'true')
      .length;

  it('gives the hosts from its cache, with only what the plan reads, the same as a list would; a reconcile lists nothing', async () => {
    for (let i = 1; i <= 3; i++) fake.put(bmh(i));
    fake.put({
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'Cluster',
      metadata: {
        name: 'east',
        namespace: 'ns',
        managedFields: [{ manager: 'bpa', fieldsV1: { 'f:status': {} } }],
      },
      spec: { provisioningCR: 'east-p' },
      status: { conditions: [{ type: 'Ready', status: 'True', message: 'x'.repeat(1000) }] },
    });
    fake.put({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HardwareData',
      metadata: { name: 'node-2', namespace: 'ns' },
      spec: { hardware: { cpu: { count: 64 }, ramMebibytes: 65536 } },
    });
    let changes = 0;
    source = new KubernetesSource({
      kubeConfig: fake.kubeConfig('ns'),
      namespaces: ['ns'],
      stateDir: tmp,
      hosts: { kubeConfig: fake.kubeConfig('ns'), namespaces: ['ns'] },
      log: silentLogger(),
      onChange: () => changes++,
    });
    await source.start();
    const watched = source.watchedInventory(['ns']);
    assert.ok(watched, 'the watch covers the namespace');
    assert.equal(watched.length, 4);
    for (const o of watched) {
      assert.deepEqual(
        Object.keys(o.metadata).sort(),
        o.kind === 'HardwareData' ? ['name', 'namespace'] : ['labels', 'name', 'namespace'],
      );
      const text = JSON.stringify(o);
      for (const dropped of [
        'managedFields',
        'last-applied',
        'bmc',
        'image',
        'operationHistory',
        'lastUpdated',
        'goodCredentials',
      ])
        assert.ok(!text.includes(dropped), `${o.kind} ${o.origin} keeps ${dropped}`);
    }
    // The informers' own copies (compared by resourceVersion on a relist) keep nothing else,
    // of the hosts as of bpa's objects.
    const informers = (
      source as unknown as { watches: Array<{ informer: { list(): object[] } }> }
    ).watches.flatMap((w) => w.informer.list());
    assert.equal(informers.length, 5);
    for (const o of informers)
      assert.deepEqual(o, {
        metadata: pick((o as { metadata: Record<string, unknown> }).metadata),
      });

    // Another set of namespaces than the watch's: the inventory lists them itself.
    assert.equal(source.watchedInventory(['other']), undefined);
    assert.equal(source.watchedInventory([]), undefined);

    // The hosts are the ones a list gives, and taking them lists nothing.
    const listed = hostsFromObjects(
      await listMetal3Objects({ kubeConfig: fake.kubeConfig('ns'), namespaces: ['ns'] }),
    );
    const lists = hostLists();
    const observed = await observe({} as SiteModel, {
      inventory: {
        kind: 'kubernetes',
        kubeconfig: fake.kubeconfigPath,
        env: {},
        namespaces: ['ns'],
        watched: (ns) => source?.watchedInventory(ns),
      },
      leaseFiles: [],
      now: Date.now(),
      stateDir: join(tmp, 'state'),
    });
    assert.equal(hostLists(), lists, 'no list of the hosts at a reconcile');
    assert.deepEqual(observed.hosts, listed);
    assert.equal(observed.hosts.find((h) => h.name === 'node-2')?.cpuCount, 64, 'HardwareData');

    // What the plan does not read changes nothing, not even the object the hosts are built from.
    const before = changes;
    fake.put(bmh(1, { lastUpdated: '2026-11-28T01:00:00Z' }));
    fake.put({ ...bmh(2), spec: { ...bmh(2).spec, bmc: { address: 'ipmi://10.9.9.9' } } });
    fake.put(bmh(3, { hardware: { ...bmh(3).status.hardware, storage: [] } }));
    await waitFor('the storage change seen', async () => (changes > before ? true : undefined));
    const again = source.watchedInventory(['ns']) ?? [];
    assert.equal(changes, before + 1, 'only the hardware change triggers');
    assert.equal(again[0], watched[0], 'node-1 is the same object');
    assert.equal(again[1], watched[1], 'node-2 is the same object');
    assert.notEqual(again[2], watched[2], 'node-3 is a new one');
  });
});

describe('operator mode: the site files as written', function () {
  this.timeout(20_000);
  it('the informer of the hosts keeps a small object of each listed host, not the listed one with its fields deleted', async () => {
    // V8's own word on the objects' layout: a deleted field turns an object into a dictionary.
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--allow-natives-syntax', '--import', 'tsx', INFORMER_OBJECTS],
        { timeout: 60_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      );
    });
    assert.deepEqual(JSON.parse(out), {
      kept: 3,
      fast: 3,
      keys: ['metadata', 'metadata', 'metadata'],
    });
  });

  it("keeps of an object's spec only the fields it reads itself: the document holds the rest, once", async () => {
    await withSource(async (fake, source) => {
      const masters = [{ 'master-1': { 'mac-address': '52:54:00:00:00:01' } }];
      fake.put({
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'east', namespace: 'ns' },
        spec: { provisioningCR: 'east-p', softwareCR: 'east-s', deletionPolicy: 'Delete', masters },
      });
      await source.start();
      const { siteDir } = await source.sync();
      assert.deepEqual(
        source.siteObjects().map((o) => o.spec),
        [{ provisioningCR: 'east-p', softwareCR: 'east-s', deletionPolicy: 'Delete' }],
      );
      const loaded = await loadSite(siteDir, DEFAULT_LIMITS);
      assert.deepEqual(
        (loaded.documents[0]?.value as { spec: Record<string, unknown> }).spec['masters'],
        masters,
      );
    });
  });

  it('says what it wrote with its blob ids: a second load reads and parses no unchanged object again', async () => {
    await withSource(async (fake, source) => {
      for (const name of ['east', 'west'])
        fake.put({
          apiVersion: 'bpa.akraino.org/v1alpha1',
          kind: 'Cluster',
          metadata: { name, namespace: 'ns' },
          spec: { provisioningCR: `${name}-p` },
        });
      await source.start();
      const cache = new SiteCache();
      const load = async (): Promise<void> => {
        const { siteDir } = await source.sync();
        await loadSite(siteDir, DEFAULT_LIMITS, cache, await source.checkedOut());
      };
      await load();
      assert.deepEqual(cache.counts, { read: 2, reused: 0, parsed: 2 });
      fake.put({
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'west', namespace: 'ns' },
        spec: { provisioningCR: 'other' },
      });
      await waitFor('west changed', async () => {
        await source.sync();
        return source.siteObjects().some((o) => o.spec['provisioningCR'] === 'other')
          ? true
          : undefined;
      });
      await load();
      assert.deepEqual(cache.counts, { read: 1, reused: 1, parsed: 1 });
    });
  });
});

/** A source over a fake API server of the site's kinds in namespace ns, stopped after `run`. */
async function withSource(
  run: (fake: FakeKube, source: KubernetesSource) => Promise<void>,
): Promise<void> {
  const fake = await startFakeKube({ resources: SITE_TYPES });
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-ksrc-'));
  const source = new KubernetesSource({
    kubeConfig: fake.kubeConfig('ns'),
    namespaces: ['ns'],
    stateDir: tmp,
    log: silentLogger(),
  });
  try {
    await run(fake, source);
  } finally {
    await source.stop();
    await fake.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
