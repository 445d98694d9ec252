import assert from 'node:assert/strict';
import { listMetal3Objects } from '../../../src/observe/inventory/kubernetes.js';
import { hostsFromObjects } from '../../../src/observe/inventory/hosts.js';
import { BpaError } from '../../../src/util/errors.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';

function host(i: number, namespace = 'metal3'): Parameters<FakeKube['put']>[0] {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name: `node-${i}`, namespace },
    spec: { online: true, bootMACAddress: `52:54:00:00:01:${i.toString(16).padStart(2, '0')}` },
    // Every field the real metal3 CRD requires of a status, so a real API server takes it.
    status: {
      poweredOn: true,
      operationalStatus: 'OK',
      errorMessage: '',
      errorCount: 0,
      provisioningFailCount: 0,
      provisioning: {
        ID: `6f1e0c2a-3b4d-4e5f-8a9b-${String(i).padStart(12, '0')}`,
        state: 'provisioned',
      },
      hardware: { cpu: { count: 8 }, ramMebibytes: 8192 },
    },
  };
}

describe('Kubernetes inventory source (fake API server, real client)', () => {
  let kube: FakeKube;
  beforeEach(async () => {
    kube = await startFakeKube();
  });
  afterEach(async () => {
    await kube.stop();
  });

  it('lists every page with limit/continue, and HardwareData', async () => {
    for (let i = 0; i < 7; i++) kube.put(host(i));
    kube.put({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HardwareData',
      metadata: { name: 'node-3', namespace: 'metal3' },
      spec: { hardware: { cpu: { count: 96 } } },
    });
    const objects = await listMetal3Objects({
      kubeConfig: kube.kubeConfig(),
      namespaces: ['metal3'],
      pageSize: 3,
    });
    assert.equal(objects.filter((o) => o.kind === 'BareMetalHost').length, 7);
    const pages = kube.requests.filter((r) => r.path.endsWith('/baremetalhosts'));
    assert.equal(pages.length, 3, 'three pages of at most 3');
    assert.ok(pages.every((r) => r.query['limit'] === '3'));
    assert.ok(pages.slice(1).every((r) => (r.query['continue'] ?? '') !== ''));
    const hosts = hostsFromObjects(objects);
    assert.equal(hosts.find((h) => h.name === 'node-3')?.cpuCount, 96);
  });

  it('lists all namespaces when none are configured, and only the configured ones otherwise', async () => {
    kube.put(host(1, 'a'));
    kube.put(host(2, 'b'));
    assert.equal(
      (await listMetal3Objects({ kubeConfig: kube.kubeConfig(), namespaces: [] })).length,
      2,
    );
    const onlyB = await listMetal3Objects({ kubeConfig: kube.kubeConfig(), namespaces: ['b'] });
    assert.deepEqual(
      onlyB.map((o) => o.metadata?.name),
      ['node-2'],
    );
  });

  const faults: Array<[number, string, RegExp]> = [
    [403, 'stalled', /forbidden \(403\).*grant list on baremetalhosts/],
    [404, 'stalled', /not found \(404\).*is metal3 installed/],
    [500, 'transient', /server error \(500\).*will retry/],
  ];
  for (const [code, retry, message] of faults) {
    it(`HTTP ${code} gives a clear ${retry} error`, async () => {
      kube.fail(
        { pathPrefix: '/apis/metal3.io/v1alpha1/namespaces/metal3/baremetalhosts' },
        { code: code as 403 | 404 | 500, message: 'injected' },
      );
      await assert.rejects(
        listMetal3Objects({ kubeConfig: kube.kubeConfig(), namespaces: ['metal3'] }),
        (err: unknown) => {
          assert.ok(err instanceof BpaError);
          assert.equal(err.code, 'INVENTORY_UNAVAILABLE');
          assert.equal(err.retry, retry);
          assert.match(err.message, message);
          assert.match(err.message, /baremetalhosts\.metal3\.io in namespace metal3/);
          return true;
        },
      );
    });
  }

  it('a configured namespace that does not exist stops with a StalledError naming it', async () => {
    // The API server lists a missing namespace as empty, not 404.
    kube.put(host(1, 'metal3'));
    await assert.rejects(
      listMetal3Objects({ kubeConfig: kube.kubeConfig(), namespaces: ['metal3', 'metla3'] }),
      (err: unknown) => {
        assert.ok(err instanceof BpaError);
        assert.equal(err.code, 'INVENTORY_UNAVAILABLE');
        assert.equal(err.retry, 'stalled');
        assert.match(err.message, /namespace metla3: the namespace does not exist/);
        assert.match(err.message, /inventory\.namespaces/);
        return true;
      },
    );
    const asked = kube.requests.filter((r) => r.path.startsWith('/api/v1/namespaces/'));
    assert.deepEqual(
      asked.map((r) => r.path),
      ['/api/v1/namespaces/metla3'],
      'only the namespace that gave no host is checked',
    );
  });

  it('an existing namespace without hosts is just empty, as is one bpa may not read', async () => {
    kube.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'spare' } });
    assert.deepEqual(
      await listMetal3Objects({ kubeConfig: kube.kubeConfig(), namespaces: ['spare'] }),
      [],
    );
    kube.fail(
      { method: 'GET', pathPrefix: '/api/v1/namespaces/' },
      { code: 403, message: 'namespaces "other" is forbidden' },
    );
    assert.deepEqual(
      await listMetal3Objects({ kubeConfig: kube.kubeConfig(), namespaces: ['other'] }),
      [],
    );
  });

  it('a missing HardwareData API is not an error', async () => {
    kube.put(host(1));
    kube.fail(
      { pathPrefix: '/apis/metal3.io/v1alpha1/namespaces/metal3/hardwaredata' },
      { code: 404, message: 'no such resource' },
    );
    const objects = await listMetal3Objects({
      kubeConfig: kube.kubeConfig(),
      namespaces: ['metal3'],
    });
    assert.equal(objects.length, 1);
  });
});
