/**
 * Every BareMetalHost bpa's repository shows or feeds itself (the example site, the sites the
 * test fakes and the lab write, the benchmark's generated site, the YAML blocks of the README
 * and docs) must be one the real metal3 CRD accepts: a host a real cluster could not hold
 * proves nothing about bpa. This is the fast structural pre-check, with ajv over the newest
 * real CRD's openAPIV3Schema from ../shared/real-world/metal3/crds; the authoritative check,
 * creating them through a real kube-apiserver, is test/integration/kube/metal3-fixtures.test.ts.
 * Fields the schema does not know count as errors here: the real server would prune them, so
 * bpa would not see them on a real cluster.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import {
  METAL3_CRDS as CRDS,
  allFixtures,
  assertEverySourceRead,
  bmhSchema,
} from '../../k8s/metal3-fixtures.js';

const errorText = (e: ErrorObject): string =>
  `${e.instancePath || '/'} ${e.message ?? ''}${
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)}: the real server would prune it)`
      : ''
  }`;

describe('BareMetalHost fixtures against the real metal3 CRD (structural pre-check)', function () {
  this.timeout(30_000);
  let tmp = '';
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('every BareMetalHost of sites/, the test and bench generators and the docs is valid', async function () {
    if (!existsSync(CRDS)) {
      console.log(`    skipped: ${CRDS} is absent (the real metal3 CRDs are not in this checkout)`);
      this.skip();
    }
    const validate = new Ajv({
      strict: false,
      allErrors: true,
      // OpenAPI's formats the CRD names: not checked here (the API server checks them).
      formats: { 'date-time': true, int32: true, int64: true, double: true },
    }).compile(bmhSchema());
    tmp = await mkdtemp(join(tmpdir(), 'bpa-metal3-fixtures-'));
    const fixtures = await allFixtures(tmp);
    assertEverySourceRead(fixtures);
    const all = fixtures.all;
    const problems: string[] = [];
    for (const { where, doc } of all) {
      // Not `if (validate(doc))`: its type guard would narrow doc to never below.
      const valid: boolean = validate(doc);
      if (valid) continue;
      const name = (doc.metadata as { name?: string } | undefined)?.name ?? '?';
      for (const e of validate.errors ?? []) problems.push(`${where} ${name}: ${errorText(e)}`);
    }
    assert.deepEqual(problems, []);
  });
});
