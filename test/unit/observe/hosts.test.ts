import assert from 'node:assert/strict';
import { hostsFromObjects, type Metal3Object } from '../../../src/observe/inventory/hosts.js';
import { withDerivedKept } from '../util/derived-kept.js';

function bmh(
  name: string,
  over: {
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
    labels?: Record<string, string>;
  } = {},
): Metal3Object {
  return {
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'metal3', labels: over.labels },
    spec: { online: true, bootMACAddress: '52:54:00:AA:00:01', ...over.spec },
    status: {
      poweredOn: true,
      operationalStatus: 'OK',
      provisioning: { state: 'provisioned' },
      hardware: {
        cpu: { count: 8 },
        ramMebibytes: 16384,
        nics: [{ name: 'eno1', mac: '52:54:00:aa:00:01', ip: '198.18.0.5' }],
      },
      ...over.status,
    },
  };
}

describe('hosts from BareMetalHost objects', () => {
  withDerivedKept();
  it('reads hardware, normalizes MACs and merges a NIC listed for IPv4 and IPv6', () => {
    const [h] = hostsFromObjects([
      bmh('node-1', {
        status: {
          hardware: {
            cpu: { count: 32 },
            ramMebibytes: 131072,
            nics: [
              { name: 'eno1', mac: '52:54:00:AA:00:01', ip: '198.18.0.5', model: '0x8086 0x1572' },
              { name: 'eno1', mac: '52:54:00:aa:00:01', ip: 'fd00::5', model: '0x8086 0x1572' },
              { name: 'eno2', mac: '52-54-00-aa-00-02' },
            ],
          },
        },
      }),
    ]);
    assert.equal(h?.bootMac, '52:54:00:aa:00:01');
    assert.equal(h?.cpuCount, 32);
    assert.equal(h?.ramMebibytes, 131072);
    assert.deepEqual(
      h?.nics.map((n) => [n.mac, n.ips]),
      [
        ['52:54:00:aa:00:01', ['198.18.0.5', 'fd00::5']],
        ['52:54:00:aa:00:02', []],
      ],
    );
    assert.deepEqual(h?.macs, ['52:54:00:aa:00:01', '52:54:00:aa:00:02']);
    assert.equal(h?.sriov, true, 'X710 NIC model means SR-IOV');
    assert.equal(h?.eligible, true);
  });

  it('prefers HardwareData of the same namespace/name over status.hardware', () => {
    const [h] = hostsFromObjects([
      bmh('node-1'),
      {
        kind: 'HardwareData',
        metadata: { name: 'node-1', namespace: 'metal3' },
        spec: { hardware: { cpu: { count: 64 }, ramMebibytes: 262144, nics: [] } },
      },
      {
        kind: 'HardwareData',
        metadata: { name: 'node-1', namespace: 'other' },
        spec: { hardware: { cpu: { count: 2 } } },
      },
    ]);
    assert.equal(h?.cpuCount, 64);
    assert.equal(h?.ramMebibytes, 262144);
  });

  it('takes sriov and qat from labels, which override NIC models', () => {
    const hosts = hostsFromObjects([
      bmh('a', { labels: { 'bpa.akraino.org/sriov': 'true', 'bpa.akraino.org/qat': 'true' } }),
      bmh('b', {
        labels: { 'bpa.akraino.org/sriov': 'false' },
        status: { hardware: { nics: [{ mac: '52:54:00:aa:00:09', model: '0x8086 0x158b' }] } },
      }),
    ]);
    assert.deepEqual(
      hosts.map((h) => [h.name, h.sriov, h.qat]),
      [
        ['a', true, true],
        ['b', false, false],
      ],
    );
  });

  const ineligible: Array<[string, Parameters<typeof bmh>[1], RegExp]> = [
    ['offline', { spec: { online: false } }, /not online/],
    ['powered off', { status: { poweredOn: false } }, /powered off/],
    [
      'in error',
      { status: { errorMessage: 'BMC unreachable', operationalStatus: 'error' } },
      /error: BMC unreachable/,
    ],
    [
      'still inspecting',
      { status: { provisioning: { state: 'inspecting' } } },
      /provisioning state 'inspecting'/,
    ],
    ['no provisioning state', { status: { provisioning: {} } }, /no provisioning state/],
  ];
  for (const [name, over, reason] of ineligible) {
    it(`a host ${name} is not eligible, with the reason`, () => {
      const [h] = hostsFromObjects([bmh('x', over)]);
      assert.equal(h?.eligible, false);
      assert.match(h?.ineligibleReason ?? '', reason);
    });
  }

  it('externally provisioned hosts are eligible; output is sorted by namespace/name', () => {
    const hosts = hostsFromObjects([
      bmh('z', { status: { provisioning: { state: 'externally provisioned' } } }),
      bmh('a'),
    ]);
    assert.deepEqual(
      hosts.map((h) => [h.name, h.eligible]),
      [
        ['a', true],
        ['z', true],
      ],
    );
  });

  it('builds a host again only when one of its objects is a new one (the warm path under serve)', () => {
    const a = bmh('a');
    const b = bmh('b');
    const [a1, b1] = hostsFromObjects([a, b]);
    // The same objects in new wrappers, as observe makes them from cached documents.
    const [a2, b2] = hostsFromObjects([{ ...a }, { ...b }]);
    assert.equal(a2, a1);
    assert.equal(b2, b1);
    // A new status object (the file changed): built again, and it says what the new one says.
    const [a3] = hostsFromObjects([{ ...a, status: { ...a.status, poweredOn: false } }]);
    assert.notEqual(a3, a1);
    assert.equal(a3?.eligible, false);
    assert.match(a3?.ineligibleReason ?? '', /powered off/);
    // A HardwareData for the host now: built again from it.
    const hw: Metal3Object = {
      kind: 'HardwareData',
      metadata: { name: 'a', namespace: 'metal3' },
      spec: { hardware: { cpu: { count: 64 }, ramMebibytes: 1024, nics: [] } },
    };
    const [a4] = hostsFromObjects([a, hw]);
    assert.notEqual(a4, a1);
    assert.equal(a4?.cpuCount, 64);
    // Another file (origin) for the same objects: built again.
    const [a5] = hostsFromObjects([{ ...a, origin: 'inventory/other.yaml' }]);
    assert.equal(a5?.origin, 'inventory/other.yaml');
    assert.deepEqual(hostsFromObjects([a])[0], a1);
  });
});

