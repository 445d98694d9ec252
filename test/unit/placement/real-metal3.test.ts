/**
 * Placement terms over the real metal3 files in ../shared/real-world/metal3: the hardware
 * facts read from their status.hardware (and from a HardwareData), the checks and their
 * explanations with the values those hosts really report, and `bpa plan -o json` over them,
 * directly and through status/inventory.yaml (`--from-status`).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { hostsFromObjects, type Metal3Object } from '../../../src/observe/inventory/hosts.js';
import type { Host } from '../../../src/observe/types.js';
import {
  describeFailure,
  failures,
  passes,
  requirementsOf,
} from '../../../src/plan/assign/requirements.js';
import { buildInventoryReport } from '../../../src/report/inventory.js';
import type { HardwareRequirements, NodeSpec } from '../../../src/validate/model.js';
import { runCli } from '../validate/run-cli.js';
import { BASE_SITE, removeSite, writeSite } from '../validate/site-fixture.js';

const BLOCKS = fileURLToPath(
  new URL('../../../../shared/real-world/metal3/docs-blocks/', import.meta.url),
);
const API = 'bmo__docs__api.L402-494.yaml'; // bmo-controlplane-0: Xeon Gold 6138, Dell, 25 Gb
const TRYIT = 'docs__user-guide__src__developer_environment__tryit.L244-354.yaml'; // node-0: QEMU
const INTRO = 'docs__user-guide__src__bmo__introduction.L78-114.yaml';
const HWDATA = 'design__baremetal-operator__hardwaredata_crd.L174-194.yaml';

async function objects(file: string): Promise<Metal3Object[]> {
  const text = await readFile(join(BLOCKS, file), 'utf8');
  return parseAllDocuments(text).map((d) => ({ ...(d.toJS() as Metal3Object), origin: file }));
}

/** The object made usable: provisioned, powered on, no consumer (the docs show other states). */
function usable(o: Metal3Object): Metal3Object {
  const spec: Record<string, unknown> = { ...o.spec, online: true };
  delete spec['consumerRef'];
  const status = {
    ...o.status,
    poweredOn: true,
    errorMessage: '',
    provisioning: { state: 'provisioned' },
  };
  // The tryit block is `kubectl get -o yaml` output without apiVersion; the inventory wants it.
  return { apiVersion: 'metal3.io/v1alpha1', ...o, spec, status } as Metal3Object;
}

function req(hardware: HardwareRequirements): ReturnType<typeof requirementsOf> {
  const n: NodeSpec = { name: 'n', roles: ['worker'], pointer: '/x', hardware };
  return requirementsOf(n);
}

