import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { Ajv } from 'ajv';
import {
  AJV_OPTIONS,
  COMPILED_SCHEMAS,
  SCHEMAS,
  SCHEMA_ANNOTATIONS,
  exportName,
  renderSchemaCode,
} from '../../../scripts/gen-schema-code.js';
import { createSchemaValidator, schemaValidator } from '../../../src/validate/schema.js';
import { KINDS, type KindName } from '../../../src/validate/kinds.js';

describe('compiled schemas (src/validate/compiled-schemas.ts)', () => {
  it('are generated from schemas/ by this ajv (npx tsx scripts/gen-schema-code.ts)', () => {
    assert.equal(
      readFileSync(COMPILED_SCHEMAS, 'utf8'),
      renderSchemaCode(),
      'src/validate/compiled-schemas.ts is out of date: run npx tsx scripts/gen-schema-code.ts',
    );
  });

  it('report the same problems as the schemas compiled at run time', () => {
    const ajv = new Ajv(AJV_OPTIONS);
    for (const k of SCHEMA_ANNOTATIONS) ajv.addKeyword(k);
    const compiled: Record<string, ReturnType<Ajv['compile']>> = {};
    const files = readdirSync(SCHEMAS).filter((f) => f.endsWith('.schema.json'));
    const ids = new Map<string, string>();
    for (const name of files) {
      const schema = JSON.parse(readFileSync(`${SCHEMAS}/${name}`, 'utf8')) as { $id: string };
      ajv.addSchema(schema);
      ids.set(name, schema.$id);
    }
    // Compiled after every schema is added: they refer to each other (common.schema.json).
    for (const name of files) {
      const fn = ajv.getSchema(ids.get(name) ?? '');
      assert.ok(fn, name);
      compiled[exportName(name)] = fn;
    }
    const atRunTime = createSchemaValidator(compiled);
    const shipped = schemaValidator();
    const where = { file: 'x.yaml', doc: 0 };
    const samples: unknown[] = [
      {},
      null,
      'text',
      [],
      { apiVersion: 'bpa.akraino.org/v1alpha1', kind: 'Cluster', metadata: { name: 'Bad_Name' } },
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'c1', extra: 1 },
        spec: { masters: { count: 'three' }, workerz: {} },
      },
      {
        apiVersion: 'metal3.io/v1alpha1',
        kind: 'BareMetalHost',
        metadata: { name: 'h1', labels: { a: 1 } },
        spec: { online: 'yes', bootMACAddress: 'zz:00' },
        status: { hardware: { cpu: { count: -1 }, ramMebibytes: 'lots', nics: [{ mac: 5 }] } },
      },
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Software',
        metadata: { name: 's' },
        spec: { packages: [{ name: 1 }], plugins: 'all' },
      },
      { apiVersion: 'bpa.akraino.org/v1alpha1', kind: 'Site', spec: { leases: 7 } },
      { apiVersion: 'bpa.akraino.org/v1alpha1', kind: 'Provisioning', spec: [] },
    ];
    let problems = 0;
    for (const kind of Object.keys(KINDS) as KindName[]) {
      for (const value of samples) {
        const got = shipped.check(kind, value, where);
        assert.deepEqual(
          got,
          atRunTime.check(kind, value, where),
          `${kind} ${JSON.stringify(value)}`,
        );
        problems += got.length;
      }
    }
    assert.ok(problems > 50, `the samples raise problems (${problems})`);
  });
});
