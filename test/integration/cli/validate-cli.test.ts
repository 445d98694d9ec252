import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';
import { BASE_SITE, edit, removeSite, writeSite } from '../../unit/validate/site-fixture.js';

const BPA = fileURLToPath(new URL('../../../bin/bpa', import.meta.url));

function bpa(
  args: string[],
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BPA, args, { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('bpa validate as a process', function () {
  this.timeout(60_000);
  let valid: string;
  let invalid: string;
  let warnOnly: string;
  before(async () => {
    valid = await writeSite(BASE_SITE);
    invalid = await writeSite({
      ...edit('provisioning.yaml', 'memory: 8Gi', 'memory: 8GB'),
      'extra, file.yaml': 'apiVersion: bpa.akraino.org/v1alpha1\nkind: Nope\n',
    });
    warnOnly = await writeSite(
      edit('provisioning.yaml', '  workers:', '    - master-2: {}\n  workers:'),
    );
  });
  after(async () => {
    await Promise.all([valid, invalid, warnOnly].map(removeSite));
  });

  it('exits 0 on a valid site and says so', async () => {
    const r = await bpa(['validate', valid]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /valid \(3 documents in 3 files, 1 cluster\)/);
  });

  it('exits 1 and prints compiler-style lines, sorted by file and line', async () => {
    const r = await bpa(['validate', '.'], invalid);
    assert.equal(r.code, 1);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines.slice(0, 2), [
      'extra, file.yaml:2:1: error UNKNOWN_KIND: kind "Nope" is not one bpa reads (Cluster, Provisioning, Software, Site, BareMetalHost, HardwareData)',
      'provisioning.yaml:17:9: error INVALID_QUANTITY: spec.workers.0.worker-1.memory: "8GB" is not valid (' +
        lines[1]?.split('is not valid (')[1],
    ]);
    assert.match(lines[2] ?? '', /2 errors, 0 warnings/);
  });

  it('prints paths relative to the working directory', async () => {
    const parent = join(invalid, '..');
    const r = await bpa(['validate', relative(parent, invalid)], parent);
    assert.equal(r.code, 1);
    assert.ok(r.stdout.startsWith(`${relative(parent, invalid)}/extra, file.yaml:2:1:`), r.stdout);
  });

  it('--format json is machine-readable with stable codes', async () => {
    const r = await bpa(['validate', '--format', 'json', invalid]);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as {
      valid: boolean;
      errors: number;
      problems: Array<Record<string, unknown>>;
    };
    assert.equal(out.valid, false);
    assert.equal(out.errors, 2);
    assert.deepEqual(
      out.problems.map((p) => [p['code'], p['line'], p['column'], p['pointer']]),
      [
        ['UNKNOWN_KIND', 2, 1, '/kind'],
        ['INVALID_QUANTITY', 17, 9, '/spec/workers/0/worker-1/memory'],
      ],
    );
  });

  it('--format github emits workflow commands with escaped properties', async () => {
    const r = await bpa(['validate', '--format', 'github', '.'], invalid);
    assert.equal(r.code, 1);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(
      lines[0] ?? '',
      /^::error file=extra%2C file\.yaml,line=2,col=1,title=bpa UNKNOWN_KIND::kind "Nope"/,
    );
    assert.match(
      lines[1] ?? '',
      /^::error file=provisioning\.yaml,line=17,col=9,title=bpa INVALID_QUANTITY::/,
    );
  });

  it('prints warnings but exits 0 when there are no errors', async () => {
    const r = await bpa(['validate', warnOnly]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /provisioning\.yaml:9:3: warning EVEN_MASTERS: 2 masters/);
    assert.match(r.stdout, /valid \(.*1 warning\)/);
    const gh = await bpa(['validate', '--format', 'github', warnOnly]);
    assert.match(gh.stdout, /^::warning file=/);
  });

  it('validates a single file', async () => {
    const r = await bpa(['validate', join(valid, 'provisioning.yaml')]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /1 document in 1 file, 1 cluster/);
  });

  it('a missing path is an error (exit 1) in every format; a wrong command line exits 64', async () => {
    const missing = await bpa(['validate', join(valid, 'nope')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /nope: error PATH_NOT_FOUND: .*nope: no such file or directory/);
    const json = await bpa(['validate', '-f', 'json', join(valid, 'nope')]);
    assert.equal(json.code, 1);
    const out = JSON.parse(json.stdout) as { valid: boolean; problems: Array<{ code: string }> };
    assert.equal(out.valid, false);
    assert.deepEqual(
      out.problems.map((p) => p.code),
      ['PATH_NOT_FOUND'],
    );
    const gh = await bpa(['validate', '--format', 'github', join(valid, 'nope')]);
    assert.match(gh.stdout, /^::error file=.*nope,title=bpa PATH_NOT_FOUND::/m);
    const unknown = await bpa(['validate', '--frobnicate', valid]);
    assert.equal(unknown.code, 64);
    assert.match(unknown.stderr, /unknown option/);
    const format = await bpa(['validate', '--format', 'xml', valid]);
    assert.equal(format.code, 64);
    assert.match(format.stderr, /Allowed choices are text, json, github/);
    const command = await bpa(['frobnicate']);
    assert.equal(command.code, 64);
  });

  it('--help and --version exit 0', async () => {
    const help = await bpa(['validate', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--format <format>/);
    const version = await bpa(['--version']);
    assert.equal(version.code, 0);
    // The version's one place is package.json.
    const pkg = JSON.parse(
      await readFile(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8'),
    ) as { version: string };
    assert.equal(version.stdout, `${pkg.version}\n`);
  });
});
