/**
 * How bpa reads BareMetalHosts written by others (metal3, Cluster API, OpenShift, ICN): one
 * table per rule, each row a host as those tools write it and what bpa must make of it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { observe } from '../../../src/observe/index.js';
import { hostsFromObjects, type Metal3Object } from '../../../src/observe/inventory/hosts.js';
import type { Host } from '../../../src/observe/types.js';
import { planSite, type Plan } from '../../../src/plan/index.js';
import type { NodeSpec } from '../../../src/validate/model.js';
import type { Problem } from '../../../src/util/problem.js';
import { createRun } from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import { resolveConfig } from '../../../src/config/options.js';
import { silentLogger } from '../../../src/util/log.js';
import { applied, appliedFrom, cluster, node } from '../plan/plan-fixture.js';
import { removeSite, writeSite } from '../validate/site-fixture.js';

function bmh(
  name: string,
  over: { spec?: Record<string, unknown>; status?: Record<string, unknown> } = {},
  mac = '52:54:00:aa:00:01',
): Metal3Object {
  return {
    kind: 'BareMetalHost',
    metadata: { name, namespace: 'metal3' },
    spec: { online: true, bootMACAddress: mac, ...over.spec },
    status: {
      poweredOn: true,
      operationalStatus: 'OK',
      provisioning: { state: 'provisioned' },
      hardware: {
        cpu: { count: 8 },
        ramMebibytes: 16384,
        nics: [{ name: 'eno1', mac, ip: '198.18.0.5' }],
      },
      ...over.status,
    },
  };
}

interface Read {
  hosts: Host[];
  /** Problems with `file` relative to the directory read, `line` filled in. */
  problems: Array<Pick<Problem, 'code' | 'severity' | 'file' | 'line' | 'message'>>;
}

const SITE_DOCUMENT = `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata: {name: lab}
spec: {}
`;

/**
 * Reads files as bpa reads an inventory: as the site (`bpa validate`, then the embedded
 * inventory) or as `--inventory DIR` (the observe stage).
 */
async function readInventory(
  files: Record<string, string>,
  as: 'site' | 'directory',
): Promise<Read> {
  // As the site, the hosts come with a Site document: a directory of hosts alone is no site
  // (SITE_NO_CLUSTERS, a wrong --path).
  const dir = await writeSite(as === 'site' ? { ...files, 'bpa-site.yaml': SITE_DOCUMENT } : files);
  const state = await mkdtemp(join(tmpdir(), 'bpa-state-'));
  try {
    const rel = (p: Problem): Read['problems'][number] => ({
      code: p.code,
      severity: p.severity,
      file: p.file === undefined ? undefined : relative(dir, resolve(dir, p.file)),
      line: p.line,
      message: p.message,
    });
    if (as === 'site') {
      const v = createRun({
        site: { kind: 'path', path: dir },
        configFor: (site) => resolveConfig([], {}, {}, site),
        env: {},
        log: silentLogger(),
      });
      await runSteps(v, 'validate');
      if (!v.model) return { hosts: [], problems: v.validation.map(rel) };
      const o = await observe(v.model, {
        inventory: { kind: 'embedded', root: dir },
        leaseFiles: [],
        now: 0,
        stateDir: state,
      });
      return { hosts: o.hosts, problems: [...v.validation, ...o.problems].map(rel) };
    }
    const o = await observe(
      { clusters: [], inventory: [] },
      { inventory: { kind: 'directory', dir }, leaseFiles: [], now: 0, stateDir: state },
    );
    return { hosts: o.hosts, problems: o.problems.map(rel) };
  } finally {
    await removeSite(dir);
    await rm(state, { recursive: true, force: true });
  }
}

const codes = (r: Read): string[] => r.problems.map((p) => `${p.code}@${p.file}:${p.line}`);

function plan(nodes: NodeSpec[], hosts: Host[], prior: Array<[string, string]> = []): Plan {
  return planSite({
    model: { clusters: [cluster('c', nodes)], inventory: [] },
    hosts,
    leases: new Map(),
    applied: appliedFrom(
      prior.length
        ? [
            applied(
              'c',
              prior.map(([n, h]) => ({
                name: n,
                roles: ['master'],
                host: h,
                mac: '52:54:00:aa:00:01',
                ip: '198.18.0.5',
              })),
            ),
          ]
        : [],
    ),
    prune: false,
    flavour: 'kud',
  });
}

