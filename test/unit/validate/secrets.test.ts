import { strict as assert } from 'node:assert';
import { DEFAULT_LIMITS, locateProblems, parseSite } from '../../../src/load/index.js';
import { validateSite } from '../../../src/validate/index.js';
import type { Problem } from '../../../src/util/problem.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt } from '../../fakes/sops.js';
import { BASE_SITE } from './site-fixture.js';

const SITE = `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata:
  name: s
spec:
  ssh:
    bootstrapCredentials: {secret: node-login}
  installer:
    variables: {secret: vars}
`;

/** `bpa validate` on a site with these extra files: no keys, structure only. */
function check(extra: Record<string, string>, plaintextAllowed = false) {
  const files = Object.entries({ ...BASE_SITE, 'site.yaml': SITE, ...extra }).map(
    ([path, text]) => ({ path, text }),
  );
  const loaded = parseSite('/site', files, [], DEFAULT_LIMITS);
  const result = validateSite(loaded, undefined, undefined, { plaintextAllowed });
  const problems = locateProblems(files, result.problems).filter((p) => p.severity !== 'notice');
  return { result, problems, codes: problems.map((p: Problem) => `${p.code}@${p.file}:${p.line}`) };
}

describe('site Secrets checked without keys (bpa validate)', function () {
  this.timeout(30_000);
  let k: { identity: string; recipient: string };
  let login: string;
  let vars: string;
  before(function () {
    const why = ageMissing();
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
    k = ageKeygen();
    const rx = { encryptedRegex: '^(data|stringData)$' };
    login = sopsEncrypt(
      secretDoc('node-login', { username: 'u', password: 'p' }),
      [k.recipient],
      rx,
    ).text;
    vars = sopsEncrypt(secretDoc('vars', { vault_password: 'v' }), [k.recipient], rx).text;
  });

  it('encrypted Secrets the Site refers to: valid, with names, keys and ciphertext digests, no values', () => {
    const { result, codes } = check({
      'secrets/login.yaml': login,
      'secrets/vars.sops.json': vars,
    });
    assert.deepEqual(codes, []);
    const secrets = result.model?.secrets ?? [];
    assert.deepEqual(
      secrets.map((s) => [s.name, s.encrypted, s.keys]),
      [
        ['node-login', true, ['username', 'password']],
        ['vars', true, ['vault_password']],
      ],
    );
    assert.match(secrets[0]!.digest, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(secrets).includes('"p"'));
  });

  it('a plaintext Secret the Site refers to: an error in a repository, a warning under --watch', () => {
    const plain = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: node-login\nstringData:\n  password: hunter2\n`;
    const repo = check({ 'secrets/login.yaml': plain, 'secrets/vars.yaml': vars });
    assert.deepEqual(repo.codes, ['SECRET_NOT_ENCRYPTED@site.yaml:7']);
    assert.ok(!repo.problems[0]!.message.includes('hunter2'));
    const watched = check({ 'secrets/login.yaml': plain, 'secrets/vars.yaml': vars }, true);
    assert.deepEqual(watched.codes, ['SECRET_PLAINTEXT@site.yaml:7']);
    assert.equal(watched.problems[0]!.severity, 'warning');
    assert.ok(watched.result.model, 'the site is valid under --watch');
  });

  it('missing Secrets and keys, bad SOPS metadata, values left plain, other encrypted kinds: file:line', () => {
    assert.deepEqual(check({ 'secrets/vars.yaml': vars }).codes, ['SECRET_NOT_FOUND@site.yaml:7']);
    const noPassword = sopsEncrypt(secretDoc('node-login', { username: 'u' }), [k.recipient], {
      encryptedRegex: '^(data|stringData)$',
    }).text;
    assert.deepEqual(check({ 'a.yaml': noPassword, 'b.yaml': vars }).codes, [
      'SECRET_KEY_MISSING@site.yaml:7',
    ]);
    const noMac = login.replace(/^\s+mac: .*$/m, '');
    assert.deepEqual(
      check({ 'a.yaml': noMac, 'b.yaml': vars }).codes.map((c) => c.split('@')[0]),
      ['SOPS_INVALID'],
    );
    const pgpOnly = login
      .replace(/^ {2}age:[\s\S]*?(?=^ {2}lastmodified:)/m, '  age: null\n')
      .replace(/^ {2}pgp: null$/m, '  pgp: [{fp: ABC, enc: x}]');
    // PGP recipients only: well formed (GnuPG opens it when bpa decrypts).
    assert.deepEqual(check({ 'a.yaml': pgpOnly, 'b.yaml': vars }).problems, []);
    const noRecipient = pgpOnly.replace(/^ {2}pgp: .*$/m, '  pgp: null');
    const none = check({ 'a.yaml': noRecipient, 'b.yaml': vars }).problems;
    assert.deepEqual(
      none.map((p) => p.code),
      ['SOPS_INVALID'],
    );
    assert.match(none[0]!.message, /no age \(sops.age\) or PGP \(sops.pgp\) recipient/);
    const badPgp = pgpOnly.replace(/^ {2}pgp: .*$/m, '  pgp: [{enc: x}]');
    assert.match(
      check({ 'a.yaml': badPgp, 'b.yaml': vars }).problems[0]?.message ?? '',
      /sops.pgp\[0\]: needs fp and enc/,
    );
    const plainValue = login.replace(/password: ENC\[[^\]]+\]/, 'password: hunter2');
    const lines = plainValue.split('\n');
    assert.deepEqual(check({ 'a.yaml': plainValue, 'b.yaml': vars }).codes, [
      `SOPS_INVALID@a.yaml:${lines.findIndex((l) => l.includes('hunter2')) + 1}`,
    ]);
    const encryptedSite = sopsEncrypt(
      {
        apiVersion: 'bpa.akraino.org/v1alpha1',
        kind: 'Software',
        metadata: { name: 'x' },
        spec: {},
      },
      [k.recipient],
      { encryptedRegex: '^spec$' },
    ).text;
    assert.ok(
      check({ 'a.yaml': login, 'b.yaml': vars, 'c.yaml': encryptedSite }).codes.includes(
        'SOPS_UNSUPPORTED_KIND@c.yaml:1',
      ),
    );
  });

  it('a document whose kind SOPS encrypted too (no encrypted_regex): told to encrypt only the data', () => {
    const whole = sopsEncrypt(secretDoc('bmc', { password: 'x' }), [k.recipient]).text;
    const { problems } = check({ 'a.yaml': login, 'b.yaml': vars, 'c.yaml': whole });
    assert.deepEqual(
      problems.map((p) => p.code),
      ['SOPS_UNSUPPORTED_KIND'],
    );
    assert.match(problems[0]!.message, /encrypted_regex: \^\(data\|stringData\)\$/);
  });

  it('an unreferenced encrypted Secret is no SECRET_IN_SITE warning; a plaintext one still is', () => {
    const other = sopsEncrypt(secretDoc('bmc', { password: 'x' }), [k.recipient], {
      encryptedRegex: '^(data|stringData)$',
    }).text;
    assert.deepEqual(check({ 'a.yaml': login, 'b.yaml': vars, 'c.yaml': other }).codes, []);
    const plain = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\nstringData:\n  password: x\n`;
    assert.deepEqual(check({ 'a.yaml': login, 'b.yaml': vars, 'c.yaml': plain }).codes, [
      'SECRET_IN_SITE@c.yaml:5',
    ]);
  });
});
