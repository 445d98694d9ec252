/**
 * Every metal3 file in ../shared/real-world/metal3 (baremetal-operator examples, samples and
 * test data, and BareMetalHost/HardwareData blocks from metal3's documentation), read as an
 * inventory directory exactly as `bpa plan --inventory FILE` reads it. The table is what bpa
 * must make of each, so real files keep working: the hosts read with their eligibility (or
 * why not), and every warning and notice with its line.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveNodeIp } from '../../../src/observe/inventory/ip.js';
import { observe, type Observations } from '../../../src/observe/index.js';

const REAL = fileURLToPath(new URL('../../../../shared/real-world/', import.meta.url));
const METAL3 = join(REAL, 'metal3');

interface Outcome {
  /** `namespace/name eligible`, or `namespace/name <why not>`. */
  hosts: string[];
  /** `severity CODE:line`. */
  problems: string[];
}

const EXPECTED: Record<string, Outcome> = {
  'bmh-01-provision.2ebd124.yaml': {
    hosts: ['bml-vm-01 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'bmh-01.c1c4195.yaml': {
    hosts: ['bmh-vm-01 no status (metal3 has not reported on it)'],
    problems: [],
  },
  // One host per state beside its BMC Secret and an OpenShift Machine. The demo reuses MAC
  // 00:c6:14:04:61:b2 for three hosts, so the later two are left out.
  'demo-hosts.2bb828c.yaml': {
    hosts: [
      'demo-available no status (metal3 has not reported on it)',
      'demo-discovered not online (spec.online is not true); no status (metal3 has not reported on it)',
      'demo-externally-provisioned consumed by openshift-machine-api/demo-ostest-worker (spec.consumerRef); not online (spec.online is not true); no status (metal3 has not reported on it)',
      'demo-inspecting no status (metal3 has not reported on it)',
      'demo-provisioning no status (metal3 has not reported on it)',
      'demo-registering no status (metal3 has not reported on it)',
      'demo-registration-error no status (metal3 has not reported on it)',
    ],
    problems: [
      'notice OTHER_KIND_SKIPPED:5',
      'notice OTHER_KIND_SKIPPED:20',
      'notice OTHER_KIND_SKIPPED:30',
      'notice OTHER_KIND_SKIPPED:53',
      'notice OTHER_KIND_SKIPPED:75',
      'notice OTHER_KIND_SKIPPED:97',
      'notice OTHER_KIND_SKIPPED:119',
      'notice OTHER_KIND_SKIPPED:141',
      'notice OTHER_KIND_SKIPPED:170',
      'notice OTHER_KIND_SKIPPED:199',
      'warning NO_HOST_DATA:16',
      'warning NO_HOST_DATA:41',
      'warning NO_HOST_DATA:64',
      'warning NO_HOST_DATA:86',
      'warning NO_HOST_DATA:108',
      'warning NO_HOST_DATA:130',
      'warning INVENTORY_SKIPPED:189',
      'warning INVENTORY_SKIPPED:218',
    ],
  },
  // 2019 version: same shape, no consumerRef yet
  'demo-hosts.7f38151.yaml': {
    hosts: [
      'demo-discovered not online (spec.online is not true); no status (metal3 has not reported on it)',
      'demo-externally-provisioned not online (spec.online is not true); no status (metal3 has not reported on it)',
      'demo-inspecting no status (metal3 has not reported on it)',
      'demo-provisioning no status (metal3 has not reported on it)',
      'demo-ready no status (metal3 has not reported on it)',
      'demo-registering no status (metal3 has not reported on it)',
      'demo-registration-error no status (metal3 has not reported on it)',
    ],
    problems: [
      'notice OTHER_KIND_SKIPPED:5',
      'notice OTHER_KIND_SKIPPED:20',
      'notice OTHER_KIND_SKIPPED:30',
      'notice OTHER_KIND_SKIPPED:53',
      'notice OTHER_KIND_SKIPPED:75',
      'notice OTHER_KIND_SKIPPED:97',
      'notice OTHER_KIND_SKIPPED:119',
      'notice OTHER_KIND_SKIPPED:141',
      'notice OTHER_KIND_SKIPPED:170',
      'notice OTHER_KIND_SKIPPED:199',
      'warning NO_HOST_DATA:16',
      'warning NO_HOST_DATA:41',
      'warning NO_HOST_DATA:64',
      'warning NO_HOST_DATA:86',
      'warning NO_HOST_DATA:108',
      'warning NO_HOST_DATA:130',
      'warning INVENTORY_SKIPPED:189',
      'warning INVENTORY_SKIPPED:218',
    ],
  },
  // A consumerRef with name and namespace only
  'demo-hosts.d7d8577.yaml': {
    hosts: [
      'demo-discovered not online (spec.online is not true); no status (metal3 has not reported on it)',
      'demo-externally-provisioned consumed by openshift-machine-api/demo-ostest-worker (spec.consumerRef); not online (spec.online is not true); no status (metal3 has not reported on it)',
      'demo-inspecting no status (metal3 has not reported on it)',
      'demo-provisioning no status (metal3 has not reported on it)',
      'demo-ready no status (metal3 has not reported on it)',
      'demo-registering no status (metal3 has not reported on it)',
      'demo-registration-error no status (metal3 has not reported on it)',
    ],
    problems: [
      'notice OTHER_KIND_SKIPPED:5',
      'notice OTHER_KIND_SKIPPED:20',
      'notice OTHER_KIND_SKIPPED:30',
      'notice OTHER_KIND_SKIPPED:53',
      'notice OTHER_KIND_SKIPPED:75',
      'notice OTHER_KIND_SKIPPED:97',
      'notice OTHER_KIND_SKIPPED:119',
      'notice OTHER_KIND_SKIPPED:141',
      'notice OTHER_KIND_SKIPPED:170',
      'notice OTHER_KIND_SKIPPED:199',
      'warning NO_HOST_DATA:16',
      'warning NO_HOST_DATA:41',
      'warning NO_HOST_DATA:64',
      'warning NO_HOST_DATA:86',
      'warning NO_HOST_DATA:108',
      'warning NO_HOST_DATA:130',
      'warning INVENTORY_SKIPPED:189',
      'warning INVENTORY_SKIPPED:218',
    ],
  },
  // Two Secrets, one host without MAC or hardware
  'example-host-bad-credentials.c495a51.yaml': {
    hosts: ['example-baremetalhost no status (metal3 has not reported on it)'],
    problems: [
      'notice OTHER_KIND_SKIPPED:3',
      'notice OTHER_KIND_SKIPPED:13',
      'warning NO_HOST_DATA:25',
    ],
  },
  'example-host-ironic-ansible-extra.7c891b4.yaml': {
    hosts: ['example-baremetalhost no status (metal3 has not reported on it)'],
    problems: ['notice OTHER_KIND_SKIPPED:3', 'warning NO_HOST_DATA:15'],
  },
  'example-host.5551c86.yaml': {
    hosts: ['example-baremetalhost no status (metal3 has not reported on it)'],
    problems: ['notice OTHER_KIND_SKIPPED:3', 'warning NO_HOST_DATA:15'],
  },
  'metal3.io_v1alpha1_baremetalhost.0b3f58c.yaml': {
    hosts: [
      'baremetalhost-sample not online (spec.online is not true); no status (metal3 has not reported on it)',
    ],
    problems: ['warning NO_HOST_DATA:4'],
  },
  'metal3.io_v1alpha1_baremetalhost.cce2f85.yaml': {
    hosts: [
      'baremetalhost-sample not online (spec.online is not true); no status (metal3 has not reported on it)',
    ],
    problems: ['warning NO_HOST_DATA:4'],
  },
  'test_bmh.f6916a8.yaml': {
    hosts: ['worker-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'worker-0.d1b28cf.yaml': {
    hosts: ['worker-0 no status (metal3 has not reported on it)'],
    problems: ['notice OTHER_KIND_SKIPPED:3'],
  },
  // `kubectl get` output: externally provisioned, consumed by an OpenShift Machine, and a NIC
  // reported as 00:00:00:00:00:00.
  'docs-blocks/bmo__docs__api.L402-494.yaml': {
    hosts: [
      'bmo-project/bmo-controlplane-0 consumed by Machine bmo-project/bmo-controlplane-0 (spec.consumerRef)',
    ],
    problems: [],
  },
  'docs-blocks/design__baremetal-operator__bios-config.L54-67.yaml': {
    hosts: ['bm0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  // HardwareData with its (null) fields directly under spec
  'docs-blocks/design__baremetal-operator__hardwaredata_crd.L174-194.yaml': {
    hosts: [],
    problems: ['warning NO_HOST_DATA:15'],
  },
  'docs-blocks/design__baremetal-operator__node-specific-kernel-args.L68-79.yaml': {
    hosts: ['bm0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/design__cluster-api-provider-metal3__allow_disabling_node_disk_cleaning.L126-131.yaml':
    {
      hosts: [
        'worker-0 not online (spec.online is not true); no status (metal3 has not reported on it)',
      ],
      problems: ['warning NO_HOST_DATA:4'],
    },
  // An extract without metadata.name
  'docs-blocks/design__cluster-api-provider-metal3__node_reuse.L119-123.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:3'],
  },
  // Extracts without apiVersion
  'docs-blocks/design__fd-support-kcp.L105-139.yaml': {
    hosts: [],
    problems: [
      'warning INVENTORY_SKIPPED:1',
      'warning INVENTORY_SKIPPED:13',
      'warning INVENTORY_SKIPPED:25',
    ],
  },
  'docs-blocks/design__ip-address-manager__ip-address-management-for-networkdata.L441-448.yaml': {
    hosts: ['worker-1 no status (metal3 has not reported on it)'],
    problems: ['warning NO_HOST_DATA:4'],
  },
  'docs-blocks/design__ironic-standalone-networking-service.L150-171.yaml': {
    hosts: [
      'some-host-namespace/worker-1 not online (spec.online is not true); no status (metal3 has not reported on it)',
    ],
    problems: ['warning NO_HOST_DATA:4'],
  },
  // An extract without apiVersion
  'docs-blocks/design__sync-labels-bmh-to-node.L308-314.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:1'],
  },
  // Extracts without apiVersion
  'docs-blocks/design__sync-labels-bmh-to-node.L344-358.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:1', 'warning INVENTORY_SKIPPED:6'],
  },
  // Extracts without apiVersion (a BareMetalHost and a Node)
  'docs-blocks/design__sync-labels-bmh-to-node.L56-69.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:1', 'warning INVENTORY_SKIPPED:9'],
  },
  'docs-blocks/docs__user-guide__src__bmo__advanced_instance_customization.L46-57.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__automated_cleaning.L19-29.yaml': {
    hosts: ['example-host no status (metal3 has not reported on it)'],
    problems: [],
  },
  // `...` under spec: not YAML
  'docs-blocks/docs__user-guide__src__bmo__automatic_secure_boot.L30-38.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:9'],
  },
  'docs-blocks/docs__user-guide__src__bmo__detached_annotation.L30-43.yaml': {
    hosts: ['example no status (metal3 has not reported on it)'],
    problems: [],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__external_inspection.L19-29.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:10'],
  },
  'docs-blocks/docs__user-guide__src__bmo__externally_provisioned.L9-20.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__inspect_annotation.L18-26.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:8'],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__inspect_annotation.L35-42.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:7'],
  },
  'docs-blocks/docs__user-guide__src__bmo__instance_customization.L208-223.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__instance_customization.L62-78.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__introduction.L40-50.yaml': {
    hosts: ['metal3/node-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  // Status with hardware only
  'docs-blocks/docs__user-guide__src__bmo__introduction.L78-114.yaml': {
    hosts: ['metal3/node-0 power state not reported (status.poweredOn); no provisioning state'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__live-iso.L22-34.yaml': {
    hosts: ['live-iso-booted-node no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__provisioning.L119-135.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__provisioning.L29-43.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__provisioning.L56-75.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  'docs-blocks/docs__user-guide__src__bmo__provisioning.L95-111.yaml': {
    hosts: ['my-cluster/host-0 no status (metal3 has not reported on it)'],
    problems: [],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__reboot_annotation.L49-56.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:7'],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__reboot_annotation.L62-69.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:7'],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__reboot_annotation.L77-84.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:7'],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__reboot_annotation.L91-98.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:7'],
  },
  // `kubectl get` output of a host being inspected
  'docs-blocks/docs__user-guide__src__bmo__status_annotation.L39-87.yaml': {
    hosts: [
      "metal3/node-0 powered off; provisioning state 'inspecting' (needs provisioned or externally provisioned)",
    ],
    problems: [],
  },
  // `spec: ...` (a placeholder)
  'docs-blocks/docs__user-guide__src__bmo__status_annotation.L91-100.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:9'],
  },
  'docs-blocks/docs__user-guide__src__capm3__annotation_based_ippool.L82-89.yaml': {
    hosts: ['worker-1 no status (metal3 has not reported on it)'],
    problems: ['warning NO_HOST_DATA:4'],
  },
  // Starts with the shell prompt line '$ kubectl get ...': not YAML (read without it below)
  'docs-blocks/docs__user-guide__src__developer_environment__tryit.L244-354.yaml': {
    hosts: [],
    problems: ['warning INVENTORY_SKIPPED:4'],
  },
  'docs-blocks/docs__user-guide__src__quick-start.L229-240.yaml': {
    hosts: ['bml-01 no status (metal3 has not reported on it)'],
    problems: [],
  },
};

