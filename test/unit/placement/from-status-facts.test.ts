import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostsFromObjects } from '../../../src/observe/inventory/hosts.js';
import { readStatusWorld } from '../../../src/reconcile/from-status.js';
import { buildInventoryReport } from '../../../src/report/inventory.js';

describe('status/inventory.yaml: the facts placement terms read, written and read back', () => {
  it('labels and hardware facts come back as the controller saw them', async () => {
    const [seen] = hostsFromObjects([
      {
        kind: 'BareMetalHost',
        metadata: { name: 'node-1', namespace: 'metal3', labels: { rack: 'r1', gen: '4' } },
        spec: { online: true, bootMACAddress: '52:54:00:00:00:01' },
        status: {
          poweredOn: true,
          provisioning: { state: 'provisioned' },
          hardware: {
            cpu: { arch: 'x86_64', model: 'AMD EPYC 7302', count: 32, flags: ['avx2'] },
            ramMebibytes: 131072,
            nics: [
              {
                name: 'eno1',
                mac: '52:54:00:00:00:01',
                speedGbps: 100,
                pxe: true,
                vlans: [{ id: 10, name: 'a' }],
              },
            ],
            storage: [
              { name: '/dev/nvme0n1', type: 'NVME', sizeBytes: 3840755982336, rotational: false },
            ],
            systemVendor: {
              manufacturer: 'HPE',
              productName: 'ProLiant DL385',
              serialNumber: 'SECRETSERIAL',
            },
            firmware: { bios: { vendor: 'HPE', version: 'A42', date: '01/01/2024' } },
          },
        },
      },
    ]);
    assert.ok(seen);
    const dir = await mkdtemp(join(tmpdir(), 'bpa-facts-'));
    try {
      await mkdir(join(dir, 'status'));
      const text = buildInventoryReport({
        site: 'lab',
        hosts: [seen],
        leases: new Map(),
        controller: { flavour: 'kud', prune: false, ipOrder: ['lease', 'inventory'] },
        inventory: '1 BareMetalHost',
        previous: undefined,
        now: '2026-01-01T00:00:00.000Z',
      });
      assert.doesNotMatch(text, /SECRETSERIAL/);
      await writeFile(join(dir, 'status', 'inventory.yaml'), text);
      const world = await readStatusWorld(dir, { clusters: [], inventory: [] });
      const [back] = world.observations.hosts;
      assert.deepEqual(back?.labels, { gen: '4', rack: 'r1' });
      assert.deepEqual(back?.hardware, {
        cpu: { arch: 'x86_64', model: 'AMD EPYC 7302', flags: ['avx2'] },
        nics: [{ name: 'eno1', mac: '52:54:00:00:00:01', speedGbps: 100, pxe: true, vlans: [10] }],
        storage: [
          { name: '/dev/nvme0n1', type: 'NVME', sizeBytes: 3840755982336, rotational: false },
        ],
        systemVendor: { manufacturer: 'HPE', productName: 'ProLiant DL385' },
        firmware: { bios: { vendor: 'HPE', version: 'A42', date: '01/01/2024' } },
      });
      assert.equal(back?.cpuCount, 32);
      assert.equal(back?.ramMebibytes, 131072);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
