import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { CORE_SCHEMA, load, loadAll } from 'js-yaml';
import { CODES } from '../../../src/validate/codes.js';
import { SCHEMA_ANNOTATIONS } from '../../../scripts/gen-schema-code.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCHEMA_DIR = join(ROOT, 'schemas');
const EXAMPLE_DIR = join(ROOT, 'sites/example');

const KIND_SCHEMAS: Record<string, { apiVersion: string; file: string }> = {
  Cluster: { apiVersion: 'bpa.akraino.org/v1alpha1', file: 'cluster.schema.json' },
  Provisioning: { apiVersion: 'bpa.akraino.org/v1alpha1', file: 'provisioning.schema.json' },
  Software: { apiVersion: 'bpa.akraino.org/v1alpha1', file: 'software.schema.json' },
  Site: { apiVersion: 'bpa.akraino.org/v1alpha1', file: 'site.schema.json' },
  BareMetalHost: { apiVersion: 'metal3.io/v1alpha1', file: 'baremetalhost.schema.json' },
  HardwareData: { apiVersion: 'metal3.io/v1alpha1', file: 'hardwaredata.schema.json' },
};

type Json = Record<string, unknown>;

/**
 * The one fixture of a bpa document: `kind`, `metadata` (flow style) and `spec`, given as the
 * text after `spec:` (an indented block, or a flow mapping). The cases below vary the spec.
 */
function bpaDoc(kind: string, metadata: string, spec: string): string {
  return `apiVersion: bpa.akraino.org/v1alpha1
kind: ${kind}
metadata: ${metadata}
spec:${spec.startsWith('\n') ? '' : ' '}${spec}${spec.endsWith('\n') ? '' : '\n'}`;
}

function readSchemas(): Map<string, Json> {
  const schemas = new Map<string, Json>();
  for (const name of readdirSync(SCHEMA_DIR)
    .filter((f) => f.endsWith('.schema.json'))
    .sort()) {
    schemas.set(name, JSON.parse(readFileSync(join(SCHEMA_DIR, name), 'utf8')) as Json);
  }
  return schemas;
}

interface Compiled {
  validators: Map<string, ValidateFunction>;
  logged: string[];
}

/** Compiles the schemas the way the validator does, recording anything ajv logs. */
function compile(): Compiled {
  const logged: string[] = [];
  const record = (...args: unknown[]): void => {
    logged.push(args.map(String).join(' '));
  };
  const ajv = new Ajv({
    strict: true,
    allErrors: true,
    verbose: true,
    // As bpa's own validator (src/validate/schema.ts): integer-or-string, as Kubernetes has it.
    allowUnionTypes: true,
    logger: { log: record, warn: record, error: record },
  });
  for (const k of SCHEMA_ANNOTATIONS) ajv.addKeyword(k);
  const schemas = readSchemas();
  for (const schema of schemas.values()) ajv.addSchema(schema);
  const validators = new Map<string, ValidateFunction>();
  for (const [kind, { file }] of Object.entries(KIND_SCHEMAS)) {
    const id = schemas.get(file)?.$id;
    assert.equal(typeof id, 'string', `${file} has an $id`);
    const fn = ajv.getSchema(id as string);
    assert.ok(fn, `${file} compiles`);
    validators.set(kind, fn);
  }
  return { validators, logged };
}

/** The code the validator derives from an ajv error (see the mapping). */
function codeOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'MISSING_FIELD';
    case 'additionalProperties':
      return 'UNKNOWN_FIELD';
    case 'type':
      return 'WRONG_TYPE';
  }
  const code = (e.parentSchema as Json | undefined)?.['x-bpa-code'];
  return typeof code === 'string' ? code : 'INVALID_VALUE';
}

/**
 * Errors that stand for a mistake of their own: `if` and `propertyNames` only summarise an
 * inner error ajv reports at the same place.
 */
function precise(
  errors: readonly ErrorObject[],
): Array<{ path: string; code: string; keyword: string }> {
  return errors
    .filter((e) => e.keyword !== 'if' && e.keyword !== 'propertyNames')
    .map((e) => ({ path: e.instancePath, code: codeOf(e), keyword: e.keyword }));
}

function parse(text: string): Json {
  return load(text, { schema: CORE_SCHEMA }) as Json;
}

