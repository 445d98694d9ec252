import { strict as assert } from 'node:assert';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCredentialsFile, readSecretCredentials } from '../../../src/ssh/index.js';
import { BpaError, StalledError, TransientError } from '../../../src/util/errors.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { rejection } from './helpers.js';

const SECRET_PASSWORD = 'S3cr3t: "pa ss"#$(x)';

describe('bootstrap credentials from a file or a Kubernetes Secret', () => {
  let tmp: string;
  let n = 0;
  const file = async (text: string, mode = 0o600): Promise<string> => {
    const path = join(tmp, `creds-${n++}`);
    await writeFile(path, text);
    await chmod(path, mode);
    return path;
  };
  const noSecretIn = (err: BpaError): void => {
    assert.ok(!err.message.includes(SECRET_PASSWORD), err.message);
    assert.ok(!JSON.stringify(err.toJSON()).includes('pa ss'));
  };

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ssh-creds-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  describe('readCredentialsFile', () => {
    it('reads YAML, keeping every scalar as written', async () => {
      const path = await file(`username: debian\npassword: '${SECRET_PASSWORD}'\n`);
      assert.deepEqual(await readCredentialsFile(path), {
        username: 'debian',
        password: SECRET_PASSWORD,
      });
      const numeric = await file('password: 0123\n');
      assert.deepEqual(await readCredentialsFile(numeric), { password: '0123' });
    });

    it('reads KEY=VALUE lines with comments, either case and optional quotes', async () => {
      const path = await file(
        `# default login of new nodes\nUSERNAME=ubuntu\nPASSWORD="${SECRET_PASSWORD}"\n`,
      );
      assert.deepEqual(await readCredentialsFile(path), {
        username: 'ubuntu',
        password: SECRET_PASSWORD,
      });
      const plain = await file('password=a=b c\n');
      assert.deepEqual(await readCredentialsFile(plain), { password: 'a=b c' });
    });

    it('refuses a file all users may read, warns when its group may', async () => {
      const open = await file(`password: x\n`, 0o644);
      const err = await rejection(readCredentialsFile(open));
      assert.ok(err instanceof StalledError);
      assert.equal(err.code, 'CREDENTIALS_INSECURE');
      assert.match(err.message, /mode 0644.*chmod 600/);
      const group = await file(`password: x\n`, 0o640);
      const warnings: string[] = [];
      assert.deepEqual(await readCredentialsFile(group, { warn: (m) => warnings.push(m) }), {
        password: 'x',
      });
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /group/);
    });

    it('reports a missing file, a missing password and bad YAML without showing the secret', async () => {
      const missing = await rejection(readCredentialsFile(join(tmp, 'absent')));
      assert.equal(missing.code, 'CREDENTIALS_MISSING');
      const noPassword = await rejection(readCredentialsFile(await file('username: debian\n')));
      assert.equal(noPassword.code, 'CREDENTIALS_INVALID');
      const badYaml = await rejection(
        readCredentialsFile(await file(`username: a\npassword: [${SECRET_PASSWORD}\n`)),
      );
      assert.equal(badYaml.code, 'CREDENTIALS_INVALID');
      noSecretIn(badYaml);
    });
  });

  describe('readSecretCredentials', () => {
    let kube: FakeKube;
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const putSecret = (name: string, data: Record<string, string>): void => {
      kube.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: 'bpa' },
        type: 'Opaque',
        data,
      });
    };

    before(async () => {
      kube = await startFakeKube();
    });
    after(async () => {
      await kube?.stop();
    });
    afterEach(() => kube.clearFaults());

    it('decodes username and password from the Secret data', async () => {
      putSecret('node-login', { username: b64('debian'), password: b64(SECRET_PASSWORD) });
      const creds = await readSecretCredentials(kube.kubeConfig(), 'bpa', 'node-login');
      assert.deepEqual(creds, { username: 'debian', password: SECRET_PASSWORD });
      putSecret('password-only', { password: b64('pw') });
      assert.deepEqual(await readSecretCredentials(kube.kubeConfig(), 'bpa', 'password-only'), {
        password: 'pw',
      });
    });

    it('says which Secret is missing, incomplete, forbidden or unreachable', async () => {
      const missing = await rejection(readSecretCredentials(kube.kubeConfig(), 'bpa', 'absent'));
      assert.ok(missing instanceof StalledError);
      assert.equal(missing.code, 'CREDENTIALS_MISSING');
      assert.match(missing.message, /Secret bpa\/absent/);

      putSecret('no-password', { username: b64('debian') });
      const incomplete = await rejection(
        readSecretCredentials(kube.kubeConfig(), 'bpa', 'no-password'),
      );
      assert.equal(incomplete.code, 'CREDENTIALS_INVALID');

      kube.fail(
        { method: 'GET', pathPrefix: '/api/v1/namespaces/bpa/secrets' },
        { code: 403, message: 'forbidden' },
      );
      const forbidden = await rejection(
        readSecretCredentials(kube.kubeConfig(), 'bpa', 'node-login'),
      );
      assert.equal(forbidden.code, 'CREDENTIALS_FORBIDDEN');
      kube.clearFaults();

      kube.fail(
        { method: 'GET', pathPrefix: '/api/v1/namespaces/bpa/secrets' },
        { code: 500, message: 'etcd down' },
      );
      const down = await rejection(readSecretCredentials(kube.kubeConfig(), 'bpa', 'node-login'));
      assert.ok(down instanceof TransientError);
      assert.equal(down.code, 'KUBE_API_ERROR');
    });
  });
});
