import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syncRepo } from '../../../src/source/git.js';
import { verifyCommit, type TrustConfig } from '../../../src/source/verify.js';
import { BpaError } from '../../../src/util/errors.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

const SITE = {
  'sites/edge/site.yaml': 'kind: Site\nname: edge\n',
  'README.md': '# site repo\n',
};

interface Out {
  stdout: string;
  stderr: string;
}

function exec(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string | Buffer } = {},
): Promise<Out> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      { env: opts.env, cwd: opts.cwd, timeout: 30_000, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
    // A command that never reads its input may exit before the write lands.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.input ?? '');
  });
}

async function expectCode(p: Promise<unknown>, code: string): Promise<BpaError> {
  try {
    await p;
  } catch (err: unknown) {
    assert.ok(err instanceof BpaError, `expected a BpaError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.retry, 'stalled');
    return err;
  }
  assert.fail(`expected ${code}`);
}

/** Processes whose command line mentions `needle` (read from /proc; nothing is signalled). */
async function processesMentioning(needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      if (cmdline.includes(needle)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

describe('verifyCommit with real gpg, ssh-keygen and git http-backend', function () {
  this.timeout(120_000);
  let server: GitServer;
  let tmp: string;
  let url: string;
  let work: string;
  let cache: string;
  let gitEnv: NodeJS.ProcessEnv;
  const pgp = { trusted: { home: '', fpr: '' }, other: { home: '', fpr: '' } };
  const ssh = { trusted: '', other: '', otherFingerprint: '' };
  const files = { trustedAsc: '', bothBinary: '', allowedSigners: '', garbage: '' };
  let full: TrustConfig;

  const git = (
    args: string[],
    env: NodeJS.ProcessEnv = {},
    input?: string | Buffer,
  ): Promise<Out> => exec('git', args, { cwd: work, env: { ...gitEnv, ...env }, input });

  async function pgpKey(name: string): Promise<{ home: string; fpr: string }> {
    const home = join(tmp, `gnupg-${name}`);
    await mkdir(home, { mode: 0o700 });
    const env = { PATH: process.env.PATH, GNUPGHOME: home };
    await exec(
      'gpg',
      [
        '--batch',
        '--passphrase',
        '',
        '--quick-gen-key',
        `bpa ${name} <${name}@example.org>`,
        'ed25519',
        'sign',
        'never',
      ],
      { env },
    );
    const listed = await exec('gpg', ['--list-keys', '--with-colons'], { env });
    const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(listed.stdout)?.[1];
    assert.ok(fpr, listed.stdout);
    return { home, fpr };
  }

  async function sshKey(name: string): Promise<string> {
    const file = join(tmp, `ssh-${name}`);
    await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
    return file;
  }

  /** Commits a change on top of main in the clone, pushes it to `branch`, syncs the cache. */
  async function pushCommit(
    branch: string,
    sign: string[],
    env: NodeJS.ProcessEnv = {},
  ): Promise<string> {
    await git(['checkout', '-q', '-B', branch, 'origin/main']);
    await writeFile(join(work, 'sites/edge', `${branch}.yaml`), `change: ${branch}\n`);
    await git(['add', '-A']);
    await git([...sign, 'commit', '-q', '-m', `change on ${branch}`], env);
    const sha = (await git(['rev-parse', 'HEAD'])).stdout.trim();
    await git(['push', '-q', 'origin', `HEAD:refs/heads/${branch}`]);
    return syncTo(branch, sha);
  }

  async function syncTo(branch: string, sha: string): Promise<string> {
    const { revision } = await syncRepo({ url, ref: branch, dir: cache });
    assert.equal(revision.commit, sha);
    return sha;
  }

  /** Writes a raw commit object, pushes it to `branch` and syncs the cache to it. */
  async function pushRaw(branch: string, raw: string | Buffer): Promise<string> {
    const sha = (
      await git(['hash-object', '-t', 'commit', '-w', '--stdin'], {}, raw)
    ).stdout.trim();
    await git(['push', '-q', 'origin', `${sha}:refs/heads/${branch}`]);
    return syncTo(branch, sha);
  }

  const signPgp = (key: { fpr: string }): string[] => [
    '-c',
    'gpg.program=gpg',
    '-c',
    `user.signingkey=${key.fpr}`,
    '-c',
    'commit.gpgsign=true',
  ];
  const signSsh = (key: string): string[] => [
    '-c',
    'gpg.format=ssh',
    '-c',
    `user.signingkey=${key}.pub`,
    '-c',
    'commit.gpgsign=true',
  ];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-verify-test-'));
    cache = join(tmp, 'cache');
    work = join(tmp, 'work');
    await mkdir(join(tmp, 'home'));
    gitEnv = {
      PATH: process.env.PATH,
      HOME: join(tmp, 'home'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LANG: 'C',
      GIT_AUTHOR_NAME: 'A Signer',
      GIT_AUTHOR_EMAIL: 'signer@example.org',
      GIT_COMMITTER_NAME: 'A Signer',
      GIT_COMMITTER_EMAIL: 'signer@example.org',
    };
    server = await startGitServer();
    url = await server.createRepo('site', { files: SITE });
    await exec('git', ['clone', '-q', url, work], { env: gitEnv });

    pgp.trusted = await pgpKey('trusted');
    pgp.other = await pgpKey('other');
    files.trustedAsc = join(tmp, 'trusted.asc');
    const armored = await exec('gpg', ['--armor', '--export', pgp.trusted.fpr], {
      env: { PATH: process.env.PATH, GNUPGHOME: pgp.trusted.home },
    });
    await writeFile(files.trustedAsc, armored.stdout);
    // Several keys in one binary file: gpg --export of each, concatenated.
    const binary: Buffer[] = [];
    for (const key of [pgp.trusted, pgp.other]) {
      const out = await new Promise<Buffer>((resolve, reject) =>
        execFile(
          'gpg',
          ['--export', key.fpr],
          { env: { PATH: process.env.PATH, GNUPGHOME: key.home }, encoding: 'buffer' },
          (err, stdout) => (err ? reject(err) : resolve(stdout)),
        ),
      );
      binary.push(out);
    }
    files.bothBinary = join(tmp, 'both.gpg');
    await writeFile(files.bothBinary, Buffer.concat(binary));
    assert.ok(!Buffer.concat(binary).toString('latin1').includes('-----BEGIN'));

    ssh.trusted = await sshKey('trusted');
    ssh.other = await sshKey('other');
    ssh.otherFingerprint = (
      await exec('ssh-keygen', ['-l', '-f', `${ssh.other}.pub`])
    ).stdout.split(' ')[1] as string;
    const [type, key] = (await readFile(`${ssh.trusted}.pub`, 'utf8')).trim().split(' ');
    files.allowedSigners = join(tmp, 'allowed_signers');
    await writeFile(files.allowedSigners, `ops@example.org ${type} ${key}\n`);
    files.garbage = join(tmp, 'garbage.asc');
    await writeFile(files.garbage, 'not a key\n');
    full = { openpgpKeys: files.trustedAsc, allowedSigners: files.allowedSigners };
  });

  after(async () => {
    // The gpg-agents that key generation and signing started, each by its PID.
    for (const key of [pgp.trusted, pgp.other]) {
      if (!key.home) continue;
      const out = await exec(
        'gpg-connect-agent',
        ['--homedir', key.home, '--no-autostart', 'getinfo pid', '/bye'],
        { env: { PATH: process.env.PATH } },
      ).catch(() => ({ stdout: '', stderr: '' }));
      const pid = /^D (\d+)$/m.exec(out.stdout)?.[1];
      if (pid) {
        try {
          process.kill(Number(pid), 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
    }
    await server?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('accepts a commit signed by a trusted OpenPGP key, in a shallow cache', async () => {
    const sha = await pushCommit('pgp-good', signPgp(pgp.trusted), {
      GNUPGHOME: pgp.trusted.home,
    });
    assert.ok(existsSync(join(cache, '.git', 'shallow')), 'the cache is a shallow clone');
    const verified = await verifyCommit(cache, sha, full);
    assert.deepEqual(verified, { commit: sha, method: 'openpgp', signer: pgp.trusted.fpr });
    // The same result with only the OpenPGP half of the trust configured.
    const alone = await verifyCommit(cache, sha, { openpgpKeys: files.trustedAsc });
    assert.equal(alone.signer, pgp.trusted.fpr);
  });

  it('accepts a commit signed by a trusted SSH key and names the principal', async () => {
    const sha = await pushCommit('ssh-good', signSsh(ssh.trusted));
    const raw = (await git(['cat-file', 'commit', sha])).stdout;
    assert.match(raw, /^gpgsig -----BEGIN SSH SIGNATURE-----$/m);
    const verified = await verifyCommit(cache, sha, { allowedSigners: files.allowedSigners });
    assert.deepEqual(verified, { commit: sha, method: 'ssh', signer: 'ops@example.org' });
  });

  it('verifies the exact bytes of a message that is not UTF-8', async () => {
    await git(['checkout', '-q', '-B', 'latin1', 'origin/main']);
    await writeFile(join(work, 'latin1.txt'), 'x\n');
    await git(['add', '-A']);
    const message = join(tmp, 'latin1-message');
    await writeFile(message, Buffer.from('caf\xe9 na\xefve\n', 'latin1'));
    await git(
      [
        ...signPgp(pgp.trusted),
        '-c',
        'i18n.commitEncoding=ISO-8859-1',
        'commit',
        '-q',
        '-F',
        message,
      ],
      { GNUPGHOME: pgp.trusted.home },
    );
    const sha = (await git(['rev-parse', 'HEAD'])).stdout.trim();
    assert.match((await git(['cat-file', 'commit', sha])).stdout, /^encoding ISO-8859-1$/m);
    await git(['push', '-q', 'origin', 'HEAD:refs/heads/latin1']);
    await syncTo('latin1', sha);
    assert.equal((await verifyCommit(cache, sha, full)).signer, pgp.trusted.fpr);
  });

  it('refuses an unsigned commit, whatever the trust', async () => {
    const sha = await pushCommit('unsigned', []);
    for (const trust of [full, {}]) {
      const err = await expectCode(verifyCommit(cache, sha, trust), 'COMMIT_UNSIGNED');
      assert.match(err.message, new RegExp(`commit ${sha.slice(0, 12)} is not signed`));
      assert.match(err.message, /signatures are required/);
    }
    // A person's plumbing commit on the server is just as unsigned.
    const person = await server.commitAs('site', { 'sites/edge/p.yaml': 'p: 1\n' }, 'by hand');
    await syncTo('main', person);
    await expectCode(verifyCommit(cache, person, full), 'COMMIT_UNSIGNED');
  });

  it('refuses an OpenPGP signature by a key that is not trusted, naming the key', async () => {
    const sha = await pushCommit('pgp-other', signPgp(pgp.other), { GNUPGHOME: pgp.other.home });
    const err = await expectCode(verifyCommit(cache, sha, full), 'COMMIT_SIGNATURE_UNTRUSTED');
    assert.match(err.message, new RegExp(sha.slice(0, 12)));
    assert.match(err.message, new RegExp(pgp.other.fpr));
    assert.match(err.message, /not among the trusted keys/);
    // Trusted once its key is in the file (binary, several keys in one file).
    const verified = await verifyCommit(cache, sha, { openpgpKeys: files.bothBinary });
    assert.deepEqual(verified, { commit: sha, method: 'openpgp', signer: pgp.other.fpr });
  });

  it('refuses an SSH signature by a key not in allowed_signers, naming its fingerprint', async () => {
    const sha = await pushCommit('ssh-other', signSsh(ssh.other));
    const err = await expectCode(verifyCommit(cache, sha, full), 'COMMIT_SIGNATURE_UNTRUSTED');
    assert.match(err.message, new RegExp(sha.slice(0, 12)));
    assert.ok(ssh.otherFingerprint.startsWith('SHA256:'), ssh.otherFingerprint);
    assert.ok(err.message.includes(ssh.otherFingerprint), err.message);
  });

  it('refuses a commit altered after it was signed (OpenPGP and SSH)', async () => {
    for (const [branch, sign, env, why] of [
      ['pgp-orig', signPgp(pgp.trusted), { GNUPGHOME: pgp.trusted.home }, /BAD OpenPGP signature/],
      ['ssh-orig', signSsh(ssh.trusted), {}, /SSH signature by ops@example\.org .*does not verify/],
    ] as const) {
      const sha = await pushCommit(branch, sign, env);
      await verifyCommit(cache, sha, full);
      const raw = (await git(['cat-file', 'commit', sha])).stdout;
      const forged = raw.replace(`change on ${branch}`, 'a different change');
      assert.notEqual(forged, raw);
      assert.match(forged, /^gpgsig /m, 'the forged commit keeps the original signature');
      const tampered = await pushRaw(`${branch}-tampered`, forged);
      assert.notEqual(tampered, sha);
      const err = await expectCode(
        verifyCommit(cache, tampered, full),
        'COMMIT_SIGNATURE_UNTRUSTED',
      );
      assert.match(err.message, new RegExp(tampered.slice(0, 12)));
      assert.match(err.message, why);
    }
  });

  it('refuses an SSH signature of the right bytes made for another purpose than git', async () => {
    const sha = await pushCommit('ssh-ns', signSsh(ssh.trusted));
    const raw = (await git(['cat-file', 'commit', sha])).stdout;
    const [head = '', ...rest] = raw.split('\n\n');
    const headers = head.split('\n');
    const kept = headers.filter((l, i) => {
      if (l.startsWith('gpgsig ')) return false;
      // Continuation lines of the signature header.
      return !(l.startsWith(' ') && headers.slice(0, i).some((h) => h.startsWith('gpgsig ')));
    });
    const payload = `${kept.join('\n')}\n\n${rest.join('\n\n')}`;
    const payloadFile = join(tmp, 'ns-payload');
    await writeFile(payloadFile, payload);
    await exec('ssh-keygen', ['-q', '-Y', 'sign', '-n', 'file', '-f', ssh.trusted, payloadFile]);
    const sig = (await readFile(`${payloadFile}.sig`, 'utf8')).trimEnd();
    const resigned = `${kept.join('\n')}\ngpgsig ${sig.split('\n').join('\n ')}\n\n${rest.join('\n\n')}`;
    const other = await pushRaw('ssh-ns-file', resigned);
    const err = await expectCode(verifyCommit(cache, other, full), 'COMMIT_SIGNATURE_UNTRUSTED');
    assert.match(err.message, /by ops@example\.org .*does not verify.*namespace/);
  });

  it('needs the trust that matches the signature', async () => {
    const pgpSha = await pushCommit('pgp-trust', signPgp(pgp.trusted), {
      GNUPGHOME: pgp.trusted.home,
    });
    for (const trust of [
      { allowedSigners: files.allowedSigners },
      { openpgpKeys: join(tmp, 'no-such-file.asc') },
      { openpgpKeys: files.garbage },
    ]) {
      const err = await expectCode(verifyCommit(cache, pgpSha, trust), 'SIGNATURE_TRUST_MISSING');
      assert.match(err.message, /OpenPGP/);
    }
    const sshSha = await pushCommit('ssh-trust', signSsh(ssh.trusted));
    for (const trust of [
      { openpgpKeys: files.trustedAsc },
      { allowedSigners: join(tmp, 'no-such-allowed-signers') },
    ]) {
      const err = await expectCode(verifyCommit(cache, sshSha, trust), 'SIGNATURE_TRUST_MISSING');
      assert.match(err.message, /SSH/);
    }
  });

  it('leaves no scratch directory, no gpg-agent, and never touches GNUPGHOME', async () => {
    const decoy = join(tmp, 'decoy-gnupg');
    await mkdir(decoy, { mode: 0o700 });
    const saved = process.env.GNUPGHOME;
    process.env.GNUPGHOME = decoy;
    const scratch = async (): Promise<string[]> =>
      (await readdir(tmpdir())).filter((n) => n.startsWith('bpa-sigcheck-'));
    const before = await scratch();
    try {
      const good = await pushCommit('hygiene-pgp', signPgp(pgp.trusted), {
        GNUPGHOME: pgp.trusted.home,
      });
      await verifyCommit(cache, good, full);
      const bad = await pushCommit('hygiene-other', signPgp(pgp.other), {
        GNUPGHOME: pgp.other.home,
      });
      await expectCode(verifyCommit(cache, bad, full), 'COMMIT_SIGNATURE_UNTRUSTED');
      const sshSha = await pushCommit('hygiene-ssh', signSsh(ssh.trusted));
      await verifyCommit(cache, sshSha, full);
    } finally {
      if (saved === undefined) delete process.env.GNUPGHOME;
      else process.env.GNUPGHOME = saved;
    }
    assert.deepEqual(await readdir(decoy), []);
    assert.deepEqual(
      (await scratch()).filter((n) => !before.includes(n)),
      [],
      'scratch directories removed',
    );
    assert.deepEqual(await processesMentioning('bpa-sigcheck-'), []);
  });
});