describe('1. spec.consumerRef: a host held by another controller is never placed', () => {
  const consumers: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'an OpenShift Machine (metal3 docs/api.md)',
      {
        apiVersion: 'machine.openshift.io/v1beta1',
        kind: 'Machine',
        name: 'bmo-controlplane-0',
        namespace: 'bmo-project',
      },
      /consumed by Machine bmo-project\/bmo-controlplane-0 \(spec\.consumerRef\)/,
    ],
    [
      'a Cluster API Metal3Machine',
      {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'Metal3Machine',
        name: 'test1-controlplane-abcde',
        namespace: 'metal3',
      },
      /consumed by Metal3Machine metal3\/test1-controlplane-abcde/,
    ],
    [
      'a reference with name and namespace only (metal3 examples/demo-hosts.yaml)',
      { name: 'demo-ostest-worker', namespace: 'openshift-machine-api' },
      /consumed by openshift-machine-api\/demo-ostest-worker/,
    ],
    ['an empty reference (metal3 treats it as consumed)', {}, /consumed \(spec\.consumerRef\)/],
  ];
  for (const [name, ref, reason] of consumers) {
    it(`${name}: not eligible, and the plan names the host and its holder`, () => {
      const [h] = hostsFromObjects([bmh('node-1', { spec: { consumerRef: ref } })]);
      assert.ok(h);
      assert.equal(h.eligible, false);
      assert.match(h.ineligibleReason ?? '', reason);
      const byMac = plan([node('m1', ['master'], { mac: '52:54:00:aa:00:01' })], [h]);
      assert.match(byMac.problems[0]?.message ?? '', /host metal3\/node-1 .*is not eligible/);
      assert.match(byMac.problems[0]?.message ?? '', reason);
      const byResources = plan([node('m1', ['master'], { cpu: 2 })], [h]);
      assert.match(byResources.problems[0]?.message ?? '', /1 host ineligible: metal3\/node-1/);
      assert.match(byResources.problems[0]?.message ?? '', reason);
    });
  }

  it('a node applied on a host that another controller has since claimed leaves it', () => {
    const [h] = hostsFromObjects([
      bmh('node-1', { spec: { consumerRef: { kind: 'Machine', name: 'w', namespace: 'x' } } }),
    ]);
    assert.ok(h);
    const p = plan([node('m1', ['master'])], [h], [['m1', 'metal3/node-1']]);
    assert.match(
      p.problems[0]?.message ?? '',
      /was on metal3\/node-1 \(not eligible: consumed by Machine x\/w/,
    );
  });

  it('no consumerRef: eligible as before', () => {
    const [h] = hostsFromObjects([bmh('node-1')]);
    assert.equal(h?.eligible, true);
  });
});

describe('MACs as inventories write them: any case, colons or hyphens', () => {
  it('a node pinned by a lowercase MAC gets the host whose inventory writes it otherwise', () => {
    const hosts = hostsFromObjects([
      bmh('h1', {}, '0A:1B:2C:3D:4E:5F'),
      bmh('h2', {
        spec: { bootMACAddress: undefined },
        status: {
          hardware: { nics: [{ name: 'eno1', mac: '0A-1B-2C-3D-4E-60', ip: '198.18.0.6' }] },
        },
      }),
    ]);
    assert.deepEqual(
      hosts.map((h) => h.macs),
      [['0a:1b:2c:3d:4e:5f'], ['0a:1b:2c:3d:4e:60']],
    );
    const p = plan(
      [
        node('m', ['master'], { mac: '0a:1b:2c:3d:4e:5f' }),
        node('w', ['master'], { mac: '0a:1b:2c:3d:4e:60' }),
      ],
      hosts,
    );
    assert.deepEqual(p.problems, []);
    assert.deepEqual(
      p.clusters[0]?.nodes.map((n) => [n.name, n.host]),
      [
        ['m', 'metal3/h1'],
        ['w', 'metal3/h2'],
      ],
    );
  });
});

describe('2. a NIC reported as 00:00:00:00:00:00 is not an identity', () => {
  const unknownNic = (mac: string, ip = ''): Metal3Object =>
    bmh(
      `host-${mac.slice(-2)}`,
      {
        status: {
          hardware: {
            cpu: { count: 8 },
            ramMebibytes: 16384,
            nics: [
              { name: 'eno1', mac, ip: `198.18.0.${Number.parseInt(mac.slice(-2), 16)}` },
              { name: 'eno2', mac: '00:00:00:00:00:00', model: 'unknown', ip },
            ],
          },
        },
      },
      mac,
    );
  const cases: Array<[string, Metal3Object[], string, string | RegExp]> = [
    [
      'pinning by a real boot MAC finds its host among hosts with unknown NICs',
      [unknownNic('52:54:00:aa:00:01'), unknownNic('52:54:00:aa:00:02')],
      '52:54:00:aa:00:02',
      'metal3/host-02',
    ],
    [
      'pinning by the null MAC finds no host',
      [unknownNic('52:54:00:aa:00:01'), unknownNic('52:54:00:aa:00:02')],
      '00:00:00:00:00:00',
      /no host has mac 00:00:00:00:00:00/,
    ],
  ];
  for (const [name, objects, mac, expected] of cases) {
    it(name, () => {
      const hosts = hostsFromObjects(objects);
      for (const h of hosts) assert.ok(!h.macs.includes('00:00:00:00:00:00'));
      const p = plan([node('m1', ['master'], { mac })], hosts);
      if (typeof expected === 'string') {
        assert.deepEqual(p.problems, []);
        assert.equal(p.clusters[0]?.nodes[0]?.host, expected);
      } else {
        assert.match(p.problems[0]?.message ?? '', expected);
      }
    });
  }

  it('two unknown NICs of one host stay two NICs, and their addresses stay usable', () => {
    const [h] = hostsFromObjects([
      bmh('x', {
        spec: { bootMACAddress: undefined },
        status: {
          hardware: {
            nics: [
              { name: 'eno1', mac: '00:00:00:00:00:00', ip: '172.22.135.105' },
              { name: 'eno2', mac: '00:00:00:00:00:00', ip: '172.22.136.9' },
            ],
          },
        },
      }),
    ]);
    assert.deepEqual(
      h?.nics.map((n) => [n.name, n.ips]),
      [
        ['eno1', ['172.22.135.105']],
        ['eno2', ['172.22.136.9']],
      ],
    );
    assert.deepEqual((h as Host).macs, []);
  });
});

