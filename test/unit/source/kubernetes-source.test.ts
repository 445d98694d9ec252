import assert from 'node:assert/strict';
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
