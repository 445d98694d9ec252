import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import {
  CRD_KINDS,
  Converter,
  GROUP,
  HEADER,
  VERSION,
  compareCrds,
  crdFileName,
  generateCrds,
  readSchemas,
  type JsonObject,
} from '../../../scripts/gen-crds.js';
import { schemaValidator } from '../../../src/validate/schema.js';
import type { KindName } from '../../../src/validate/kinds.js';
import { DEPLOY_DIR, ROOT, dig, filesUnder, loadManifests, type Obj } from './manifests.js';
import { structuralProblems } from './structural.js';

const CRD_DIR = join(DEPLOY_DIR, 'crds');
const schemas = readSchemas(join(ROOT, 'schemas'));

function committedCrd(kind: string): Obj {
  const found = loadManifests().filter(
    (m) => m.doc.kind === 'CustomResourceDefinition' && dig(m.doc, 'spec.names.kind') === kind,
  );
  assert.equal(found.length, 1, `one CRD for ${kind}`);
  return (found[0] as { doc: Obj }).doc;
}

function openApi(crd: Obj): JsonObject {
  const versions = dig(crd, 'spec.versions') as Obj[];
  return dig(versions[0], 'schema.openAPIV3Schema') as JsonObject;
}

/** Ajv over the OpenAPI schema: it knows `nullable` and ignores the x-kubernetes-* keywords. */
function crdValidators(): Map<string, ValidateFunction> {
  const ajv = new Ajv({ strict: false, allErrors: true });
  const out = new Map<string, ValidateFunction>();
  for (const { kind } of CRD_KINDS) out.set(kind, ajv.compile(openApi(committedCrd(kind))));
  return out;
}

function docsOf(file: string): Obj[] {
  return (loadAll(readFileSync(file, 'utf8'), { schema: CORE_SCHEMA }) as unknown[]).filter(
    (d): d is Obj => typeof d === 'object' && d !== null,
  );
}

function bpaProblems(doc: Obj, file: string): string[] {
  return schemaValidator()
    .check(doc.kind as KindName, doc, { file, doc: 0 })
    .map((p) => `${p.code} ${p.pointer}: ${p.message}`);
}

