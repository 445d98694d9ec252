import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { masker, redact, sanitize } from '../../../src/util/redact.js';
import { excerpt } from '../../../src/util/tail.js';

/** Generates a throwaway key (never a real one in the repository): its text and body lines. */
async function freshKey(type: 'ed25519' | 'rsa'): Promise<{ text: string; body: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'bpa-redact-'));
  try {
    const args = ['-q', '-N', '', '-f', join(dir, 'k'), '-t', type];
    execFileSync('ssh-keygen', type === 'rsa' ? [...args, '-b', '2048', '-m', 'PEM'] : args);
    const text = await readFile(join(dir, 'k'), 'utf8');
    return { text, body: text.split('\n').filter((l) => l && !l.startsWith('-----')) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('redact: what may leave the state directory', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['bearer token', 'curl -H "Authorization: Bearer abc.DEF-123_xyz"', /Authorization: \*\*\*/],
    ['bearer on its own', 'sending Bearer s3cr3tT0kenValue to the API', /Bearer \*\*\* to the API/],
    ['basic credentials', 'header Basic dXNlcjpwYXNzd29yZA== rejected', /Basic \*\*\* rejected/],
    [
      'password=',
      'ansible_password=hunter2 ansible_user=root',
      /ansible_password=\*\*\* ansible_user=root/,
    ],
    ['password: (YAML)', 'password: "correct horse"', /password: \*\*\*/],
    [
      'JSON secret',
      '{"client_secret": "abc123", "name": "x"}',
      /"client_secret": \*\*\*, "name": "x"/,
    ],
    ['flag', 'installer --token=t0k3n --cluster east', /--token=\*\*\* --cluster east/],
    ['env style _PASS', 'ANSIBLE_BECOME_PASS=letmein', /ANSIBLE_BECOME_PASS=\*\*\*/],
    [
      'URL credentials',
      'fetch https://bpa:tok@git.example/site.git failed',
      /https:\/\/\*\*\*@git\.example/,
    ],
    [
      'JWT',
      'token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlX2hlcmU ok',
      /token \*\*\* ok/,
    ],
    ['GitHub token', 'using ghp_0123456789abcdefghijABCDEFGHIJ012345 now', /using \*\*\* now/],
    [
      'docker login -p',
      'docker login -u admin -p Hunter2 registry.example:5000',
      /^docker login -u admin -p \*\*\* registry\.example:5000$/,
    ],
    [
      'sshpass -p',
      'sshpass -p Hunter2 ssh root@10.0.0.1',
      /^sshpass -p \*\*\* ssh root@10\.0\.0\.1$/,
    ],
    ['sshpass -pX', 'sshpass -pHunter2 scp a b', /^sshpass -p\*\*\* scp a b$/],
    ['mysql -pX', 'mysql -u root -pHunter2 keystone', /^mysql -u root -p\*\*\* keystone$/],
    ['--password X', 'helm repo add --password Hunter2 x', /--password \*\*\* x$/],
    ['--password=X', 'tool --password=Hunter2 --x', /--password=\*\*\* --x$/],
  ];
  // Secrets as installers print them: a command as a JSON list (Ansible's "cmd") or a Python
  // repr, environment variables, values with shell characters, here-strings. Each row: the
  // text, the secret that must be gone, and what must stay readable.
  const printed: Array<[string, string, string, string]> = [
    [
      'docker login -p in Ansible JSON cmd',
      'fatal: [m1]: FAILED! => {"cmd": ["docker", "login", "-u", "admin", "-p", "s3cretpass", "reg:5000"], "rc": 1}',
      's3cretpass',
      '"cmd": ["docker", "login", "-u", "admin", "-p", ***, "reg:5000"], "rc": 1}',
    ],
    [
      'sshpass -p in a Python repr',
      "Command ['sshpass', '-p', 'secret', 'ssh', 'root@10.0.0.1'] returned 255",
      'secret',
      "Command ['sshpass', '-p', ***, 'ssh', 'root@10.0.0.1'] returned 255",
    ],
    [
      'an attached -p in a list',
      '["sshpass", "-pHunter2", "scp", "a", "b"]',
      'Hunter2',
      '["sshpass", "-p***", "scp", "a", "b"]',
    ],
    [
      '--password in a JSON list',
      '"cmd": ["helm", "repo", "add", "--password", "s3cret", "x"]',
      's3cret',
      '"cmd": ["helm", "repo", "add", "--password", ***, "x"]',
    ],
    ['SSHPASS=', 'SSHPASS=secret sshpass -e ssh root@m1', 'secret', '*** sshpass -e ssh root@m1'],
    ['-p with & in it', 'sshpass -p s3cret&pass ssh m1', 'pass ssh', 'sshpass -p *** ssh m1'],
    [
      '-p with | in it',
      'docker login -u a -p s3c|ret reg',
      'ret reg',
      'docker login -u a -p *** reg',
    ],
    [
      '-p with ; in it',
      'docker login -u a -p s3c;ret reg',
      'ret reg',
      'docker login -u a -p *** reg',
    ],
    ['--password with & in it', 'helm --password s3c&ret x', 'ret x', 'helm --password *** x'],
    ['password= with ; in it', 'ansible_password=hun;ter2 x', 'ter2', 'ansible_password=*** x'],
    [
      '--password-stdin <<< here-string',
      'docker login -u admin --password-stdin <<< s3cret reg:5000',
      's3cret',
      'docker login -u admin --password-stdin <<< *** reg:5000',
    ],
    [
      'quoted here-string',
      'podman login --password-stdin -u admin reg <<<"s3 cret"',
      's3 cret',
      'podman login --password-stdin -u admin reg <<<***',
    ],
  ];
  for (const [name, input, secret, want] of printed) {
    it(`masks ${name}`, () => {
      const out = redact(input);
      assert.ok(!out.includes(secret), out);
      assert.ok(out.endsWith(want), out);
    });
  }

  it('still ends a command at a separator with a space: the next command keeps its -p', () => {
    assert.equal(
      redact('docker login -u a -p s3cret reg && ssh -p 22 root@m1; scp -p a b'),
      'docker login -u a -p *** reg && ssh -p 22 root@m1; scp -p a b',
    );
    for (const text of [
      '["ssh", "-p", "22", "root@m1"]',
      "['scp', '-p', 'a', 'b']",
      '["mysql", "-u", "root", "-p", "keystone"]',
      'docker login --password-stdin -u admin reg',
    ])
      assert.equal(redact(text), text);
  });

  it('keeps a -p that is not a password: ssh -p 22, mysql -p (asks), ansible -p', () => {
    for (const text of ['ssh -p 22 root@10.0.0.1', 'mysql -u root -p keystone', 'scp -p a b'])
      assert.equal(redact(text), text);
  });
  for (const [name, input, want] of cases) {
    it(`masks a ${name}`, () => {
      const out = redact(input);
      assert.match(out, want, out);
    });
  }

  it('keeps what an operator needs to read: paths, versions, digests, task names, hosts', () => {
    const text = [
      'TASK [kubespray-defaults : Gathering_Facts_for_HostMaster1] failed on master-1 (198.18.0.13)',
      'log: /var/lib/bpa/clusters/cluster-east/logs/provision-2026-11-24T01-15-33-541Z.log',
      'jq=1.7.1-3 is not available; python3-apt_2.6.0_amd64',
      'revision sha256:e4dccdfade2253ff10ce015a0570163d5d837ec9acbaf8ddf90888beea4093ef',
      'Permission denied (publickey,password).',
      'Basic authentication is not configured',
    ].join('\n');
    assert.equal(redact(text), text);
  });

  it('masks a whole private key block, and one the excerpt cut in half', async () => {
    for (const type of ['ed25519', 'rsa'] as const) {
      const key = await freshKey(type);
      const whole = redact(`before\n${key.text}after`);
      assert.equal(whole, 'before\n[private key redacted]\nafter');
      // The tail of an output that printed a key: its BEGIN line is gone.
      const cut = key.text.split('\n').slice(2).join('\n');
      const out = redact(`exit 1: ${cut.split('\n').join(' | ')} | done`);
      for (const line of key.body.slice(1)) assert.ok(!out.includes(line), `${type}: ${out}`);
      assert.match(out, /done$/);
      // Lines of a key printed without any marker (say, base64 of it in a debug dump).
      const bare = redact(key.body.slice(1, -1).join('\n'));
      for (const line of key.body.slice(1, -1)) assert.ok(!bare.includes(line), bare);
    }
  });

  it('an excerpt is the short, redacted end of an output', async () => {
    const key = await freshKey('ed25519');
    const output = [
      ...Array.from({ length: 50 }, (_, i) => `line ${i}`),
      'Authorization: Bearer abcdefgh12345678',
      key.text,
      'fatal: the installer failed',
    ].join('\n');
    const out = excerpt(output);
    assert.ok(out.split('\n').length <= 5, out);
    assert.match(out, /fatal: the installer failed$/);
    assert.doesNotMatch(out, /abcdefgh12345678/);
    for (const line of key.body) assert.ok(!out.includes(line), out);
    assert.ok(Buffer.byteLength(excerpt('x'.repeat(10_000))) <= 1004);
  });

  it('sanitize removes URL credentials only, in linear time on any input', () => {
    assert.equal(
      sanitize('fetch https://bpa:s3cret@git.example/site.git failed; token=abc'),
      'fetch https://***@git.example/site.git failed; token=abc',
    );
    // A long run of letters without "://" or "@" once took seconds (quadratic backtracking).
    const long = `${'b'.repeat(1_000_000)} http://${'u'.repeat(5000)}`;
    const started = performance.now();
    assert.equal(sanitize(long), long);
    assert.ok(performance.now() - started < 1000, 'a megabyte is scanned in well under a second');
  });

  it('a masker hides the secrets bpa handed a program, and URL credentials, line by line', () => {
    const mask = masker(['hunter2', '']);
    assert.equal(
      mask('ansible: password hunter2 for https://u:p@repo.example, again hunter2'),
      'ansible: password *** for https://***@repo.example, again ***',
    );
  });
});
