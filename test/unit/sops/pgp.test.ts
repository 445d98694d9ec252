import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { decryptFile } from '../../../src/sops/decrypt-file.js';
import { unwrapPgpDataKey } from '../../../src/sops/pgp.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt } from '../../fakes/sops.js';

/** A SOPS file written by SOPS with its published PGP test key (Flux's kustomize-controller). */
const FLUX_REPO =
  process.env['BPA_SOPS_FIXTURE_REPO'] ?? '/work/.mirror/fluxcd+kustomize-controller/repo';

function gpgMissing(): string | undefined {
  try {
    execFileSync('gpg', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no gpg (Debian gnupg)';
  }
}

describe('SOPS files with PGP recipients: opened by the operator’s GnuPG keyring', function () {
  this.timeout(60_000);
  let home = '';
  let empty = '';
  const gpg = (args: string[], input?: string): string =>
    execFileSync('gpg', ['--homedir', home, '--batch', '--quiet', ...args], {
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    });
  const withHome = (dir: string) => (meta: { pgp?: Array<{ enc: string }> }) =>
    unwrapPgpDataKey(meta.pgp ?? [], { env: { ...process.env, GNUPGHOME: dir } });

  before(async function () {
    const why = gpgMissing() ?? ageMissing();
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
    home = await mkdtemp(join(tmpdir(), 'bpa-gpg-'));
    empty = await mkdtemp(join(tmpdir(), 'bpa-gpg-empty-'));
  });
  after(async () => {
    for (const dir of [home, empty]) {
      if (!dir) continue;
      // The agents gpg started for these homes.
      execFileSync('gpgconf', ['--homedir', dir, '--kill', 'all'], { stdio: 'ignore' });
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('decrypts a file whose data key is encrypted for a PGP key of the keyring; tampering is caught; another keyring opens nothing', async () => {
    gpg([
      '--passphrase',
      '',
      '--quick-gen-key',
      'bpa test <test@bpa.invalid>',
      'default',
      'default',
      'never',
    ]);
    const fp = /^fpr:{9}([0-9A-F]{40}):/m.exec(gpg(['--with-colons', '--list-keys']))?.[1];
    assert.ok(fp, 'the key made');
    // A file as sops -e --pgp FP writes it: the data key encrypted with gpg, no age stanza.
    const { dataKey, text } = sopsEncrypt(
      secretDoc('login', { password: 'from-pgp' }),
      [ageKeygen().recipient],
      // metadata stays readable, as Flux's examples keep it: an edit there is for the MAC
      { encryptedRegex: '^(data|stringData)$' },
    );
    const doc = parse(text) as { sops: Record<string, unknown> };
    doc.sops['age'] = null;
    doc.sops['pgp'] = [
      {
        created_at: '2026-11-28T00:00:00Z',
        enc: execFileSync(
          'gpg',
          [
            '--homedir',
            home,
            '--batch',
            '--trust-model',
            'always',
            '--armor',
            '--encrypt',
            '-r',
            fp,
          ],
          { input: dataKey },
        ).toString('utf8'),
        fp,
      },
    ];
    const pgpOnly = stringify(doc);
    const ok = await decryptFile('login.yaml', pgpOnly, withHome(home));
    assert.deepEqual(ok.problems, []);
    assert.deepEqual((ok.documents.get(0) as { stringData: unknown }).stringData, {
      password: 'from-pgp',
    });
    const tampered = await decryptFile(
      'login.yaml',
      pgpOnly.replace('name: login', 'name: logon'),
      withHome(home),
    );
    assert.deepEqual(
      tampered.problems.map((p) => p.code),
      ['SOPS_MAC_MISMATCH'],
    );
    const noKey = await decryptFile('login.yaml', pgpOnly, withHome(empty));
    assert.deepEqual(
      noKey.problems.map((p) => p.code),
      ['SOPS_NO_KEY'],
    );
    assert.match(noKey.problems[0]?.message ?? '', new RegExp(`PGP ${fp}`));
  });

  it('reads a file SOPS itself encrypted for a PGP key', async function () {
    if (!existsSync(FLUX_REPO)) {
      console.log(
        `    skipped: no SOPS-written fixture at ${FLUX_REPO} (set BPA_SOPS_FIXTURE_REPO)`,
      );
      this.skip();
    }
    const show = (path: string): string =>
      execFileSync('git', ['--git-dir', FLUX_REPO, 'show', `HEAD:${path}`], { encoding: 'utf8' });
    gpg(['--import'], show('internal/controller/testdata/sops/keys/pgp.asc'));
    const text = show('internal/controller/testdata/sops/algorithms/pgp.yaml');
    const out = await decryptFile('pgp.yaml', text, withHome(home));
    assert.deepEqual(out.problems, []);
    const d = out.documents.get(0) as { stringData?: Record<string, string>; data?: unknown };
    assert.ok(d.stringData ?? d.data, 'values decrypted');
    assert.ok(!JSON.stringify(d).includes('ENC['));
  });
});
