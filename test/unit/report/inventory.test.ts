import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { hostsFromObjects, type Metal3Object } from '../../../src/observe/inventory/hosts.js';
import type { Lease } from '../../../src/observe/types.js';
import { buildInventoryReport, type InventoryStatusDoc } from '../../../src/report/inventory.js';

function bmh(name: string, mac: string, extra: Partial<Metal3Object> = {}): Metal3Object {
  return {
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'metal3', labels: { 'bpa.akraino.org/sriov': 'true' } },
    spec: {
      online: true,
      bootMACAddress: mac.toUpperCase(),
      bmc: { address: 'ipmi://10.0.0.9:623', credentialsName: 'node-bmc-secret' },
      ...extra.spec,
    },
    status: {
      poweredOn: true,
      provisioning: { state: 'provisioned' },
      hardware: {
        cpu: { count: 16 },
        ramMebibytes: 32768,
        nics: [{ name: 'eth0', mac, ip: '192.168.9.5', model: '0x8086 0x1572' }],
      },
      ...extra.status,
    },
    origin: `inventory/${name}.yaml`,
  };
}

const leases = new Map<string, Lease>([
  ['52:54:00:00:00:02', { mac: '52:54:00:00:00:02', ip: '10.10.0.2', origin: 'dnsmasq.leases:1' }],
]);

describe('status/inventory.yaml', () => {
  const hosts = hostsFromObjects([
    bmh('node-2', '52:54:00:00:00:02'),
    bmh('node-1', '52:54:00:00:00:01', {
      spec: { consumerRef: { kind: 'Machine', namespace: 'capi', name: 'm-1' } },
      status: { poweredOn: false },
    }),
  ]);
  const input = {
    site: 'lab',
    hosts,
    leases,
    controller: {
      flavour: 'kud',
      prune: false,
      ipOrder: ['lease', 'inventory'] as Array<'lease' | 'inventory'>,
    },
    inventory: '2 BareMetalHosts from the site',
    previous: undefined,
    now: '2026-01-01T00:00:00.000Z',
  };

  it('lists each host with hardware, eligibility, address and its source, holder; sorted', () => {
    const doc = parse(buildInventoryReport(input)) as InventoryStatusDoc;
    assert.equal(doc.kind, 'InventoryStatus');
    assert.equal(doc.status.observedAt, input.now);
    assert.deepEqual(
      doc.status.hosts.map((h) => h.name),
      ['node-1', 'node-2'],
    );
    const [one, two] = doc.status.hosts;
    assert.deepEqual(two, {
      name: 'node-2',
      namespace: 'metal3',
      bootMAC: '52:54:00:00:00:02',
      nics: [{ mac: '52:54:00:00:00:02', name: 'eth0', model: '0x8086 0x1572' }],
      cpu: 16,
      memoryMiB: 32768,
      sriov: true,
      qat: false,
      labels: { 'bpa.akraino.org/sriov': 'true' },
      hardware: { nics: [{ name: 'eth0', model: '0x8086 0x1572', mac: '52:54:00:00:00:02' }] },
      eligible: true,
      address: { ip: '10.10.0.2', from: 'lease', mac: '52:54:00:00:00:02' },
    });
    assert.equal(one?.eligible, false);
    assert.match(one?.reason ?? '', /powered off/);
    assert.equal(one?.consumer, 'Machine capi/m-1');
    assert.deepEqual(one?.address, {
      ip: '192.168.9.5',
      from: 'inventory',
      mac: '52:54:00:00:00:01',
    });
  });

  it('never carries BMC addresses or credentials', () => {
    const text = buildInventoryReport(input);
    assert.doesNotMatch(text, /ipmi|10\.0\.0\.9|bmc|secret|credentials/i);
  });

  it('is the same text when nothing changed (the first time is kept), and new when a host changed', () => {
    const first = buildInventoryReport(input);
    const again = buildInventoryReport({
      ...input,
      hosts: [...hosts].reverse(),
      previous: parse(first),
      now: '2026-01-02T00:00:00.000Z',
    });
    assert.equal(again, first);
    const moved = buildInventoryReport({
      ...input,
      leases: new Map(),
      previous: parse(first),
      now: '2026-01-02T00:00:00.000Z',
    });
    assert.notEqual(moved, first);
    const doc = parse(moved) as InventoryStatusDoc;
    assert.equal(doc.status.observedAt, '2026-01-02T00:00:00.000Z');
    assert.deepEqual(doc.status.hosts[1]?.address, {
      ip: '192.168.9.5',
      from: 'inventory',
      mac: '52:54:00:00:00:02',
    });
  });
});