function walk(value: unknown, visit: (node: Json, path: string) => void, path = ''): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, visit, `${path}/${i}`));
    return;
  }
  visit(value as Json, path);
  for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}/${k}`);
}

function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...yamlFiles(abs));
    else if (/\.ya?ml$/.test(entry.name)) out.push(abs);
  }
  return out.sort();
}

const { validators, logged } = compile();

function validate(doc: Json): { ok: boolean; errors: ErrorObject[] } {
  const kind = String(doc.kind);
  const fn = validators.get(kind);
  assert.ok(fn, `a schema for kind ${kind}`);
  const ok = fn(doc) === true;
  return { ok, errors: [...(fn.errors ?? [])] };
}

describe('JSON Schemas', () => {
  describe('the schema files', () => {
    it('compile in ajv strict mode without warnings', () => {
      assert.equal(validators.size, Object.keys(KIND_SCHEMAS).length);
      assert.deepEqual(logged, []);
    });

    it('are draft-07 with an $id named after the file', () => {
      for (const [name, schema] of readSchemas()) {
        assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#', name);
        assert.equal(schema.$id, `https://bpa.akraino.org/schemas/${name}`, name);
      }
    });

    it('check apiVersion and kind with const', () => {
      const schemas = readSchemas();
      for (const [kind, { apiVersion, file }] of Object.entries(KIND_SCHEMAS)) {
        const props = schemas.get(file)?.properties as Record<string, Json>;
        assert.equal(props.apiVersion?.const, apiVersion, file);
        assert.equal(props.kind?.const, kind, file);
      }
    });

    it('use only x-bpa-code values that are problem codes', () => {
      const used = new Set<string>();
      for (const [name, schema] of readSchemas()) {
        walk(schema, (node, path) => {
          const code = node['x-bpa-code'];
          if (code === undefined) return;
          assert.ok(typeof code === 'string' && code in CODES, `${name}#${path}: ${String(code)}`);
          used.add(code);
        });
      }
      assert.deepEqual([...used].sort(), [
        'INVALID_CIDR',
        'INVALID_CPU',
        'INVALID_KUBERNETES_VERSION',
        'INVALID_MAC',
        'INVALID_NAME',
        'INVALID_NODE_ENTRY',
        'INVALID_NODE_NAME',
        'INVALID_PACKAGE_ENTRY',
        'INVALID_PACKAGE_NAME',
        'INVALID_PACKAGE_VERSION',
        'INVALID_PLUGIN_NAME',
        'INVALID_QUANTITY',
        'INVALID_RANGE',
        'INVALID_REGEX',
        'INVALID_SELECTOR',
      ]);
    });

    it('describe every property (editors show it on hover)', () => {
      for (const [name, schema] of readSchemas()) {
        walk(schema, (node, path) => {
          const props = node.properties;
          if (props === undefined || path.endsWith('/properties')) return;
          for (const [key, sub] of Object.entries(props as Record<string, Json>)) {
            assert.equal(typeof sub.description, 'string', `${name}#${path}/properties/${key}`);
          }
        });
      }
    });

    it('use no oneOf or anyOf (they make noisy duplicate errors)', () => {
      for (const [name, schema] of readSchemas()) {
        walk(schema, (node, path) => {
          assert.ok(!('oneOf' in node) && !('anyOf' in node), `${name}#${path}`);
        });
      }
    });

    it('use only RE2-compatible patterns (no look-around or back-references)', () => {
      for (const [name, schema] of readSchemas()) {
        walk(schema, (node, path) => {
          if (typeof node.pattern !== 'string' || path.endsWith('/properties')) return;
          assert.ok(!/\(\?[=!<]|\\[1-9]/.test(node.pattern), `${name}#${path}: ${node.pattern}`);
        });
      }
    });
  });

  describe('ICN sample shapes validate unchanged', () => {
    const samples: Array<[string, string]> = [
      [
        'Provisioning by MAC, a master named only "master"',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: provisioning-sample
  labels:
    cluster: cluster-abc
    owner: c1
spec:
  masters:
    - master:
        mac-address: 00:c6:14:04:61:b2
  workers:
    - worker-1:
        mac-address: 00:c6:14:04:61:b2
    - worker-2:
        mac-address: 00:c2:12:03:62:b1
`,
      ],
      [
        'Provisioning with KUDPlugins, masters only',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: sample-kud-plugins
  labels:
    cluster: cluster-efg
    owner: c2
spec:
  masters:
    - master-1:
        mac-address: 00:e1:ba:ce:df:bd
  KUDPlugins:
    - onap4k8s
`,
      ],
      [
        'Provisioning with cpu and memory beside the MAC',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: provisioning-sample
  labels:
    cluster: cluster-xyz
    owner: c2
spec:
  masters:
    - master-1:
        cpu: 10
        memory: 4Gi
        mac-address: 00:c5:16:05:61:b2
    - master-2:
        cpu: 10
        memory: 4Gi
        mac-address: 00:c2:14:06:61:b5
  workers:
    - worker:
        cpu: 20
        memory: 8Gi
        mac-address: 00:c6:14:04:61:b2
`,
      ],
      [
        'Provisioning: resources only, sriov/qat, a dual-role node, PodSubnet (DESIGN §1)',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata: {name: provisioning-xyz, labels: {cluster: cluster-xyz, owner: c1}}
spec:
  masters:
    - master-1: {mac-address: "00:c5:16:05:61:b2", cpu: 10, memory: 4Gi}
  workers:
    - worker-1: {cpu: 20, memory: 8Gi, sriov: true}
    - worker-2: {qat: true, sriov: false}
    - master-1: {}
  KUDPlugins: [emco]
  PodSubnet: 10.244.64.0/18
`,
      ],
      [
        'Provisioning: a node given only by its label, virtlet-vm cluster',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: provisioning-vm
  labels:
    cluster: cluster-vm
    owner: c3
    cluster-type: virtlet-vm
spec:
  masters:
    - master-1:
  workers:
    - master-1:
    - worker-1:
`,
      ],
      [
        'Software with plain and pinned items',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata:
  name: example-software
  labels:
    cluster: cluster-xyz
    owner: c1
spec:
  masterSoftware:
    - curl
    - htop
    - jq:
        version: 1.5+dfsg-1ubuntu0.1
    - maven:
        version: 3.3.9-3
  workerSoftware:
    - curl
    - htop
    - tmux
    - jq
`,
      ],
      [
        'Software (DESIGN §1 flow style), a package given with a null pin',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata: {name: software-xyz, labels: {cluster: cluster-xyz}}
spec:
  masterSoftware: [htop, {jq: {version: 1.5+dfsg-1ubuntu0.1}}, {g++:}]
  workerSoftware: [curl, tmux, {libc6: {version: "2:2.35-0ubuntu3.8"}}]
`,
      ],
      [
        'Cluster',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata:
  name: cluster-sample
  labels:
    cluster: cluster-abc
    owner: c1
spec:
  provisioningCR: "provisioning-sample"
  softwareCR: "software-sample"
`,
      ],
      [
        'Cluster without software, exported from a cluster (extra metadata, status)',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata:
  name: cluster-abc
  namespace: default
  uid: 0b6f4c1e-1111-4c3b-9d0a-2c9c0e0f4a11
  resourceVersion: "1234"
  creationTimestamp: "2020-01-01T00:00:00Z"
  annotations:
    note: anything
spec:
  provisioningCR: provisioning-sample
status: {}
`,
      ],
      [
        'the metal3 BareMetalHost of the ICN baremetal page (fields bpa does not read)',
        `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: demo
spec:
  online: true
  bmc:
    address: ipmi://198.18.0.17
    credentialsName: demo-bmc-secret
  image:
    url: "http://198.18.0.1/images/bionic-server-cloudimg-amd64.img"
    checksum: "http://198.18.0.1/images/bionic-server-cloudimg-amd64.md5sum"
  userData:
    name: demo-user-data
    namespace: metal3
`,
      ],
      [
        'HardwareData',
        `apiVersion: metal3.io/v1alpha1
kind: HardwareData
metadata:
  name: node-01
  namespace: metal3
spec:
  hardware:
    cpu: {arch: x86_64, count: 32, model: "Intel(R) Xeon(R) Gold 6230N CPU @ 2.30GHz"}
    ramMebibytes: 131072
    nics:
      - {name: eno1, mac: "52:54:00:10:00:01", ip: 198.18.0.11, pxe: true, speedGbps: 1, vlanId: 0}
      - {name: eno1, mac: "52:54:00:10:00:01", ip: "fd00::11", pxe: true}
    storage:
      - {name: /dev/sda, sizeBytes: 480103981056, rotational: false, hctl: "0:0:0:0"}
    firmware: {bios: {vendor: Dell Inc., version: 2.12.2}}
`,
      ],
      [
        'an empty Site',
        `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata:
  name: site-1
`,
      ],
    ];
    for (const [name, text] of samples) {
      it(name, () => {
        const result = validate(parse(text));
        assert.deepEqual(precise(result.errors), []);
        assert.ok(result.ok);
      });
    }
  });

  describe('sites/example', () => {
    const files = yamlFiles(EXAMPLE_DIR);
    const docs = files.flatMap((file) =>
      (loadAll(readFileSync(file, 'utf8'), { schema: CORE_SCHEMA }) as unknown[])
        .filter((d): d is Json => d !== null && d !== undefined)
        .map((doc, i) => ({ file: relative(EXAMPLE_DIR, file), i, doc })),
    );
    const ofKind = (kind: string): Json[] =>
      docs.filter((d) => d.doc.kind === kind).map((d) => d.doc);

    it('has the documents the issue asks for', () => {
      assert.equal(ofKind('Site').length, 1);
      assert.equal(ofKind('Cluster').length, 2);
      assert.equal(ofKind('Provisioning').length, 2);
      assert.equal(ofKind('Software').length, 2);
      assert.ok(ofKind('BareMetalHost').length >= 9);
    });

    for (const { file, i, doc } of docs) {
      it(`${file} #${i} (${String(doc.kind)} ${String((doc.metadata as Json).name)}) is valid`, () => {
        assert.equal(doc.apiVersion, KIND_SCHEMAS[String(doc.kind)]?.apiVersion);
        const result = validate(doc);
        assert.deepEqual(precise(result.errors), []);
      });
    }

    it('starts every YAML file with a modeline pointing at its kind schema', () => {
      for (const file of files) {
        const first = readFileSync(file, 'utf8').split('\n')[0] ?? '';
        const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
        assert.ok(m?.[1], `${file}: modeline`);
        const target = resolve(dirname(file), m[1]);
        assert.ok(existsSync(target), `${file}: ${m[1]} exists`);
        const kinds = new Set(
          docs.filter((d) => join(EXAMPLE_DIR, d.file) === file).map((d) => String(d.doc.kind)),
        );
        assert.ok(kinds.size >= 1);
        assert.ok(
          [...kinds].some((k) => KIND_SCHEMAS[k]?.file === target.split('/').pop()),
          `${file}: ${m[1]} matches ${[...kinds].join(', ')}`,
        );
      }
    });

    it('has a lease for every eligible host and none for the others', () => {
      const leaseText = readFileSync(join(EXAMPLE_DIR, 'leases/dnsmasq.leases'), 'utf8');
      const leases = new Map<string, string>();
      for (const line of leaseText.trim().split('\n')) {
        const [expiry, mac, ip] = line.split(' ');
        assert.ok(Number(expiry) > Date.now() / 1000, `${line}: expires in the future`);
        assert.match(ip ?? '', /^192\.0\.2\.\d+$/);
        leases.set(String(mac), String(ip));
      }
      let eligible = 0;
      for (const host of ofKind('BareMetalHost')) {
        const spec = host.spec as Json;
        const status = host.status as Json;
        const ok =
          spec.online === true &&
          status.poweredOn === true &&
          (status.provisioning as Json).state === 'provisioned' &&
          status.operationalStatus === 'OK';
        const bootIp = leases.get(String(spec.bootMACAddress));
        assert.equal(bootIp !== undefined, ok, `${String((host.metadata as Json).name)}`);
        if (ok) eligible++;
      }
      assert.equal(leases.size, eligible);
      assert.ok(ofKind('BareMetalHost').length > eligible, 'at least one host is not eligible');
    });

    it('pins MAC-matched nodes to MACs of hosts in the inventory', () => {
      const macs = new Set<string>();
      for (const host of ofKind('BareMetalHost')) {
        macs.add(String((host.spec as Json).bootMACAddress));
        const hw = (host.status as Json).hardware as { nics: Array<{ mac: string }> };
        for (const nic of hw.nics) macs.add(nic.mac);
      }
      let pinned = 0;
      for (const prov of ofKind('Provisioning')) {
        const spec = prov.spec as { masters?: Json[]; workers?: Json[] };
        for (const entry of [...(spec.masters ?? []), ...(spec.workers ?? [])]) {
          const node = Object.values(entry)[0] as Json | null;
          const mac = node?.['mac-address'];
          if (mac === undefined) continue;
          pinned++;
          assert.ok(macs.has(String(mac)), `${String(mac)} is a host MAC`);
        }
      }
      assert.ok(pinned >= 2);
    });
  });

  describe('invalid documents fail with one precise error each', () => {
    const provisioning = (spec: string): string =>
      bpaDoc('Provisioning', '{name: p1, labels: {cluster: c1}}', `\n${spec}`);
    const software = (spec: string): string =>
      bpaDoc('Software', '{name: s1, labels: {cluster: c1}}', `\n${spec}`);
    const site = (spec: string): string => bpaDoc('Site', '{name: site-1}', `\n${spec}`);
    const host = (rest: string): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: node-01, namespace: metal3}
${rest}`;

    // [case, document, expected precise errors as "path keyword CODE"]
    const cases: Array<[string, string, string[]]> = [
      [
        'typo in a spec field',
        provisioning('  mastres:\n    - m1:\n'),
        ['/spec additionalProperties UNKNOWN_FIELD'],
      ],
      [
        'typo in a node field',
        provisioning('  masters:\n    - m1: {mac: "00:c5:16:05:61:b2"}\n'),
        ['/spec/masters/0/m1 additionalProperties UNKNOWN_FIELD'],
      ],
      [
        'ICN 2019 hostfile that is not a path',
        provisioning('  masters: [{m1: }]\n  hostfile: [/root/hosts.ini]\n'),
        ['/spec/hostfile type WRONG_TYPE'],
      ],
      [
        'ICN 2019 singular master that is a string',
        provisioning('  master: m1\n'),
        ['/spec/master type WRONG_TYPE'],
      ],
      [
        'memory "8GB"',
        provisioning('  masters:\n    - m1: {memory: 8GB}\n'),
        ['/spec/masters/0/m1/memory pattern INVALID_QUANTITY'],
      ],
      [
        'memory "4 Gi"',
        provisioning('  masters:\n    - m1: {memory: 4 Gi}\n'),
        ['/spec/masters/0/m1/memory pattern INVALID_QUANTITY'],
      ],
      [
        'memory negative',
        provisioning('  masters:\n    - m1: {memory: "-4Gi"}\n'),
        ['/spec/masters/0/m1/memory pattern INVALID_QUANTITY'],
      ],
      [
        'memory as a bare number',
        provisioning('  masters:\n    - m1: {memory: 4096}\n'),
        ['/spec/masters/0/m1/memory type WRONG_TYPE'],
      ],
      [
        'cpu 0',
        provisioning('  masters:\n    - m1: {cpu: 0}\n'),
        ['/spec/masters/0/m1/cpu minimum INVALID_CPU'],
      ],
      [
        'cpu "8"',
        provisioning('  masters:\n    - m1: {cpu: "8"}\n'),
        ['/spec/masters/0/m1/cpu type WRONG_TYPE'],
      ],
      [
        'cpu 2.5',
        provisioning('  masters:\n    - m1: {cpu: 2.5}\n'),
        ['/spec/masters/0/m1/cpu type WRONG_TYPE'],
      ],
      [
        'sriov "yes" (YAML 1.2: a string)',
        provisioning('  workers:\n    - w1: {sriov: yes}\n'),
        ['/spec/workers/0/w1/sriov type WRONG_TYPE'],
      ],
      [
        'MAC with five pairs',
        provisioning('  masters:\n    - m1: {mac-address: "00:c5:16:05:61"}\n'),
        ['/spec/masters/0/m1/mac-address pattern INVALID_MAC'],
      ],
      [
        'MAC with mixed separators',
        provisioning('  masters:\n    - m1: {mac-address: "00:c5-16:05:61:b2"}\n'),
        ['/spec/masters/0/m1/mac-address pattern INVALID_MAC'],
      ],
      [
        'MAC with a non-hex digit',
        provisioning('  masters:\n    - m1: {mac-address: "00:c5:16:05:61:bg"}\n'),
        ['/spec/masters/0/m1/mac-address pattern INVALID_MAC'],
      ],
      [
        'two-key node entry',
        provisioning('  masters:\n    - m1: {cpu: 2}\n      m2: {cpu: 2}\n'),
        ['/spec/masters/0 maxProperties INVALID_NODE_ENTRY'],
      ],
      [
        'empty node entry',
        provisioning('  masters:\n    - {}\n'),
        ['/spec/masters/0 minProperties INVALID_NODE_ENTRY'],
      ],
      [
        'node entry without a colon',
        provisioning('  masters:\n    - master-1\n'),
        ['/spec/masters/0 not INVALID_NODE_ENTRY'],
      ],
      [
        'node name with capitals',
        provisioning('  masters:\n    - Master_1:\n'),
        ['/spec/masters/0 pattern INVALID_NODE_NAME'],
      ],
      [
        'node name of 64 characters',
        provisioning(`  masters:\n    - ${'a'.repeat(64)}:\n`),
        ['/spec/masters/0 maxLength INVALID_NODE_NAME'],
      ],
      [
        'node value a string',
        provisioning('  masters:\n    - m1: big\n'),
        ['/spec/masters/0/m1 type WRONG_TYPE'],
      ],
      [
        'masters not a list',
        provisioning('  masters:\n    m1: {}\n'),
        ['/spec/masters type WRONG_TYPE'],
      ],
      [
        'plugin Foo_bar',
        provisioning('  masters: [{m1: }]\n  KUDPlugins: [Foo_bar]\n'),
        ['/spec/KUDPlugins/0 pattern INVALID_PLUGIN_NAME'],
      ],
      [
        'plugin with shell syntax',
        provisioning('  masters: [{m1: }]\n  KUDPlugins: ["emco;reboot"]\n'),
        ['/spec/KUDPlugins/0 pattern INVALID_PLUGIN_NAME'],
      ],
      [
        'plugin listed twice',
        provisioning('  masters: [{m1: }]\n  KUDPlugins: [emco, emco]\n'),
        ['/spec/KUDPlugins uniqueItems INVALID_VALUE'],
      ],
      [
        'PodSubnet 10.0.0.0/33',
        provisioning('  masters: [{m1: }]\n  PodSubnet: 10.0.0.0/33\n'),
        ['/spec/PodSubnet pattern INVALID_CIDR'],
      ],
      [
        'PodSubnet without prefix',
        provisioning('  masters: [{m1: }]\n  PodSubnet: 10.244.0.0\n'),
        ['/spec/PodSubnet pattern INVALID_CIDR'],
      ],
      [
        'PodSubnet octet 256',
        provisioning('  masters: [{m1: }]\n  PodSubnet: 10.256.0.0/16\n'),
        ['/spec/PodSubnet pattern INVALID_CIDR'],
      ],
      [
        'PodSubnet IPv6 /129',
        provisioning('  masters: [{m1: }]\n  PodSubnet: "fd00::/129"\n'),
        ['/spec/PodSubnet pattern INVALID_CIDR'],
      ],
      [
        'Provisioning without spec',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p1}\n',
        [' required MISSING_FIELD'],
      ],
      [
        'misspelt top-level spec',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p1}\nspec: {}\nsepc: {}\n',
        [' additionalProperties UNKNOWN_FIELD'],
      ],
      [
        'metadata without name',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {labels: {cluster: c1}}\nspec: {}\n',
        ['/metadata required MISSING_FIELD'],
      ],
      [
        'metadata.name with capitals',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: Prov_1}\nspec: {}\n',
        ['/metadata/name pattern INVALID_NAME'],
      ],
      [
        'label value not a string',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata: {name: p1, labels: {sriov: true}}\nspec: {}\n',
        ['/metadata/labels/sriov type WRONG_TYPE'],
      ],
      [
        'package "rm -rf /"',
        software('  masterSoftware: ["rm -rf /"]\n'),
        ['/spec/masterSoftware/0 pattern INVALID_PACKAGE_NAME'],
      ],
      [
        'package with capitals',
        software('  masterSoftware: [Htop]\n'),
        ['/spec/masterSoftware/0 pattern INVALID_PACKAGE_NAME'],
      ],
      [
        'package of one character',
        software('  masterSoftware: [a]\n'),
        ['/spec/masterSoftware/0 pattern INVALID_PACKAGE_NAME'],
      ],
      [
        'version "1.0;reboot"',
        software('  masterSoftware:\n    - jq: {version: "1.0;reboot"}\n'),
        ['/spec/masterSoftware/0/jq/version pattern INVALID_PACKAGE_VERSION'],
      ],
      [
        'version with a space',
        software('  masterSoftware:\n    - jq: {version: "1.6 -2"}\n'),
        ['/spec/masterSoftware/0/jq/version pattern INVALID_PACKAGE_VERSION'],
      ],
      [
        'version with $(...)',
        software('  masterSoftware:\n    - jq: {version: "$(id)"}\n'),
        ['/spec/masterSoftware/0/jq/version pattern INVALID_PACKAGE_VERSION'],
      ],
      [
        'version as a YAML number',
        software('  masterSoftware:\n    - jq: {version: 1.10}\n'),
        ['/spec/masterSoftware/0/jq/version type WRONG_TYPE'],
      ],
      [
        'version misspelt',
        software('  masterSoftware:\n    - jq: {verison: "1.6-2"}\n'),
        [
          '/spec/masterSoftware/0/jq required MISSING_FIELD',
          '/spec/masterSoftware/0/jq additionalProperties UNKNOWN_FIELD',
        ],
      ],
      [
        'pinned name with shell syntax',
        software('  masterSoftware:\n    - "jq;id": {version: "1.6"}\n'),
        ['/spec/masterSoftware/0 pattern INVALID_PACKAGE_NAME'],
      ],
      [
        'two packages in one item',
        software('  masterSoftware:\n    - {jq: {version: "1.6"}, curl: }\n'),
        ['/spec/masterSoftware/0 maxProperties INVALID_PACKAGE_ENTRY'],
      ],
      [
        'a number as a package',
        software('  workerSoftware: [7]\n'),
        ['/spec/workerSoftware/0 not INVALID_PACKAGE_ENTRY'],
      ],
      [
        'a list as a package',
        software('  workerSoftware: [[curl]]\n'),
        ['/spec/workerSoftware/0 not INVALID_PACKAGE_ENTRY'],
      ],
      [
        'version given as a string value',
        software('  masterSoftware:\n    - jq: "1.6"\n'),
        ['/spec/masterSoftware/0/jq type WRONG_TYPE'],
      ],
      [
        'Software typo (ICN softwareFrom)',
        software('  masterSoftware: [curl]\n  softwareFrom: {}\n'),
        ['/spec additionalProperties UNKNOWN_FIELD'],
      ],
      [
        'Cluster without provisioningCR',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {softwareCR: s1}\n',
        ['/spec required MISSING_FIELD'],
      ],
      [
        'Cluster reference with capitals',
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {provisioningCR: Prov_1}\n',
        ['/spec/provisioningCR pattern INVALID_NAME'],
      ],
      [
        'Site inventory source unknown',
        site('  inventory: {source: git}\n'),
        ['/spec/inventory/source enum INVALID_VALUE'],
      ],
      [
        'Site namespace with capitals',
        site('  inventory: {source: kubernetes, namespaces: [Metal3]}\n'),
        ['/spec/inventory/namespaces/0 pattern INVALID_NAME'],
      ],
      [
        'Site inventory directory escaping the site',
        site('  inventory: {directory: ../other}\n'),
        ['/spec/inventory/directory pattern INVALID_VALUE'],
      ],
      [
        'Site inventory directory absolute',
        site('  inventory: {directory: /etc}\n'),
        ['/spec/inventory/directory pattern INVALID_VALUE'],
      ],
      [
        'Site ipOrder unknown source',
        site('  leases: {ipOrder: [lease, dns]}\n'),
        ['/spec/leases/ipOrder/1 enum INVALID_VALUE'],
      ],
      [
        'Site installer flavour',
        site('  installer: {flavour: kubeadm}\n'),
        ['/spec/installer/flavour enum INVALID_VALUE'],
      ],
      [
        'Site installer command with a newline',
        site('  installer: {command: "installer\\nreboot"}\n'),
        ['/spec/installer/command pattern INVALID_VALUE'],
      ],
      [
        'Site installer timeout too short',
        site('  installer: {timeoutSeconds: 0}\n'),
        ['/spec/installer/timeoutSeconds minimum INVALID_VALUE'],
      ],
      ['Site ssh port 0', site('  ssh: {port: 0}\n'), ['/spec/ssh/port minimum INVALID_VALUE']],
      [
        'Site ssh user with shell syntax',
        site('  ssh: {user: "root;id"}\n'),
        ['/spec/ssh/user pattern INVALID_VALUE'],
      ],
      [
        'Site ssh key given inline',
        site('  ssh: {key: "-----BEGIN"}\n'),
        ['/spec/ssh additionalProperties UNKNOWN_FIELD'],
      ],
      [
        'Site package mirror with shell syntax',
        site('  packageMirror: "deb http://m.site.example/u jammy main; reboot"\n'),
        ['/spec/packageMirror pattern INVALID_VALUE'],
      ],
      [
        'Site concurrency 0',
        site('  concurrency: {maxParallelHosts: 0}\n'),
        ['/spec/concurrency/maxParallelHosts minimum INVALID_VALUE'],
      ],
      ['Site prune "yes"', site('  prune: "yes"\n'), ['/spec/prune type WRONG_TYPE']],
      [
        'Site window day',
        site('  maintenanceWindows: [{days: [monday], start: "22:00", end: "04:00"}]\n'),
        ['/spec/maintenanceWindows/0/days/0 enum INVALID_VALUE'],
      ],
      [
        'Site window time',
        site('  maintenanceWindows: [{start: "25:00", end: "04:00"}]\n'),
        ['/spec/maintenanceWindows/0/start pattern INVALID_VALUE'],
      ],
      [
        'Site window without end',
        site('  maintenanceWindows: [{start: "22:00"}]\n'),
        ['/spec/maintenanceWindows/0 required MISSING_FIELD'],
      ],
      [
        'BareMetalHost boot MAC malformed',
        host('spec: {bootMACAddress: "52:54:00:10:00"}\n'),
        ['/spec/bootMACAddress pattern INVALID_MAC'],
      ],
      [
        'BareMetalHost NIC MAC malformed',
        host('status: {hardware: {nics: [{name: eno1, mac: "zz:54:00:10:00:01"}]}}\n'),
        ['/status/hardware/nics/0/mac pattern INVALID_MAC'],
      ],
      [
        'BareMetalHost cpu count a string',
        host('status: {hardware: {cpu: {count: "32"}}}\n'),
        ['/status/hardware/cpu/count type WRONG_TYPE'],
      ],
      [
        'BareMetalHost poweredOn a string',
        host('status: {poweredOn: "true"}\n'),
        ['/status/poweredOn type WRONG_TYPE'],
      ],
      [
        'HardwareData ramMebibytes negative',
        'apiVersion: metal3.io/v1alpha1\nkind: HardwareData\nmetadata: {name: node-01}\nspec: {hardware: {ramMebibytes: -1}}\n',
        ['/spec/hardware/ramMebibytes minimum INVALID_VALUE'],
      ],
    ];

    for (const [name, text, expected] of cases) {
      it(name, () => {
        const result = validate(parse(text));
        assert.equal(result.ok, false);
        const got = precise(result.errors).map((e) => `${e.path} ${e.keyword} ${e.code}`);
        assert.deepEqual(got.sort(), [...expected].sort());
      });
    }
  });

  describe('valid edge values', () => {
    const node = (fields: string): Json =>
      parse(bpaDoc('Provisioning', '{name: p1}', `\n  masters:\n    - m1: ${fields}`));
    const valid: Array<[string, string]> = [
      ['memory in Mi', '{memory: 8192Mi}'],
      ['memory in decimal G', '{memory: 8G}'],
      ['memory with a fraction', '{memory: 1.5Gi}'],
      ['memory with an exponent (quoted)', '{memory: "128e6"}'],
      ['memory 0', '{memory: "0"}'],
      ['upper-case MAC with dashes', '{mac-address: "00-C5-16-05-61-B2"}'],
      ['cpu 1', '{cpu: 1}'],
    ];
    for (const [name, fields] of valid) {
      it(name, () => {
        const result = validate(node(fields));
        assert.deepEqual(precise(result.errors), []);
      });
    }

    for (const cidr of [
      '0.0.0.0/0',
      '10.244.64.0/18',
      '255.255.255.255/32',
      '::/0',
      'fd00:10:244::/56',
      '2001:db8:0:0:0:0:0:0/64',
      'fe80::1/128',
    ]) {
      it(`PodSubnet ${cidr}`, () => {
        const doc = parse(bpaDoc('Provisioning', '{name: p1}', `{PodSubnet: "${cidr}"}`));
        assert.deepEqual(precise(validate(doc).errors), []);
      });
    }

    for (const line of [
      'deb http://apt-mirror.site.example/ubuntu jammy main universe',
      'deb [arch=amd64 signed-by=/usr/share/keyrings/site.gpg] https://apt-mirror.site.example/ubuntu jammy-updates main',
      'deb-src file:/srv/mirror/ubuntu jammy main',
    ]) {
      it(`packageMirror ${line}`, () => {
        const doc = parse(bpaDoc('Site', '{name: s1}', `{packageMirror: "${line}"}`));
        assert.deepEqual(precise(validate(doc).errors), []);
      });
    }

    it("packageMirror {bpa: true}: bpa's own repository", () => {
      const doc = parse(`apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata: {name: s1}
spec: {packageMirror: {bpa: true}}
`);
      assert.deepEqual(precise(validate(doc).errors), []);
    });
    for (const value of ['{bpa: false}', '{url: "http://x/"}', '{bpa: true, extra: 1}', '42']) {
      it(`packageMirror ${value} is refused`, () => {
        const doc = parse(`apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata: {name: s1}
spec: {packageMirror: ${value}}
`);
        assert.notDeepEqual(precise(validate(doc).errors), []);
      });
    }

    for (const version of [
      '1:2.35-0ubuntu3.8',
      '1.5+dfsg-1ubuntu0.1',
      '2.0~rc1-1',
      '20230311ubuntu0.22.04.1',
    ]) {
      it(`package version ${version}`, () => {
        const doc = parse(
          bpaDoc('Software', '{name: s1}', `{masterSoftware: [{jq: {version: "${version}"}}]}`),
        );
        assert.deepEqual(precise(validate(doc).errors), []);
      });
    }
  });
});