async function readAsInventory(path: string, state: string): Promise<Observations> {
  return observe(
    { clusters: [], inventory: [] },
    { inventory: { kind: 'directory', dir: path }, leaseFiles: [], now: 0, stateDir: state },
  );
}

function outcome(o: Observations): Outcome {
  return {
    hosts: o.hosts.map(
      (h) =>
        `${h.namespace ? `${h.namespace}/` : ''}${h.name} ${h.eligible ? 'eligible' : (h.ineligibleReason ?? '')}`,
    ),
    problems: o.problems.map((p) => `${p.severity} ${p.code}:${p.line ?? '?'}`),
  };
}

describe('real metal3 files read as an inventory', function () {
  this.timeout(60_000);
  let state: string;
  before(async function () {
    if (!existsSync(METAL3)) {
      console.log(`    skipped: ${METAL3} is absent (real-world files are not in this checkout)`);
      this.skip();
    }
    state = await mkdtemp(join(tmpdir(), 'bpa-real-'));
  });
  after(async () => {
    if (state) await rm(state, { recursive: true, force: true });
  });

  it('the table covers every file there, and no file that is not', async () => {
    const whole = (await readdir(METAL3)).filter((f) => f.endsWith('.yaml'));
    const blocks = (await readdir(join(METAL3, 'docs-blocks'))).map((f) => `docs-blocks/${f}`);
    assert.deepEqual([...whole, ...blocks].sort(), Object.keys(EXPECTED).sort());
  });

  for (const [file, want] of Object.entries(EXPECTED)) {
    it(file, async () => {
      const o = await readAsInventory(join(METAL3, file), state);
      assert.deepEqual(outcome(o), want);
      for (const p of o.problems) {
        assert.equal(p.file, join(METAL3, file), 'problems name the file read');
        assert.ok(p.line !== undefined && p.column !== undefined, `${p.code} has a position`);
        assert.notEqual(p.severity, 'error', 'nothing in a real file stops the inventory');
      }
    });
  }

  it('no Secret value from the examples reaches any message', async () => {
    // The examples' Secret values, base64 and decoded (the names may say "password").
    const values = ['YWRtaW4=', 'MWYyZDFlMmU2N2Rm', 'cGFzc3dvcmQ=', '1f2d1e2e67df', 'admin'];
    for (const file of Object.keys(EXPECTED)) {
      const o = await readAsInventory(join(METAL3, file), state);
      for (const p of o.problems)
        for (const v of values) assert.ok(!p.message.includes(v), `${file}: ${p.message}`);
    }
  });

  it('docs/api.md: the consumed host, its unknown NIC, and the address bpa would use', async () => {
    const o = await readAsInventory(
      join(METAL3, 'docs-blocks/bmo__docs__api.L402-494.yaml'),
      state,
    );
    const [h] = o.hosts;
    assert.equal(h?.consumer, 'Machine bmo-project/bmo-controlplane-0');
    assert.equal(h?.bootMac, '98:03:9b:61:80:48');
    assert.deepEqual(
      h?.nics.map((n) => [n.mac, n.ips]),
      [['00:00:00:00:00:00', ['172.22.135.105']]],
    );
    assert.equal(h?.cpuCount, 40);
  });

  it('the developer-environment host without its shell prompt line: NICs, link-local addresses, state ready', async () => {
    const text = await readFile(
      join(METAL3, 'docs-blocks/docs__user-guide__src__developer_environment__tryit.L244-354.yaml'),
      'utf8',
    );
    const dir = await mkdtemp(join(tmpdir(), 'bpa-real-tryit-'));
    try {
      // The block starts with "$ kubectl get baremetalhost ..." and two empty lines.
      await writeFile(join(dir, 'node-0.yaml'), text.split('\n').slice(3).join('\n'));
      const o = await readAsInventory(dir, state);
      assert.deepEqual(outcome(o), {
        hosts: [
          "metal3/node-0 provisioning state 'ready' (needs provisioned or externally provisioned)",
        ],
        problems: [],
      });
      const [h] = o.hosts;
      assert.ok(h);
      assert.deepEqual(
        h.nics.map((n) => [n.name, n.ips]),
        [
          ['enp1s0', ['172.22.0.20', 'fe80::1863:f385:feab:381c%enp1s0']],
          ['enp2s0', ['192.168.111.20', 'fe80::521c:6a5b:f79:9a75%enp2s0']],
        ],
      );
      assert.equal(h.cpuCount, 2);
      assert.equal(h.ramMebibytes, 4096);
      assert.equal(h.sriov, false, 'virtio NICs');
      assert.deepEqual(resolveNodeIp(h, new Map()), {
        resolved: {
          ip: '172.22.0.20',
          source: 'inventory',
          mac: '00:ee:d0:b8:47:7d',
          origin: 'node-0.yaml',
        },
        skipped: [],
      });
      // Without its IPv4 addresses, the host has only zoned link-local ones: none is used.
      const v6only = {
        ...h,
        nics: h.nics.map((n) => ({ ...n, ips: n.ips.filter((ip) => ip.includes(':')) })),
      };
      const r = resolveNodeIp(v6only, new Map());
      assert.equal(r.resolved, undefined);
      assert.deepEqual(
        r.skipped.map((s) => s.ip),
        ['fe80::1863:f385:feab:381c%enp1s0', 'fe80::521c:6a5b:f79:9a75%enp2s0'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ICN bmh-bpa-test: MAC and hardware nested under spec by an indentation mistake', async function () {
    const file = join(REAL, 'icn', 'bmh-bpa-test.1ce7b47.yaml');
    if (!existsSync(file)) {
      console.log(`    skipped: ${file} is absent`);
      this.skip();
    }
    const o = await readAsInventory(file, state);
    assert.deepEqual(outcome(o), {
      hosts: ['bpa-test-bmh no status (metal3 has not reported on it)'],
      problems: ['warning NO_HOST_DATA:20'],
    });
    assert.match(
      o.problems[0]?.message ?? '',
      /spec\.userData\.bootMACAddress and spec\.status\.hardware look misplaced \(check the indentation/,
    );
  });
});
