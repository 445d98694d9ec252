import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_SITE, edit, removeSite, writeSite } from '../validate/site-fixture.js';
import { runCli } from '../validate/run-cli.js';

describe('-o/--output on every command', function () {
  this.timeout(30_000);
  let valid: string;
  let invalid: string;
  let state: string;
  before(async () => {
    valid = await writeSite(BASE_SITE);
    invalid = await writeSite(edit('provisioning.yaml', 'memory: 8Gi', 'memory: 8GB'));
    state = await mkdtemp(join(tmpdir(), 'bpa-output-flag-'));
  });
  after(async () => {
    await Promise.all([valid, invalid].map(removeSite));
    await rm(state, { recursive: true, force: true });
  });

  it('bpa validate -o json prints what --format json and -f json print', async () => {
    const o = await runCli(['validate', '-o', 'json', invalid]);
    assert.equal(o.code, 1);
    const doc = JSON.parse(o.stdout) as { valid: boolean; problems: Array<{ code: string }> };
    assert.equal(doc.valid, false);
    assert.deepEqual(
      doc.problems.map((p) => p.code),
      ['INVALID_QUANTITY'],
    );
    for (const alias of [['--format', 'json'], ['-f', 'json'], ['--output=json']]) {
      const r = await runCli(['validate', ...alias, invalid]);
      assert.equal(r.stdout, o.stdout, alias.join(' '));
      assert.equal(r.code, 1);
    }
    const gh = await runCli(['validate', '-o', 'github', invalid]);
    assert.match(gh.stdout, /^::error file=\S*provisioning\.yaml,line=\d+/m);
  });

  it('--output and --format that disagree are a usage error', async () => {
    const r = await runCli(['validate', '-o', 'json', '-f', 'github', valid]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /--output json and --format github disagree/);
    const bad = await runCli(['validate', '-o', 'xml', valid]);
    assert.equal(bad.code, 64);
    assert.match(bad.stderr, /Allowed choices are text, json, github/);
  });

  it('bpa apply -o json on an invalid site: one JSON document with the problems and the error', async () => {
    const r = await runCli(['apply', '-o', 'json', '--state', join(state, 'a'), invalid]);
    assert.equal(r.code, 1);
    const doc = JSON.parse(r.stdout) as {
      changes: boolean;
      problems: Array<{ code: string; file?: string }>;
      error: { code: string; message: string };
    };
    assert.equal(doc.changes, false);
    assert.deepEqual(
      doc.problems.map((p) => p.code),
      ['INVALID_QUANTITY'],
    );
    assert.match(doc.problems[0]?.file ?? '', /provisioning\.yaml$/);
    assert.equal(doc.error.code, 'SITE_INVALID');
    assert.match(r.stderr, /SITE_INVALID: nothing applied: the site has 1 error/);
  });

  for (const command of ['validate', 'plan', 'apply', 'reconcile', 'serve']) {
    it(`bpa ${command} --help lists -o, --output <format>`, async () => {
      const r = await runCli([command, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /-o, --output <format>\s+output format \(choices: /);
    });
  }

  it('--inventory-namespace is in --help; the deprecated --namespace is not', async () => {
    const r = await runCli(['apply', '--help']);
    assert.match(
      r.stdout,
      /--inventory-namespace <ns\.\.\.>\s+namespaces to list BareMetalHosts in/,
    );
    assert.doesNotMatch(r.stdout, /^\s+--namespace/m);
    assert.match(r.stdout, /--bootstrap-namespace/);
  });
});
