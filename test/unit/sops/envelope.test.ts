import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ageIdentities, unwrapDataKey } from '../../../src/sops/age.js';
import { decryptFile } from '../../../src/sops/decrypt-file.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt } from '../../fakes/sops.js';

/** A SOPS file written by SOPS 3.9 with its published test key (Flux's kustomize-controller). */
const FLUX_REPO =
  process.env['BPA_SOPS_FIXTURE_REPO'] ?? '/work/.mirror/fluxcd+kustomize-controller/repo';
const FLUX_FILE = 'internal/controller/testdata/sops/algorithms/age.yaml';
const FLUX_KEY = 'internal/controller/testdata/sops/keys/age.txt';

function gitShow(path: string): string {
  return execFileSync('git', ['--git-dir', FLUX_REPO, 'show', `HEAD:${path}`], {
    encoding: 'utf8',
  });
}

const withKeys = (identities: string[]) => (meta: { age?: Array<{ enc: string }> }) =>
  unwrapDataKey(meta.age ?? [], identities);

describe('SOPS files: decrypted and verified (age, AES-256-GCM, MAC)', function () {
  this.timeout(30_000);
  before(function () {
    const why = ageMissing();
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
  });

  it('reads a file SOPS itself wrote (its MAC verifies), and refuses it once its unencrypted name changed', async function () {
    if (!existsSync(FLUX_REPO)) {
      console.log(
        `    skipped: no SOPS-written fixture at ${FLUX_REPO} (set BPA_SOPS_FIXTURE_REPO)`,
      );
      this.skip();
    }
    const text = gitShow(FLUX_FILE);
    const ids = ageIdentities(gitShow(FLUX_KEY));
    const ok = await decryptFile('age.yaml', text, withKeys(ids));
    assert.deepEqual(ok.problems, []);
    const doc = ok.documents.get(0) as { stringData: { key: string }; metadata: { name: string } };
    assert.equal(doc.metadata.name, 'age');
    assert.ok(!doc.stringData.key.startsWith('ENC['));
    assert.ok(!('sops' in doc));
    // An unencrypted key (encrypted_regex leaves metadata readable): only the MAC notices.
    const renamed = await decryptFile(
      'age.yaml',
      text.replace('name: age', 'name: agf'),
      withKeys(ids),
    );
    assert.deepEqual(
      renamed.problems.map((p) => [p.code, p.line]),
      [['SOPS_MAC_MISMATCH', 23]],
    );
  });

  it('decrypts a YAML and a JSON file written at test time', async function () {
    const k = ageKeygen();
    for (const json of [false, true]) {
      const { text } = sopsEncrypt(
        secretDoc('login', { username: 'ubuntu', password: 'pa:ss wörd' }),
        [k.recipient],
        { encryptedRegex: '^(data|stringData)$', json },
      );
      const out = await decryptFile('s.yaml', text, withKeys([k.identity]));
      assert.deepEqual(out.problems, []);
      assert.deepEqual((out.documents.get(0) as { stringData: unknown }).stringData, {
        username: 'ubuntu',
        password: 'pa:ss wörd',
      });
    }
  });

  it('refuses a tampered value, a value moved to another key, an edited unencrypted key, and a file for another key, with file:line', async function () {
    const k = ageKeygen();
    const other = ageKeygen();
    const { text } = sopsEncrypt(
      secretDoc('login', { username: 'ubuntu', password: 'secret-1' }),
      [k.recipient],
      { encryptedRegex: '^(data|stringData)$' },
    );
    const lines = text.split('\n');
    const pwLine = lines.findIndex((l) => l.includes('password:')) + 1;
    const userLine = lines.findIndex((l) => l.includes('username:')) + 1;
    const run = (t: string, ids = [k.identity]) => decryptFile('site/login.yaml', t, withKeys(ids));

    // One character of the ciphertext.
    const data = /password: ENC\[AES256_GCM,data:(.)/.exec(text)![1]!;
    const flipped = text.replace(
      `password: ENC[AES256_GCM,data:${data}`,
      `password: ENC[AES256_GCM,data:${data === 'A' ? 'B' : 'A'}`,
    );
    let out = await run(flipped);
    assert.deepEqual(
      out.problems.map((p) => [p.code, p.file, p.line]),
      [['SOPS_TAMPERED', 'site/login.yaml', pwLine]],
    );
    assert.equal(out.documents.size, 0);

    // The password's ciphertext under the username's key: its tag binds it to its path.
    const pw = /password: (ENC\[[^\]]+\])/.exec(text)![1]!;
    const user = /username: (ENC\[[^\]]+\])/.exec(text)![1]!;
    out = await run(text.replace(user, pw));
    assert.deepEqual(
      out.problems.map((p) => [p.code, p.line]),
      [['SOPS_TAMPERED', userLine]],
    );

    // A plain value put where an encrypted one was.
    out = await run(text.replace(pw, 'hunter2'));
    assert.deepEqual(
      out.problems.map((p) => p.code),
      ['SOPS_TAMPERED'],
    );
    assert.ok(!out.problems[0]!.message.includes('hunter2'));

    // The Secret's name (left unencrypted) changed: the MAC.
    out = await run(text.replace('name: login', 'name: other'));
    assert.deepEqual(
      out.problems.map((p) => p.code),
      ['SOPS_MAC_MISMATCH'],
    );

    // lastmodified edited: the MAC no longer decrypts.
    out = await run(text.replace(/lastmodified: .*/, 'lastmodified: 2020-01-01T00:00:00Z'));
    assert.deepEqual(
      out.problems.map((p) => p.code),
      ['SOPS_MAC_MISMATCH'],
    );

    // Encrypted for a key bpa lacks.
    out = await run(text, [other.identity]);
    assert.deepEqual(
      out.problems.map((p) => p.code),
      ['SOPS_NO_KEY'],
    );
    assert.match(out.problems[0]!.message, new RegExp(k.recipient));
    assert.equal(out.problems[0]!.line, lines.findIndex((l) => l.startsWith('sops:')) + 1);
    out = await run(text, []);
    assert.deepEqual(
      out.problems.map((p) => p.code),
      ['SOPS_NO_KEY'],
    );

    // No message carries a value.
    for (const p of [
      ...(await run(flipped)).problems,
      ...(await run(text.replace('name: login', 'name: x'))).problems,
    ])
      assert.ok(!p.message.includes('secret-1') && !p.message.includes('ubuntu'));
  });

  it('verifies booleans, numbers and lists as SOPS hashes them (everything encrypted, the default)', async function () {
    const k = ageKeygen();
    const { text } = sopsEncrypt(
      { a: true, b: 3, c: 1.5, d: ['x', false], e: { f_unencrypted: 'visible' } },
      [k.recipient],
    );
    assert.match(text, /f_unencrypted: visible/);
    const out = await decryptFile('v.yaml', text, withKeys([k.identity]));
    assert.deepEqual(out.problems, []);
    assert.deepEqual(out.documents.get(0), {
      a: true,
      b: 3,
      c: 1.5,
      d: ['x', false],
      e: { f_unencrypted: 'visible' },
    });
    const edited = await decryptFile(
      'v.yaml',
      text.replace('f_unencrypted: visible', 'f_unencrypted: changed'),
      withKeys([k.identity]),
    );
    assert.deepEqual(
      edited.problems.map((p) => p.code),
      ['SOPS_MAC_MISMATCH'],
    );
  });
});
