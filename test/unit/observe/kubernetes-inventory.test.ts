import assert from 'node:assert/strict';
import { listMetal3Objects } from '../../../src/observe/inventory/kubernetes.js';
import { BpaError } from '../../../src/util/errors.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { provisionedHostStatus } from '../../k8s/kube-objects.js';

function host(i: number, namespace = 'metal3'): Parameters<FakeKube['put']>[0] {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name: `node-${i}`, namespace },
    spec: { online: true, bootMACAddress: `52:54:00:00:01:${i.toString(16).padStart(2, '0')}` },
    status: provisionedHostStatus(i),
  };
}

// Listing, paging (more than 500 hosts), namespaces and a missing namespace run against a real
// kube-apiserver in test/integration/kube/inventory.test.ts. Here, on the fake, what a real
// server does not give on demand: a 403, 404 or 500 on the list, a 403 on reading a namespace
// (bpa's RBAC grants it cluster-wide), a metal3 without the HardwareData API.
describe('Kubernetes inventory source faults (fake API server, real client)', () => {
  let kube: FakeKube;
  beforeEach(async () => {
    kube = await startFakeKube();
  });
  afterEach(async () => {
    await kube.stop();
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

  it('a namespace bpa may not read is just empty', async () => {
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
