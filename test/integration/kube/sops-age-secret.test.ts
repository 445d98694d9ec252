// The age keys of the site's SOPS files from a Secret of the bootstrap cluster (Flux's
// convention: keys ending in .agekey), read on a real kube-apiserver as bpa's service account
// with only deploy/rbac.yaml's grants, then used to decrypt a SOPS file made here.
import assert from 'node:assert/strict';
import { unwrapDataKey } from '../../../src/sops/age.js';
import { decryptFile } from '../../../src/sops/decrypt-file.js';
import { readAgeKeySecret } from '../../../src/sops/keys.js';
import { StalledError } from '../../../src/util/errors.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt } from '../../fakes/sops.js';
import { useRealKube } from '../../k8s/envtest.js';
import { createObject } from '../../k8s/kube-objects.js';

describe('SOPS age keys from a Secret of the bootstrap cluster (real kube-apiserver)', function () {
  this.timeout(60_000);
  const kube = useRealKube({ name: 'sops-age' });
  before(function () {
    const why = ageMissing();
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
  });

  it('reads every .agekey key (and only those) and decrypts with them', async () => {
    const a = ageKeygen();
    const b = ageKeygen();
    const unrelated = ageKeygen();
    await createObject(kube.env, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sops-age' },
      data: {
        'site.agekey': Buffer.from(`# public key: ${a.recipient}\n${a.identity}\n`).toString(
          'base64',
        ),
        'old.agekey': Buffer.from(`${b.identity}\n`).toString('base64'),
        'not-a-key.txt': Buffer.from(`${unrelated.identity}\n`).toString('base64'),
      },
    });
    const ids = await readAgeKeySecret(kube.env.bpaKubeConfig(), kube.env.namespace, 'sops-age');
    assert.deepEqual(new Set(ids), new Set([a.identity, b.identity]));
    const { text } = sopsEncrypt(
      secretDoc('login', { password: 'pw-from-cluster-key' }),
      [b.recipient],
      {
        encryptedRegex: '^(data|stringData)$',
      },
    );
    const out = await decryptFile('login.yaml', text, (m) => unwrapDataKey(m.age ?? [], ids));
    assert.deepEqual(out.problems, []);
    assert.deepEqual((out.documents.get(0) as { stringData: unknown }).stringData, {
      password: 'pw-from-cluster-key',
    });
    // Only the .agekey keys: a file for the other identity does not open.
    const other = sopsEncrypt(secretDoc('x', { password: 'y' }), [unrelated.recipient]);
    const refused = await decryptFile('x.yaml', other.text, (m) => unwrapDataKey(m.age ?? [], ids));
    assert.deepEqual(
      refused.problems.map((p) => p.code),
      ['SOPS_NO_KEY'],
    );
  });

  it('a missing Secret, or one without .agekey keys, is SOPS_KEY_UNREADABLE', async () => {
    const kc = kube.env.bpaKubeConfig();
    await assert.rejects(readAgeKeySecret(kc, kube.env.namespace, 'absent'), (err: unknown) => {
      assert.ok(err instanceof StalledError);
      assert.equal(err.code, 'SOPS_KEY_UNREADABLE');
      assert.match(err.message, /Secret .*\/absent does not exist/);
      return true;
    });
    await createObject(kube.env, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'no-agekey' },
      data: { 'age.txt': Buffer.from('AGE-SECRET-KEY-1X\n').toString('base64') },
    });
    await assert.rejects(
      readAgeKeySecret(kc, kube.env.namespace, 'no-agekey'),
      /SOPS_KEY_UNREADABLE|no key ending in \.agekey/,
    );
  });
});