describe('hosts from objects: the last call patched when only a few hosts changed', () => {
  withDerivedKept();
  const hw = (name: string, cpus: number): Metal3Object => ({
    kind: 'HardwareData',
    metadata: { name, namespace: 'metal3' },
    spec: { hardware: { cpu: { count: cpus }, ramMebibytes: 1024, nics: [] } },
  });
  // Not in key order, with a HardwareData in the middle.
  const objects: Metal3Object[] = [
    bmh('node-3'),
    bmh('node-1'),
    hw('node-1', 64),
    bmh('node-2', { labels: { rack: 'r1' } }),
  ];
  const fresh = (list: Metal3Object[]): unknown => hostsFromObjects(structuredClone(list));

  it('the same objects: the same hosts; a host whose object changed, in its place', () => {
    const a = hostsFromObjects(objects);
    const b = hostsFromObjects([...objects]);
    assert.deepEqual(b, a);
    b.forEach((h, i) => assert.equal(h, a[i]));
    const next = objects.map((o, i) => (i === 3 ? bmh('node-2', { labels: { rack: 'r2' } }) : o));
    const c = hostsFromObjects(next);
    assert.deepEqual(
      c.map((h) => [h.name, h.labels['rack']]),
      [
        ['node-1', undefined],
        ['node-2', 'r2'],
        ['node-3', undefined],
      ],
    );
    assert.equal(c[0], a[0], 'node-1 kept');
    assert.equal(c[0]?.cpuCount, 64, 'from its HardwareData');
    assert.notEqual(c[1], a[1]);
    assert.deepEqual(c, fresh(next));
  });

  it('a renamed host, a changed HardwareData, another number of objects: built again', () => {
    hostsFromObjects(objects);
    for (const next of [
      objects.map((o, i) => (i === 0 ? bmh('node-0') : o)),
      objects.map((o, i) => (i === 2 ? hw('node-1', 4) : o)),
      objects.slice(1),
    ]) {
      const got = hostsFromObjects(next);
      assert.deepEqual(got, fresh(next));
      assert.deepEqual(
        got.map((h) => h.name),
        [...got.map((h) => h.name)].sort(),
      );
    }
    const patched = hostsFromObjects(objects.map((o, i) => (i === 2 ? hw('node-1', 4) : o)));
    assert.equal(patched.find((h) => h.name === 'node-1')?.cpuCount, 4);
  });
});