describe('2. (cont.) hosts that share only the null MAC are read, in the site and in a directory', () => {
  const host = (name: string, mac: string): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: ${name}, namespace: metal3}
spec: {online: true, bootMACAddress: "${mac}"}
status:
  hardware:
    nics:
      - {name: eno1, mac: "${mac}"}
      - {name: eno2, mac: "00:00:00:00:00:00", model: unknown}
`;
  for (const as of ['site', 'directory'] as const) {
    it(`no DUPLICATE_HOST_MAC, both hosts kept (${as === 'site' ? 'in the site' : '--inventory DIR'})`, async () => {
      const r = await readInventory(
        {
          'hosts.yaml': `${host('node-1', '52:54:00:aa:00:01')}---\n${host('node-2', '52:54:00:aa:00:02')}`,
        },
        as,
      );
      assert.deepEqual(codes(r), []);
      assert.deepEqual(
        r.hosts.map((h) => [h.name, h.macs]),
        [
          ['node-1', ['52:54:00:aa:00:01']],
          ['node-2', ['52:54:00:aa:00:02']],
        ],
      );
    });
  }
});

describe('2. (cont.) multicast, broadcast and null boot MACs of hosts identify no host', () => {
  // Two hosts as observed: each with a bond reporting the broadcast MAC; the first with a
  // multicast boot MAC, the second with the null one (no word: metal3's "unknown").
  const host = (name: string, own: string, boot: string): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: ${name}, namespace: metal3}
spec: {online: true, bootMACAddress: "${boot}"}
status:
  hardware:
    nics:
      - {name: eno1, mac: "${own}"}
      - {name: bond0, mac: "ff:ff:ff:ff:ff:ff"}
      - {name: eno2, mac: "00:00:00:00:00:00"}
`;
  const files = {
    'hosts.yaml': `${host('node-1', '52:54:00:aa:00:01', '01:00:5e:00:00:01')}---\n${host('node-2', '52:54:00:aa:00:02', '00:00:00:00:00:00')}`,
  };
  const identities = [
    ['node-1', ['52:54:00:aa:00:01']],
    ['node-2', ['52:54:00:aa:00:02']],
  ];

  it('in the site: a warning at each such MAC with file and line, no DUPLICATE_HOST_MAC', async () => {
    const r = await readInventory(files, 'site');
    assert.deepEqual(codes(r), [
      'UNUSABLE_HOST_MAC@hosts.yaml:4',
      'UNUSABLE_HOST_MAC@hosts.yaml:9',
      'UNUSABLE_HOST_MAC@hosts.yaml:20',
    ]);
    assert.ok(r.problems.every((p) => p.severity === 'warning'));
    assert.match(
      r.problems[0]?.message ?? '',
      /MAC 01:00:5e:00:00:01 of BareMetalHost "metal3\/node-1" is a multicast or broadcast/,
    );
    assert.match(
      r.problems[2]?.message ?? '',
      /MAC ff:ff:ff:ff:ff:ff of BareMetalHost "metal3\/node-2" is a multicast or broadcast/,
    );
    assert.deepEqual(
      r.hosts.map((h) => [h.name, h.macs]),
      identities,
    );
  });

  it('in --inventory DIR: both hosts kept, no word, the same identities', async () => {
    const r = await readInventory(files, 'directory');
    assert.deepEqual(codes(r), []);
    assert.deepEqual(
      r.hosts.map((h) => [h.name, h.macs]),
      identities,
    );
  });

  it('a host observed with only a group boot MAC is matched by resources, not by that MAC', () => {
    const [h] = hostsFromObjects([bmh('x', {}, '33:33:00:00:00:01')]);
    assert.deepEqual((h as Host).macs, []);
  });
});

describe('6. status.errorType alone makes a host ineligible', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp | undefined]> = [
    [
      'errorType with an empty errorMessage',
      { errorType: 'provisioning error', errorMessage: '' },
      /error: provisioning error/,
    ],
    [
      'errorType and errorMessage',
      { errorType: 'power management error', errorMessage: 'BMC unreachable' },
      /error: power management error: BMC unreachable/,
    ],
    [
      'errorMessage alone (as before)',
      { errorMessage: 'BMC unreachable' },
      /error: BMC unreachable/,
    ],
    ['an empty errorType', { errorType: '', errorMessage: '' }, undefined],
  ];
  for (const [name, status, reason] of cases) {
    it(name, () => {
      const [h] = hostsFromObjects([bmh('x', { status })]);
      if (reason === undefined) {
        assert.equal(h?.eligible, true, h?.ineligibleReason);
      } else {
        assert.equal(h?.eligible, false);
        assert.match(h?.ineligibleReason ?? '', reason);
      }
    });
  }
});