describe('placement terms over the real metal3 files', () => {
  let api: Host;
  let tryit: Host;
  let intro: Host;
  before(async () => {
    [api] = hostsFromObjects(await objects(API)) as [Host];
    [tryit] = hostsFromObjects(await objects(TRYIT)) as [Host];
    [intro] = hostsFromObjects(await objects(INTRO)) as [Host];
  });

  it('reads status.hardware into metal3-named facts (a NIC listed per address is one NIC)', () => {
    assert.deepEqual(api.hardware, {
      cpu: {
        arch: 'x86_64',
        model: 'Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz',
        count: 40,
        clockMegahertz: 2000,
        flags: [],
      },
      ramMebibytes: 0,
      nics: [
        { name: 'eno1', model: 'unknown', mac: '00:00:00:00:00:00', speedGbps: 25, pxe: true },
      ],
      storage: [],
      systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge r460' },
      firmware: { bios: { vendor: 'Dell Inc.', version: '1.6.13', date: '12/17/2018' } },
    });
    assert.deepEqual(
      tryit.hardware?.nics?.map((n) => n.name),
      ['enp1s0', 'enp2s0'],
    );
    assert.deepEqual(tryit.hardware?.storage, [
      {
        name: '/dev/sda',
        type: 'HDD',
        sizeBytes: 53687091200,
        rotational: true,
        vendor: 'QEMU',
        model: 'QEMU HARDDISK',
      },
    ]);
    assert.deepEqual(tryit.hardware?.firmware, {
      bios: { vendor: 'SeaBIOS', version: '1.13.0-1ubuntu1.1', date: '04/01/2014' },
    });
    assert.deepEqual(intro.hardware?.cpu, { arch: 'x86_64', count: 2 });
  });

  it('masters by CPU model, NVMe workers, 25 Gb data plane: who passes, and why not', () => {
    const gold = req({ cpu: { model: { matches: 'Xeon.*Gold 6[0-9]{3}' } } });
    assert.deepEqual(
      [api, tryit, intro].map((h) => passes(gold, h)),
      [true, false, false],
    );
    assert.deepEqual(failures(gold, tryit).map(describeFailure), [
      'cpu.model: has "Intel Xeon E3-12xx v2 (Ivy Bridge)", needs matches /Xeon.*Gold 6[0-9]{3}/',
    ]);
    assert.deepEqual(failures(gold, intro).map(describeFailure), [
      'cpu.model: not reported, needs matches /Xeon.*Gold 6[0-9]{3}/',
    ]);
    const nvme = req({ storage: [{ type: 'NVME', sizeBytes: { min: 1.9e12 }, count: 1 }] });
    assert.deepEqual(
      [api, tryit, intro].map((h) => passes(nvme, h)),
      [false, false, false],
    );
    assert.deepEqual(failures(nvme, tryit).map(describeFailure), [
      'storage[0]: has 0 matching of 1 disk, needs 1 with type NVME, sizeBytes >=1900G',
    ]);
    const hdd = req({ storage: [{ type: 'HDD', sizeBytes: { min: 50 * 2 ** 30 }, count: 1 }] });
    assert.deepEqual(
      [api, tryit, intro].map((h) => passes(hdd, h)),
      [false, true, true],
    );
    const fast = req({ nics: [{ speedGbps: { min: 25 }, pxe: true, count: 1 }] });
    assert.deepEqual(
      [api, tryit, intro].map((h) => passes(fast, h)),
      [true, false, false],
    );
    const qemu = req({
      systemVendor: { manufacturer: { equals: 'QEMU' }, productName: { matches: '^Standard PC' } },
      cpu: { flags: ['aes'] },
      firmware: { bios: { vendor: { equals: 'SeaBIOS' } } },
    });
    assert.deepEqual(
      [api, tryit, intro].map((h) => passes(qemu, h)),
      [false, true, false],
    );
  });

  it('HardwareData (spec.hardware) wins over status.hardware; the design-doc block (all null) adds nothing', async () => {
    const [bmh] = await objects(TRYIT);
    const [api0] = await objects(API);
    const hwdata: Metal3Object = {
      kind: 'HardwareData',
      metadata: { name: 'node-0', namespace: 'metal3' },
      spec: { hardware: (api0?.status as Record<string, unknown>)['hardware'] },
    };
    const [h] = hostsFromObjects([bmh as Metal3Object, hwdata]);
    assert.equal(h?.hardware?.cpu?.model, 'Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz');
    const [doc] = await objects(HWDATA);
    const [same] = hostsFromObjects([
      bmh as Metal3Object,
      { ...(doc as Metal3Object), metadata: { name: 'node-0', namespace: 'metal3' } },
    ]);
    assert.equal(same?.hardware?.cpu?.model, 'Intel Xeon E3-12xx v2 (Ivy Bridge)');
  });

  it('bpa plan -o json places by them and explains the unplaced node per requirement, also --from-status', async () => {
    const inventory = [...(await objects(API)), ...(await objects(TRYIT))].map(usable);
    const prov = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: provisioning-a
  labels:
    cluster: cluster-a
spec:
  masters:
    - master-1:
        hardware:
          cpu: {model: {matches: "Xeon.*Gold 6[0-9]{3}"}}
  workers:
    - worker-1:
        hardware:
          storage: [{type: NVME, sizeBytes: {min: 1.9T}}]
  KUDPlugins: [emco]
`;
    const dir = await writeSite({
      'cluster.yaml': BASE_SITE['cluster.yaml'] as string,
      'software.yaml': BASE_SITE['software.yaml'] as string,
      'provisioning.yaml': prov,
    });
    try {
      await mkdir(join(dir, '..', `${dir.split('/').pop()}-inv`), { recursive: true });
      const inv = join(dir, '..', `${dir.split('/').pop()}-inv`);
      await writeFile(
        join(inv, 'hosts.yaml'),
        inventory.map((o) => stringify({ ...o, origin: undefined })).join('---\n'),
      );
      const direct = await runCli(['plan', dir, '--inventory', inv, '-o', 'json']);
      const closestOf = (stdout: string): unknown => {
        const plan = JSON.parse(stdout) as { problems: Array<Record<string, unknown>> };
        const p = plan.problems.find((x) => x['code'] === 'NODE_UNPLACED');
        assert.ok(p, stdout.slice(0, 2000));
        assert.match(String(p['file']), /provisioning\.yaml$/);
        assert.equal(p['line'], 13);
        assert.match(String(p['message']), /worker-1: needs storage\[0\] 1 with type NVME/);
        return p['closest'];
      };
      const want = [
        {
          host: 'bmo-project/bmo-controlplane-0',
          failures: [
            {
              requirement: 'storage[0]',
              has: '0 matching of 0 disks',
              needs: '1 with type NVME, sizeBytes >=1900G',
            },
          ],
        },
        {
          host: 'metal3/node-0',
          failures: [
            {
              requirement: 'storage[0]',
              has: '0 matching of 1 disk',
              needs: '1 with type NVME, sizeBytes >=1900G',
            },
          ],
        },
      ];
      assert.deepEqual(closestOf(direct.stdout), want);

      // The controller's report of the same inventory: a pull request plan sees the same.
      const hosts = hostsFromObjects(inventory);
      await mkdir(join(dir, 'status'), { recursive: true });
      await writeFile(
        join(dir, 'status', 'inventory.yaml'),
        buildInventoryReport({
          site: 'lab',
          hosts,
          leases: new Map(),
          controller: { flavour: 'kud', prune: false, ipOrder: ['lease', 'inventory'] },
          inventory: '2 BareMetalHosts',
          previous: undefined,
          now: '2026-01-01T00:00:00.000Z',
        }),
      );
      const offline = await runCli(['plan', dir, '--from-status', '-o', 'json']);
      assert.deepEqual(closestOf(offline.stdout), want);
    } finally {
      await removeSite(dir);
    }
  });
});