describe('deploy/crds', () => {
  it('are exactly what scripts/gen-crds.ts generates from schemas/', () => {
    const generated = generateCrds(schemas);
    assert.deepEqual([...generated.keys()].sort(), CRD_KINDS.map(crdFileName).sort());
    assert.deepEqual(compareCrds(generated, CRD_DIR), [], 'run: npx tsx scripts/gen-crds.ts');
    for (const [name, text] of generated) {
      assert.ok(text.startsWith(HEADER), `${name} starts with the do-not-edit header`);
      assert.equal(readFileSync(join(CRD_DIR, name), 'utf8'), text);
    }
  });

  it('generation is deterministic and independent of key order in the schemas', () => {
    const shuffled = new Map(
      [...schemas.entries()].reverse().map(([name, s]) => [name, reverseKeys(s) as JsonObject]),
    );
    assert.deepEqual(generateCrds(shuffled), generateCrds(schemas));
  });

  for (const kind of CRD_KINDS) {
    describe(kind.kind, () => {
      it('is a namespaced v1alpha1 CRD of bpa.akraino.org with a status subresource', () => {
        const crd = committedCrd(kind.kind);
        assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
        assert.equal(dig(crd, 'metadata.name'), `${kind.plural}.${GROUP}`);
        assert.equal(dig(crd, 'spec.group'), GROUP);
        assert.equal(dig(crd, 'spec.scope'), 'Namespaced');
        assert.deepEqual(dig(crd, 'spec.names'), {
          kind: kind.kind,
          listKind: `${kind.kind}List`,
          plural: kind.plural,
          singular: kind.kind.toLowerCase(),
          shortNames: kind.shortNames,
          categories: ['bpa'],
        });
        const versions = dig(crd, 'spec.versions') as Obj[];
        assert.equal(versions.length, 1);
        const v = versions[0] as Obj;
        assert.equal(v.name, VERSION);
        assert.equal(v.served, true);
        assert.equal(v.storage, true);
        assert.deepEqual(v.subresources, { status: {} });
      });

      it('has a structural schema', () => {
        assert.deepEqual(structuralProblems(openApi(committedCrd(kind.kind))), []);
      });

      it('keeps the schema descriptions', () => {
        const source = schemas.get(kind.file) as JsonObject;
        const schema = openApi(committedCrd(kind.kind));
        assert.equal(schema.description, source.description);
        assert.equal(
          dig(schema, 'properties.spec.description'),
          dig(source, 'properties.spec.description'),
        );
      });
    });
  }

  it('the structural check refuses the JSON Schemas themselves', () => {
    const raw = schemas.get('provisioning.schema.json') as JsonObject;
    const problems = structuralProblems({
      type: 'object',
      properties: { spec: raw.properties && (raw.properties as JsonObject).spec },
      $defs: raw.$defs,
    });
    assert.ok(
      problems.some((p) => /\$ref is not allowed/.test(p)),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => /\$defs is not allowed/.test(p)),
      problems.join('\n'),
    );
    const mixed = structuralProblems({
      type: 'object',
      properties: {
        a: {
          type: 'object',
          properties: { b: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
        c: { description: 'no type' },
        d: { type: 'array', uniqueItems: true, items: { type: 'string' } },
        e: { type: ['object', 'null'] },
      },
    });
    assert.deepEqual(mixed, [
      '/properties/a: properties and additionalProperties are mutually exclusive',
      '/properties/c: no type (nor x-kubernetes-preserve-unknown-fields / x-kubernetes-int-or-string)',
      '/properties/d: uniqueItems is not allowed in a CRD schema',
      '/properties/e: type ["object","null"] is not one Kubernetes type',
    ]);
  });

  it('short names and plurals are unique across the kinds', () => {
    const names = CRD_KINDS.flatMap((k) => [k.plural, k.kind.toLowerCase(), ...k.shortNames]);
    assert.equal(new Set(names).size, names.length, names.join(' '));
  });

  it('Cluster prints READY, STATUS, NODES, REVISION and AGE from the status bpa writes', () => {
    const versions = dig(committedCrd('Cluster'), 'spec.versions') as Obj[];
    const columns = (versions[0] as Obj).additionalPrinterColumns as Obj[];
    assert.deepEqual(
      columns.map((c) => [c.name, c.type, c.jsonPath]),
      [
        ['Ready', 'string', '.status.conditions[?(@.type=="Ready")].status'],
        ['Status', 'string', '.status.conditions[?(@.type=="Ready")].message'],
        ['Nodes', 'string', '.status.nodes'],
        ['Revision', 'string', '.status.lastAppliedRevision'],
        ['Age', 'date', '.metadata.creationTimestamp'],
      ],
    );
  });

  it("status conditions merge by type, so another writer's condition stays", () => {
    for (const kind of CRD_KINDS) {
      const conditions = dig(openApi(committedCrd(kind.kind)), 'properties.status.properties.conditions') as Obj;
      assert.equal(conditions['x-kubernetes-list-type'], 'map', kind.kind);
      assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type'], kind.kind);
    }
  });

  describe('accept what bpa accepts', () => {
    const validators = crdValidators();
    const sampleFiles = [
      join(ROOT, 'test/unit/deploy/icn-samples.yaml'),
      join(ROOT, 'test/unit/deploy/placement-samples.yaml'),
      join(ROOT, 'sites/example/site.yaml'),
      ...filesUnder(join(ROOT, 'sites/example/clusters')).map((f) =>
        join(ROOT, 'sites/example/clusters', f),
      ),
    ];
    for (const file of sampleFiles) {
      it(`${file.slice(ROOT.length + 1)}`, () => {
        const docs = docsOf(file).filter((d) => validators.has(String(d.kind)));
        assert.ok(docs.length > 0, 'the file holds bpa documents');
        for (const doc of docs) {
          const name = `${String(doc.kind)} ${String(dig(doc, 'metadata.name'))}`;
          assert.deepEqual(bpaProblems(doc, file), [], `bpa accepts ${name}`);
          const validate = validators.get(String(doc.kind)) as ValidateFunction;
          assert.ok(validate(doc), `the CRD accepts ${name}: ${JSON.stringify(validate.errors)}`);
        }
      });
    }
  });

  describe('reject what bpa rejects, where Kubernetes can check it', () => {
    const validators = crdValidators();
    const base = (spec: string): Obj =>
      docsOf(join(ROOT, 'test/unit/deploy/icn-samples.yaml')).find(
        (d) => dig(d, 'metadata.name') === spec,
      ) as Obj;
    const cases: Array<[string, string, (doc: Obj) => void]> = [
      [
        'a MAC with five pairs',
        'provisioning-xyz',
        (d) => setNode(d, 'masters', { 'master-1': { 'mac-address': '00:c5:16:05:61' } }),
      ],
      ['cpu 0', 'provisioning-xyz', (d) => setNode(d, 'masters', { 'master-1': { cpu: 0 } })],
      [
        'memory with a B suffix',
        'provisioning-xyz',
        (d) => setNode(d, 'masters', { 'master-1': { memory: '4GB' } }),
      ],
      [
        'a node entry with two names',
        'provisioning-xyz',
        (d) => setNode(d, 'masters', { a: {}, b: {} }),
      ],
      [
        'a node entry that is a string',
        'provisioning-xyz',
        (d) => setNode(d, 'masters', 'master-1'),
      ],
      [
        'a pod subnet without prefix',
        'provisioning-xyz',
        (d) => ((d.spec as Obj).PodSubnet = '10.244.64.0'),
      ],
      [
        'a plugin with capitals',
        'provisioning-xyz',
        (d) => ((d.spec as Obj).KUDPlugins = ['EMCO']),
      ],
      [
        'a Cluster without provisioningCR',
        'cluster-sample',
        (d) => delete (d.spec as Obj).provisioningCR,
      ],
      ['a document without spec', 'cluster-sample', (d) => delete d.spec],
    ];
    for (const [title, sample, mutate] of cases) {
      it(title, () => {
        const doc = structuredClone(base(sample));
        mutate(doc);
        assert.notDeepEqual(bpaProblems(doc, 'case.yaml'), [], 'bpa rejects it');
        const validate = validators.get(String(doc.kind)) as ValidateFunction;
        assert.equal(validate(doc), false, 'the CRD rejects it');
      });
    }

    it('an installer flavour that does not exist (Site)', () => {
      const site = docsOf(join(ROOT, 'sites/example/site.yaml'))[0] as Obj;
      const doc = structuredClone(site);
      (dig(doc, 'spec.installer') as Obj).flavour = 'kubeadm';
      assert.notDeepEqual(bpaProblems(doc, 'site.yaml'), []);
      assert.equal((validators.get('Site') as ValidateFunction)(doc), false);
    });
  });
});

describe('scripts/gen-crds.ts conversion', () => {
  const common: JsonObject = {
    $id: 'x',
    $defs: {
      mac: {
        description: 'A MAC.',
        type: 'string',
        pattern: '^[0-9a-f:]+$',
        'x-bpa-code': 'INVALID_MAC',
      },
      map: { type: 'object', additionalProperties: { type: 'string' } },
    },
  };
  const convert = (node: unknown): JsonObject =>
    new Converter(new Map([['common.schema.json', common]])).convert(node, {
      file: 'a.schema.json',
      pointer: '',
    });

  const cases: Array<[string, unknown, JsonObject]> = [
    [
      'a $ref into another file, the local description winning',
      { description: 'Boot MAC.', $ref: 'common.schema.json#/$defs/mac' },
      { description: 'Boot MAC.', type: 'string', pattern: '^[0-9a-f:]+$' },
    ],
    ['const → enum of one', { const: 'kud' }, { type: 'string', enum: ['kud'] }],
    [
      'type [object, null] → nullable object',
      {
        type: ['object', 'null'],
        properties: { a: { type: 'boolean' } },
        additionalProperties: false,
      },
      { type: 'object', nullable: true, properties: { a: { type: 'boolean' } } },
    ],
    [
      'an open object',
      { type: 'object' },
      { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    ],
    [
      'properties beside an additionalProperties schema',
      {
        type: 'object',
        properties: { a: { type: 'string' } },
        additionalProperties: { type: 'string' },
      },
      {
        type: 'object',
        properties: { a: { type: 'string' } },
        'x-kubernetes-preserve-unknown-fields': true,
      },
    ],
    [
      'a map through $ref',
      { $ref: 'common.schema.json#/$defs/map' },
      { type: 'object', additionalProperties: { type: 'string' } },
    ],
    [
      'uniqueItems on scalars → a set list',
      { type: 'array', uniqueItems: true, items: { type: 'string' } },
      { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    ],
    [
      'uniqueItems on objects is dropped',
      { type: 'array', uniqueItems: true, items: { type: 'object', additionalProperties: false } },
      { type: 'array', items: { type: 'object' } },
    ],
    [
      'draft-07 exclusiveMinimum',
      { type: 'integer', exclusiveMinimum: 0 },
      { type: 'integer', minimum: 0, exclusiveMinimum: true },
    ],
    [
      'default and title are dropped',
      { type: 'integer', default: 3, title: 'n' },
      { type: 'integer' },
    ],
    [
      'if object then X else never → X',
      {
        description: 'Entry.',
        if: { type: 'object' },
        then: {
          type: 'object',
          minProperties: 1,
          propertyNames: { pattern: '^a' },
          additionalProperties: { type: 'integer' },
        },
        else: { not: {} },
      },
      {
        description: 'Entry.',
        type: 'object',
        minProperties: 1,
        additionalProperties: { type: 'integer' },
      },
    ],
    [
      'if string then … else if object then … → any value',
      {
        description: 'Item.',
        if: { type: 'string' },
        then: { type: 'string' },
        else: { if: { type: 'object' }, then: { type: 'object' }, else: { not: {} } },
      },
      { description: 'Item.', 'x-kubernetes-preserve-unknown-fields': true },
    ],
    ['integer or string', { type: ['integer', 'string'] }, { 'x-kubernetes-int-or-string': true }],
  ];
  for (const [title, input, expected] of cases) {
    it(title, () => {
      const out = convert(input);
      assert.deepEqual(out, expected);
      assert.deepEqual(structuralProblems({ type: 'object', properties: { x: out } }), []);
    });
  }

  const refused: Array<[string, unknown, RegExp]> = [
    [
      'an unknown keyword',
      { type: 'string', contentEncoding: 'base64' },
      /a\.schema\.json#: keyword contentEncoding/,
    ],
    ['anyOf', { anyOf: [{ type: 'string' }] }, /anyOf is not supported/],
    ['a dangling $ref', { $ref: 'common.schema.json#/$defs/nope' }, /does not resolve/],
    [
      'a keyword beside $ref',
      { $ref: 'common.schema.json#/$defs/mac', maxLength: 3 },
      /maxLength beside \$ref/,
    ],
    [
      'an if that tests more than the type',
      { if: { required: ['a'] }, then: {} },
      /only a test on the type/,
    ],
    [
      'pattern on an integer',
      { type: 'integer', pattern: '^1$' },
      /keyword pattern is not supported on a integer/,
    ],
  ];
  for (const [title, input, message] of refused) {
    it(`refuses ${title}, naming where`, () => {
      assert.throws(() => convert(input), message);
    });
  }
});

describe('scripts/gen-crds.ts --check', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bpa-gen-crds-'));
    mkdirSync(join(dir, 'scripts'));
    cpSync(join(ROOT, 'scripts/gen-crds.ts'), join(dir, 'scripts/gen-crds.ts'));
    cpSync(join(ROOT, 'schemas'), join(dir, 'schemas'), { recursive: true });
    cpSync(CRD_DIR, join(dir, 'deploy/crds'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]): { status: number | null; stderr: string; stdout: string } => {
    const res = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(dir, 'scripts/gen-crds.ts'), ...args],
      {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    return { status: res.status, stderr: res.stderr, stdout: res.stdout };
  };

  it('passes on the committed files, fails with a clear message once a schema changes, and regenerating fixes it', () => {
    assert.equal(run('--check').status, 0);

    const file = join(dir, 'schemas/cluster.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8')) as JsonObject;
    (dig(schema, 'properties.spec.properties.softwareCR') as JsonObject).description = 'Changed.';
    writeFileSync(file, JSON.stringify(schema, null, 2));
    const failed = run('--check');
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /clusters\.bpa\.akraino\.org\.yaml differs/);
    assert.match(failed.stderr, /run "npx tsx scripts\/gen-crds\.ts"/);

    const wrote = run();
    assert.equal(wrote.status, 0, wrote.stderr);
    assert.match(wrote.stdout, /wrote deploy\/crds\/clusters\.bpa\.akraino\.org\.yaml/);
    assert.doesNotMatch(wrote.stdout, /provisionings/, 'unchanged files are not rewritten');
    assert.equal(run('--check').status, 0);
  });

  it('reports a missing file and a stale one', () => {
    rmSync(join(dir, 'deploy/crds/sites.bpa.akraino.org.yaml'));
    writeFileSync(
      join(dir, 'deploy/crds/widgets.bpa.akraino.org.yaml'),
      `${HEADER}kind: CustomResourceDefinition\n`,
    );
    const failed = run('--check');
    assert.equal(failed.status, 1);
    assert.match(failed.stderr, /sites\.bpa\.akraino\.org\.yaml is missing/);
    assert.match(failed.stderr, /widgets\.bpa\.akraino\.org\.yaml is not generated/);
    assert.equal(run().status, 0);
    assert.deepEqual(
      filesUnder(join(dir, 'deploy/crds')).map((f) => basename(f)),
      CRD_KINDS.map(crdFileName).sort(),
      'the stale generated file is removed',
    );
  });
});

function setNode(doc: Obj, role: string, entry: unknown): void {
  (doc.spec as Obj)[role] = [entry];
}

function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reverseKeys(v)]),
  );
}