describe('6. status.hardware.storage: documented as what it is (compared with hardware.storage terms)', () => {
  const doc = (): string =>
    readFileSync(new URL('../../../docs/site-format.md', import.meta.url), 'utf8');
  /** The "how bpa uses it" cell of each row of the BareMetalHost field table, by field cell. */
  const rows = (): Map<string, string> => {
    const text = doc();
    const body = text.slice(text.indexOf('| field', text.indexOf('### BareMetalHost')));
    const lines = body.slice(0, body.indexOf('\n\n')).split('\n').slice(2);
    return new Map(
      lines.map((l) => {
        const [field = '', use = ''] = l.replace(/^\| | \|$/g, '').split(' | ');
        return [field.trim(), use.trim()];
      }),
    );
  };
  const cases: Array<[string, RegExp]> = [
    ['`status.hardware.storage[]`', /^compared with a node's `hardware\.storage`/],
    ['`status.hardware.cpu.count`', /compared with a node's `cpu`/],
    ['`status.hardware.ramMebibytes`', /compared with a node's `memory`/],
    ['`spec.consumerRef`', /never placed/],
    ['`status.errorMessage`, `status.errorType`', /either one non-empty/],
    ['`status.hardware.nics[].mac`', /00:00:00:00:00:00/],
  ];
  for (const [field, use] of cases) {
    it(`the field table says how bpa uses ${field}`, () => {
      assert.match(rows().get(field) ?? '(no row)', use);
    });
  }
  it('every schema description that mentions storage says what compares it, none that it is ignored', () => {
    for (const file of [
      'common.schema.json',
      'baremetalhost.schema.json',
      'hardwaredata.schema.json',
    ]) {
      const text = readFileSync(new URL(`../../../schemas/${file}`, import.meta.url), 'utf8');
      for (const [, description = ''] of text.matchAll(/"description": "((?:[^"\\]|\\.)*)"/g)) {
        if (/\bstorage\b/i.test(description)) {
          assert.match(description, /hardware\.storage/, `${file}: ${description}`);
          assert.doesNotMatch(description, /ignored/, `${file}: ${description}`);
        }
      }
    }
  });
});

describe('eligibility of hosts as written by hand (no status, or part of one)', () => {
  const cases: Array<[string, Metal3Object, string]> = [
    [
      'no status at all (metal3 examples)',
      { kind: 'BareMetalHost', metadata: { name: 'x' }, spec: { online: true } },
      'no status (metal3 has not reported on it)',
    ],
    [
      'an empty status',
      { kind: 'BareMetalHost', metadata: { name: 'x' }, spec: { online: true }, status: {} },
      'no status (metal3 has not reported on it)',
    ],
    [
      'hardware but no power state (metal3 user guide)',
      {
        kind: 'BareMetalHost',
        metadata: { name: 'x' },
        spec: { online: true },
        status: { hardware: { cpu: { count: 2 } } },
      },
      'power state not reported (status.poweredOn); no provisioning state',
    ],
  ];
  for (const [name, object, reason] of cases) {
    it(name, () => {
      const [h] = hostsFromObjects([object]);
      assert.equal(h?.eligible, false);
      assert.equal(h?.ineligibleReason, reason);
    });
  }
});

describe('7. SR-IOV from NIC models: the PFs of the families the docs name, from one table', () => {
  const sriovOf = (model: string, mac = '52:54:00:aa:00:09'): boolean | undefined =>
    hostsFromObjects([
      bmh('x', {
        status: { hardware: { nics: [{ name: 'ens1f0', mac, model }] } },
      }),
    ])[0]?.sriov;
  const cases: Array<[string, string, boolean]> = [
    ['Intel E810-C SFP', '0x8086 0x1593', true],
    ['Intel E810-C QSFP', '0x8086 0x1592', true],
    ['Intel E810-XXV SFP', '0x8086 0x159b', true],
    ['Intel X722 10GBASE-T (ICN bmh-bpa-test)', '0x8086 0x37d2', true],
    ['Intel X710 SFP+ (ICN bmh-bpa-test)', '0x8086 0x1572', true],
    ['Intel X710 backplane', '0x8086 0x1581', true],
    ['Intel XL710 QSFP+', '0x8086 0x1583', true],
    ['Intel XXV710 SFP28', '0x8086 0x158b', true],
    ['Intel 82599ES SFP+', '0x8086 0x10fb', true],
    ['Intel X540-AT2', '0x8086 0x1528', true],
    ['Intel X550T', '0x8086 0x1563', true],
    ['Mellanox ConnectX-4', '0x15b3 0x1013', true],
    ['Mellanox ConnectX-4 Lx', '0x15b3 0x1015', true],
    ['Mellanox ConnectX-5', '0x15b3 0x1017', true],
    ['Mellanox ConnectX-6 Dx', '0x15b3 0x101d', true],
    ['Mellanox ConnectX-6 Lx', '0x15b3 0x101f', true],
    ['upper case and extra spaces', '0X8086   0X1593', true],
    ['lspci form', '8086:1593', true],
    ['an X710 virtual function', '0x8086 0x154c', false],
    ['an adaptive virtual function (iavf)', '0x8086 0x1889', false],
    ['a ConnectX-4 Lx virtual function', '0x15b3 0x1016', false],
    ['virtio (metal3 dev-env)', '0x1af4 0x0001', false],
    ['Intel I350 (no SR-IOV claimed)', '0x8086 0x1521', false],
    ['unknown (metal3 docs/api.md)', 'unknown', false],
    ['Intel device id under another vendor', '0x15b3 0x1593', false],
  ];
  for (const [name, model, want] of cases) {
    it(`${name}: ${model} → sriov ${want}`, () => assert.equal(sriovOf(model), want));
  }

  it('docs/site-format.md lists exactly the table in code', async () => {
    const { readFileSync } = await import('node:fs');
    const { SRIOV_NIC_FAMILIES } = await import('../../../src/observe/inventory/sriov.js');
    const doc = readFileSync(new URL('../../../docs/site-format.md', import.meta.url), 'utf8');
    const rows = [
      ...doc.matchAll(/^\| (Intel|Mellanox)([^|]*)\| `(0x[0-9a-f]{4})` +\| (.*) \|$/gm),
    ];
    const documented = rows.map((m) => ({
      family: `${m[1]}${m[2]}`.trim(),
      vendor: m[3],
      devices: (m[4] ?? '').split(',').map((d) => d.trim().replace(/`/g, '')),
    }));
    assert.deepEqual(
      documented,
      SRIOV_NIC_FAMILIES.map((f) => ({ ...f, devices: [...f.devices] })),
    );
  });
});

describe('9. node addresses: never link-local without a zone, loopback, 0.0.0.0 or multicast', () => {
  const withIps = (...ips: string[]): Host => {
    const [h] = hostsFromObjects([
      bmh('x', {
        status: {
          hardware: {
            nics: ips.map((ip) => ({ name: 'enp1s0', mac: '52:54:00:aa:00:01', ip })),
          },
        },
      }),
    ]);
    return h as Host;
  };
  const cases: Array<[string, string[], string | undefined, RegExp | undefined]> = [
    ['a global IPv4 address', ['198.18.0.5'], '198.18.0.5', undefined],
    ['a global IPv6 address', ['2001:db8::5'], '2001:db8::5', undefined],
    [
      'zoned link-local (as metal3 reports it) before a global IPv6',
      ['fe80::1863:f385:feab:381c%enp1s0', '2001:db8::5'],
      '2001:db8::5',
      /fe80::1863:f385:feab:381c%enp1s0 \(inventory: link-local with a zone: reachable only through the host's own enp1s0\)/,
    ],
    [
      'link-local without a zone',
      ['fe80::1863:f385:feab:381c'],
      undefined,
      /fe80::1863:f385:feab:381c \(inventory: link-local without a zone/,
    ],
    ['IPv4 loopback', ['127.0.0.1'], undefined, /127\.0\.0\.1 \(inventory: loopback\)/],
    ['IPv6 loopback', ['::1'], undefined, /::1 \(inventory: loopback\)/],
    ['IPv4-mapped loopback', ['::ffff:127.0.0.1'], undefined, /loopback/],
    ['0.0.0.0', ['0.0.0.0'], undefined, /0\.0\.0\.0 \(inventory: unspecified\)/],
    ['::', ['::'], undefined, /:: \(inventory: unspecified\)/],
    ['IPv4 multicast', ['224.0.0.251'], undefined, /multicast/],
    ['IPv6 multicast', ['ff02::1'], undefined, /multicast/],
    ['IPv4 link-local', ['169.254.10.1'], undefined, /IPv4 link-local/],
    ['not an address', ['eth0'], undefined, /eth0 \(inventory: not an IP address\)/],
    ['an IPv4 address after a loopback one', ['127.0.0.1', '198.18.0.5'], '198.18.0.5', /loopback/],
  ];
  for (const [name, ips, want, note] of cases) {
    it(`${name}: ${want ?? 'no address'}`, () => {
      const p = plan([node('m1', ['master'])], [withIps(...ips)]);
      if (want === undefined) {
        assert.equal(p.problems[0]?.code, 'NO_IP');
        assert.match(p.problems[0]?.message ?? '', note as RegExp);
        return;
      }
      assert.deepEqual(p.problems, []);
      assert.equal(p.clusters[0]?.nodes[0]?.ip, want);
      const notes = p.clusters[0]?.notes ?? [];
      if (note) assert.match(notes.join('\n'), note);
      else assert.deepEqual(notes, []);
    });
  }

  it('a lease for 0.0.0.0 is passed over for the inventory address', () => {
    const h = withIps('198.18.0.5');
    const p = planSite({
      model: { clusters: [cluster('c', [node('m1', ['master'])])], inventory: [] },
      hosts: [h],
      leases: new Map([
        ['52:54:00:aa:00:01', { mac: '52:54:00:aa:00:01', ip: '0.0.0.0', origin: 'l:1' }],
      ]),
      applied: appliedFrom([]),
      prune: false,
      flavour: 'kud',
    });
    assert.equal(p.clusters[0]?.nodes[0]?.ip, '198.18.0.5');
    assert.match(p.clusters[0]?.notes.join('\n') ?? '', /0\.0\.0\.0 \(lease: unspecified\)/);
  });
});

describe('8. YAML merge keys (<<) are read as kubectl reads them', () => {
  const host = (body: string): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-1
  namespace: metal3
${body}`;
  const common = `x-ready: &ready
  poweredOn: true
  operationalStatus: OK
  provisioning: {state: provisioned}
x-hw: &hw
  hardware:
    cpu: {count: 32}
    ramMebibytes: 65536
    nics: [{name: eno1, mac: "52:54:00:aa:00:01", ip: 198.18.0.5}]
`;
  const cases: Array<[string, string, { cpu?: number; eligible?: boolean; error?: string }]> = [
    [
      'status merged from two anchors',
      `${common}spec: {online: true, bootMACAddress: "52:54:00:aa:00:01"}
status:
  <<: [*ready, *hw]
`,
      { cpu: 32, eligible: true },
    ],
    [
      'a key written beside the merge wins over the merged one',
      `${common}spec: {online: true, bootMACAddress: "52:54:00:aa:00:01"}
status:
  <<: [*ready, *hw]
  poweredOn: false
`,
      { cpu: 32, eligible: false },
    ],
    [
      'spec from an anchor in an earlier key',
      `x-spec: &spec {online: true, bootMACAddress: "52:54:00:aa:00:01"}
${common}spec:
  <<: *spec
status: {<<: [*ready, *hw]}
`,
      { cpu: 32, eligible: true },
    ],
    [
      'a merge of a scalar is an error at its line',
      `spec:
  online: true
  <<: 5
`,
      { error: 'hosts.yaml:8' },
    ],
  ];
  for (const as of ['site', 'directory'] as const) {
    for (const [name, body, want] of cases) {
      it(`${name} (${as === 'site' ? 'in the site' : '--inventory DIR'})`, async () => {
        const r = await readInventory({ 'hosts.yaml': host(body) }, as);
        if (want.error) {
          // In the site a YAML error is an error; in an inventory directory the file is left out.
          const code = as === 'site' ? 'YAML_SYNTAX' : 'INVENTORY_SKIPPED';
          assert.deepEqual(codes(r), [`${code}@${want.error}`]);
          assert.match(r.problems[0]?.message ?? '', /merge key \(<<\) takes a mapping/);
          return;
        }
        assert.deepEqual(codes(r), []);
        assert.equal(r.hosts[0]?.cpuCount, want.cpu);
        assert.equal(r.hosts[0]?.eligible, want.eligible, r.hosts[0]?.ineligibleReason);
      });
    }
  }
});

const BMH = (name: string, mac: string, extra = ''): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: ${name}
  namespace: metal3
spec:
  online: true
  bootMACAddress: "${mac}"
${extra}`;

const READY = `status:
  poweredOn: true
  operationalStatus: OK
  provisioning: {state: provisioned}
  hardware:
    cpu: {count: 8}
    ramMebibytes: 16384
`;

const SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: node-1-bmc-secret
type: Opaque
data:
  username: YWRtaW4=
  password: c2VjcmV0LXBhc3N3b3Jk
stringData:
  token: plain-text-token-value
`;

const kubectlList = (...hosts: string[]): string =>
  `apiVersion: v1\nitems:\n${hosts
    .map((h) =>
      h
        .split('\n')
        .filter(Boolean)
        .map((l, i) => (i === 0 ? `- ${l}` : `  ${l}`))
        .join('\n'),
    )
    .join('\n')}\nkind: List\nmetadata:\n  resourceVersion: ""\n`;

describe('3. files that carry other kinds beside the hosts', () => {
  const cases: Array<{
    name: string;
    files: Record<string, string>;
    site: string[];
    directory: string[];
    hosts: string[];
  }> = [
    {
      name: 'the BMC Secret next to the host (7 of the 12 metal3 example files)',
      files: { 'hosts.yaml': `${SECRET}---\n${BMH('node-1', '52:54:00:aa:00:01', READY)}` },
      site: ['SECRET_IN_SITE@hosts.yaml:6'],
      directory: ['OTHER_KIND_SKIPPED@hosts.yaml:2'],
      hosts: ['node-1'],
    },
    {
      name: 'a Machine, a ConfigMap and a Cluster API Cluster',
      files: {
        'hosts.yaml': [
          'apiVersion: machine.openshift.io/v1beta1\nkind: Machine\nmetadata: {name: m}\n',
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
          'apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: capi}\n',
          BMH('node-1', '52:54:00:aa:00:01', READY),
        ].join('---\n'),
      },
      site: [
        'OTHER_KIND_SKIPPED@hosts.yaml:2',
        'OTHER_KIND_SKIPPED@hosts.yaml:6',
        'OTHER_KIND_SKIPPED@hosts.yaml:10',
      ],
      directory: [
        'OTHER_KIND_SKIPPED@hosts.yaml:2',
        'OTHER_KIND_SKIPPED@hosts.yaml:6',
        'OTHER_KIND_SKIPPED@hosts.yaml:10',
      ],
      hosts: ['node-1'],
    },
    {
      name: 'kubectl get bmh -o yaml: a List',
      files: {
        'hosts.yaml': kubectlList(
          BMH('node-1', '52:54:00:aa:00:01', READY),
          BMH('node-2', '52:54:00:aa:00:02', READY),
        ),
      },
      site: [],
      directory: [],
      hosts: ['node-1', 'node-2'],
    },
    {
      name: 'the API list form: a BareMetalHostList whose items leave out kind',
      files: {
        'hosts.yaml': `apiVersion: metal3.io/v1alpha1
kind: BareMetalHostList
items:
  - metadata: {name: node-1, namespace: metal3}
    spec: {online: true, bootMACAddress: "52:54:00:aa:00:01"}
`,
      },
      site: [],
      directory: [],
      hosts: ['node-1'],
    },
    {
      name: 'a List holding a Secret and a host',
      files: {
        'hosts.yaml': kubectlList(SECRET, BMH('node-1', '52:54:00:aa:00:01', READY)),
      },
      site: ['SECRET_IN_SITE@hosts.yaml:8'],
      directory: ['OTHER_KIND_SKIPPED@hosts.yaml:4'],
      hosts: ['node-1'],
    },
    {
      name: 'a Provisioning in an inventory directory is not read from there',
      files: {
        'p.yaml':
          'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p}\nspec: {masters: [{m: {}}]}\n',
        'hosts.yaml': BMH('node-1', '52:54:00:aa:00:01', READY),
      },
      site: [],
      directory: ['OTHER_KIND_SKIPPED@p.yaml:2'],
      hosts: ['node-1'],
    },
  ];
  for (const c of cases) {
    for (const as of ['site', 'directory'] as const) {
      it(`${c.name} (${as === 'site' ? 'in the site' : '--inventory DIR'})`, async () => {
        const r = await readInventory(c.files, as);
        assert.deepEqual(codes(r), c[as]);
        assert.deepEqual(
          r.hosts.map((h) => h.name),
          c.hosts,
        );
      });
    }
  }

  it("a Secret's data never reaches output (validate text/json/github, plan text/json)", async () => {
    const { runCli } = await import('../validate/run-cli.js');
    const site = await writeSite({
      'p.yaml':
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p}\nspec:\n  masters:\n    - m1: {}\n',
      'inventory/hosts.yaml': `${SECRET}---\n${BMH('node-1', '52:54:00:aa:00:01', READY)}---\n${kubectlList(SECRET.replace('node-1-bmc-secret', 'other'))}`,
    });
    const inv = await writeSite({
      'hosts.yaml': `${SECRET}---\n${BMH('node-1', '52:54:00:aa:00:01', READY)}`,
    });
    const state = await mkdtemp(join(tmpdir(), 'bpa-state-'));
    try {
      const runs = [
        ['validate', site],
        ['validate', '--format', 'json', site],
        ['validate', '--format', 'github', site],
        ['plan', '--state', state, site],
        ['plan', '-o', 'json', '--state', state, site],
        ['plan', '-o', 'json', '--state', state, '--inventory', inv, site],
      ];
      for (const args of runs) {
        const r = await runCli(args);
        const out = r.stdout + r.stderr;
        assert.match(out, /node-1-bmc-secret/, `${args.join(' ')} names the Secret`);
        for (const secret of [
          'YWRtaW4=',
          'admin',
          'c2VjcmV0LXBhc3N3b3Jk',
          'secret-password',
          'plain-text-token-value',
        ]) {
          assert.ok(!out.includes(secret), `${args.join(' ')} printed ${secret}`);
        }
      }
    } finally {
      await removeSite(site);
      await removeSite(inv);
      await rm(state, { recursive: true, force: true });
    }
  });
});

describe('4. one bad document never empties an inventory directory', () => {
  const good = BMH('node-1', '52:54:00:aa:00:01', READY);
  const cases: Array<{
    name: string;
    files: Record<string, string>;
    problems: string[];
    hosts: string[];
  }> = [
    {
      name: 'a host with a malformed MAC beside a good one',
      files: { 'a.yaml': `${good}---\n${BMH('node-2', '52:54:00:aa:00:0g', READY)}` },
      problems: ['INVENTORY_SKIPPED@a.yaml:24'],
      hosts: ['node-1'],
    },
    {
      name: 'the same host name in two files',
      files: { 'a.yaml': good, 'b.yaml': BMH('node-1', '52:54:00:aa:00:02', READY) },
      problems: ['INVENTORY_SKIPPED@b.yaml:4'],
      hosts: ['node-1'],
    },
    {
      name: 'the same MAC on two hosts',
      files: { 'a.yaml': good, 'b.yaml': BMH('node-2', '52:54:00:aa:00:01', READY) },
      problems: ['INVENTORY_SKIPPED@b.yaml:8'],
      hosts: ['node-1'],
    },
    {
      name: 'a file that is not YAML',
      files: { 'a.yaml': good, 'b.yaml': 'kind: [BareMetalHost\n' },
      problems: ['INVENTORY_SKIPPED@b.yaml:2'],
      hosts: ['node-1'],
    },
    {
      name: "a document with no kind, and one of an unknown kind in bpa's group",
      files: {
        'a.yaml': good,
        'b.yaml':
          'metadata: {name: x}\n---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Clusterr\nmetadata: {name: y}\n',
      },
      problems: ['INVENTORY_SKIPPED@b.yaml:1', 'INVENTORY_SKIPPED@b.yaml:4'],
      hosts: ['node-1'],
    },
    {
      name: 'a host of the 2019 group metalkube.org',
      files: {
        'a.yaml': good,
        'b.yaml': BMH('node-2', '52:54:00:aa:00:02').replace('metal3.io', 'metalkube.org'),
      },
      problems: ['INVENTORY_SKIPPED@b.yaml:1'],
      hosts: ['node-1'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: reported with file and line, the rest used`, async () => {
      const r = await readInventory(c.files, 'directory');
      assert.deepEqual(codes(r), c.problems);
      for (const p of r.problems) assert.equal(p.severity, 'warning', p.message);
      assert.deepEqual(
        r.hosts.map((h) => h.name),
        c.hosts,
      );
    });
  }

  it('bpa plan --inventory DIR places nodes on the good hosts and says what it left out', async () => {
    const { runCli } = await import('../validate/run-cli.js');
    const site = await writeSite({
      'p.yaml':
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p}\nspec:\n  masters:\n    - m1: {cpu: 4}\n',
    });
    const inv = await writeSite({
      'a.yaml': BMH(
        'node-1',
        '52:54:00:aa:00:01',
        `${READY}    nics: [{name: eno1, mac: "52:54:00:aa:00:01", ip: 198.18.0.5}]\n`,
      ),
      'b.yaml': `${SECRET}---\n${BMH('node-1', '52:54:00:aa:00:02', READY)}`,
    });
    const state = await mkdtemp(join(tmpdir(), 'bpa-state-'));
    try {
      const r = await runCli(['plan', '-o', 'json', '--state', state, '--inventory', inv, site]);
      const out = JSON.parse(r.stdout) as {
        problems: Array<{ code: string; severity: string }>;
        clusters: Array<{ nodes: Array<{ name: string; host: string }> }>;
      };
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.deepEqual(
        out.clusters[0]?.nodes.map((n) => [n.name, n.host]),
        [['m1', 'metal3/node-1']],
      );
      assert.deepEqual(
        out.problems.map((p) => `${p.severity} ${p.code}`),
        ['notice OTHER_KIND_SKIPPED', 'warning INVENTORY_SKIPPED'],
      );
    } finally {
      await removeSite(site);
      await removeSite(inv);
      await rm(state, { recursive: true, force: true });
    }
  });
});

describe('4. (cont.) an empty inventory is named as such, not as hosts that do not qualify', () => {
  const cases: Array<[string, NodeSpec, RegExp]> = [
    [
      'a node placed by resources',
      node('m1', ['master'], { cpu: 2 }),
      /m1: needs cpu>=2; the inventory holds no BareMetalHost/,
    ],
    [
      'a node pinned by MAC',
      node('m1', ['master'], { mac: '52:54:00:aa:00:01' }),
      /m1: no host has mac 52:54:00:aa:00:01 \(the inventory holds no BareMetalHost/,
    ],
  ];
  for (const [name, spec, message] of cases) {
    it(name, () => {
      const p = plan([spec], []);
      assert.match(p.problems[0]?.message ?? '', message);
    });
  }
});

describe('5. a BareMetalHost bpa can read no MAC and no hardware from gets a warning', () => {
  const cases: Array<[string, string, string[], RegExp?]> = [
    [
      'MAC and status indented under spec.userData (ICN bmh-bpa-test, shortened)',
      `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: bpa-test-bmh
spec:
  online: true
  userData:
    name: demo-user-data
    bootMACAddress: "3c:fd:fe:9c:88:63"
  status:
    hardware:
      cpu: {count: 72}
`,
      ['NO_HOST_DATA@hosts.yaml:9'],
      /spec\.userData\.bootMACAddress and spec\.status\.hardware look misplaced/,
    ],
    [
      'nothing at all (metal3 examples/example-host.yaml)',
      'apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: example\nspec:\n  online: true\n',
      ['NO_HOST_DATA@hosts.yaml:4'],
      /neither pinned by MAC nor matched by resources/,
    ],
    ['a boot MAC only', BMH('node-1', '52:54:00:aa:00:01'), []],
    [
      'hardware only',
      'apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: x}\nstatus: {hardware: {cpu: {count: 4}}}\n',
      [],
    ],
    [
      'NICs from its HardwareData',
      'apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: x}\n---\napiVersion: metal3.io/v1alpha1\nkind: HardwareData\nmetadata: {name: x}\nspec: {hardware: {nics: [{name: eno1, mac: "52:54:00:aa:00:01"}]}}\n',
      [],
    ],
    ['only the null MAC', BMH('node-1', '00:00:00:00:00:00'), ['NO_HOST_DATA@hosts.yaml:4']],
    [
      'a HardwareData whose fields are directly under spec (metal3 design doc)',
      `${BMH('node-1', '52:54:00:aa:00:01')}---\napiVersion: metal3.io/v1alpha1\nkind: HardwareData\nmetadata: {name: node-1, namespace: metal3}\nspec:\n  cpu:\n  nics:\n`,
      ['NO_HOST_DATA@hosts.yaml:14'],
      /spec\.cpu, spec\.nics are directly under spec \(metal3 writes them under spec\.hardware\)/,
    ],
  ];
  for (const [name, text, want, message] of cases) {
    for (const as of ['site', 'directory'] as const) {
      it(`${name} (${as === 'site' ? 'in the site' : '--inventory DIR'})`, async () => {
        const r = await readInventory({ 'hosts.yaml': text }, as);
        assert.deepEqual(codes(r), want);
        for (const p of r.problems) assert.equal(p.severity, 'warning');
        if (message) assert.match(r.problems[0]?.message ?? '', message);
      });
    }
  }
});

describe('10. problems in a relative --inventory DIR are printed with paths that exist', () => {
  it('every file named by bpa plan exists, seen from where bpa ran', async () => {
    const { runCli } = await import('../validate/run-cli.js');
    const { existsSync } = await import('node:fs');
    // The site deeper than the working directory: a path made relative to one and read
    // from the other leads somewhere else.
    const site = await writeSite({
      'x/y/z/p.yaml':
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p}\nspec:\n  masters:\n    - m1: {}\n',
    });
    const inv = await writeSite({
      'sub/hosts.yaml': `${BMH('node-1', '52:54:00:aa:00:01', READY)}---\n${BMH('node-2', 'nope', READY)}`,
    });
    const state = await mkdtemp(join(tmpdir(), 'bpa-state-'));
    try {
      for (const output of ['text', 'json']) {
        const r = await runCli([
          'plan',
          '-o',
          output,
          '--state',
          state,
          '--inventory',
          relative(process.cwd(), inv),
          join(site, 'x/y/z'),
        ]);
        const files =
          output === 'json'
            ? (JSON.parse(r.stdout) as { problems: Array<{ file?: string }> }).problems.map(
                (p) => p.file,
              )
            : r.stdout
                .split('\n')
                .filter((l) => /: (error|warning|notice) /.test(l))
                .map((l) => l.split(':')[0]);
        assert.ok(
          files.some((f) => f?.endsWith('sub/hosts.yaml')),
          r.stdout,
        );
        for (const f of files) assert.ok(f !== undefined && existsSync(f), `${f} does not exist`);
      }
    } finally {
      await removeSite(site);
      await removeSite(inv);
      await rm(state, { recursive: true, force: true });
    }
  });
});
