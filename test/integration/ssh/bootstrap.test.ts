import { strict as assert } from 'node:assert';
import { randomInt } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshPool, bootstrapKey, type KnownHosts, type SshOptions } from '../../../src/ssh/index.js';
import { ExecError } from '../../../src/util/exec-error.js';
import { StalledError } from '../../../src/util/errors.js';
import { canRunLab, startLab, type Lab, type LabHost } from '../../lab/lab.js';
import { NASTY_ARGS, pidsRunning, rejection, sleep, targetOf } from './helpers.js';

describe("bootstrapKey: installing bpa's key with default credentials (real sshd)", function () {
  this.timeout(30_000);
  let lab: Lab | undefined;
  let tmp: string;
  let pool: SshPool;
  let h1: LabHost;
  let h2: LabHost;
  const options = (): SshOptions => ({
    privateKeyPath: lab!.keyPath,
    knownHostsFile: join(tmp, 'ssh', 'known_hosts.json'),
  });
  const userTarget = (h: LabHost): ReturnType<typeof targetOf> => targetOf(h, lab!.user);
  const authorizedKeys = (h: LabHost): string =>
    join(h.dir, 'home', lab!.user, '.ssh', 'authorized_keys');
  const keyBody = (): string => lab!.publicKey.split(' ').slice(0, 2).join(' ');
  const countKey = (text: string): number =>
    text.split('\n').filter((l) => l.includes(keyBody())).length;

  before(async function () {
    this.timeout(90_000);
    const check = canRunLab();
    if (!check.ok) {
      console.log(`    skipping the bootstrap tests: ${check.reason}`);
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ssh-bootstrap-'));
    lab = await startLab({ hosts: 2 });
    [h1, h2] = lab.hosts as [LabHost, LabHost];
    pool = new SshPool(options());
  });

  after(async () => {
    await pool?.close();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('refuses key login for the password user before bootstrap', async () => {
    const err = await rejection(pool.run(userTarget(h1), ['true']));
    assert.equal(err.code, 'SSH_AUTH');
    assert.equal(err.retry, 'stalled');
  });

  it('installs the key with the password; key login then works for that user', async () => {
    const creds = { username: lab!.user, password: lab!.password };
    assert.equal(await bootstrapKey(userTarget(h1), creds, lab!.publicKey, options()), 'installed');
    const r = await pool.run(userTarget(h1), ['id', '-un']);
    assert.equal(r.stdout, `${lab!.user}\n`);
    const modes = await lab!.exec(h1.name, [
      'stat',
      '-c',
      '%a %U',
      `/home/${lab!.user}/.ssh`,
      `/home/${lab!.user}/.ssh/authorized_keys`,
    ]);
    assert.deepEqual(modes.stdout.trim().split('\n'), [`700 ${lab!.user}`, `600 ${lab!.user}`]);
    // Bootstrap pinned the host key, as any connection does.
    const pins = JSON.parse(await readFile(options().knownHostsFile, 'utf8')) as KnownHosts;
    assert.equal(pins[`${h1.ip}:22`]?.node, h1.name);
  });

  it('is idempotent: a second bootstrap finds the key present and adds nothing', async () => {
    const before = await readFile(authorizedKeys(h1), 'utf8');
    const creds = { password: lab!.password };
    assert.equal(await bootstrapKey(userTarget(h1), creds, lab!.publicKey, options()), 'present');
    const after = await readFile(authorizedKeys(h1), 'utf8');
    assert.equal(after, before);
    assert.equal(countKey(after), 1);
  });

  it('keeps existing keys, counts the key with other options or comment as present', async () => {
    const other =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBpaOtherKeyOtherKeyOtherKeyOtherKeyOtherKe operator';
    const home = `/home/${lab!.user}`;
    // An existing file without a final newline: the key must go on a line of its own.
    const setup = `mkdir -p ${home}/.ssh && printf '%s' '${other}' > ${home}/.ssh/authorized_keys && chown -R ${lab!.user} ${home}/.ssh`;
    await lab!.exec(h2.name, ['sh', '-c', setup]);
    const creds = { password: lab!.password };
    assert.equal(await bootstrapKey(userTarget(h2), creds, lab!.publicKey, options()), 'installed');
    const lines = (await readFile(authorizedKeys(h2), 'utf8')).split('\n');
    assert.deepEqual(lines, [other, lab!.publicKey.trim(), '']);

    const withOptions = `no-pty,from="198.18.0.0/15" ${keyBody()} renamed-comment`;
    await lab!.exec(h2.name, [
      'sh',
      '-c',
      `printf '%s\\n' '${withOptions}' > ${home}/.ssh/authorized_keys`,
    ]);
    assert.equal(await bootstrapKey(userTarget(h2), creds, lab!.publicKey, options()), 'present');
    assert.equal(await readFile(authorizedKeys(h2), 'utf8'), `${withOptions}\n`);
  });

  it('fails with a clear SSH_AUTH on a wrong password, never showing it', async () => {
    const password = `wrong-${lab!.password}`;
    const err = await rejection(
      bootstrapKey(userTarget(h1), { password }, lab!.publicKey, options()),
    );
    assert.ok(err instanceof ExecError);
    assert.equal(err.code, 'SSH_AUTH');
    assert.equal(err.retry, 'stalled');
    assert.match(
      err.message,
      new RegExp(`^${h1.name} \\(.*\\): password authentication as ${lab!.user} failed`),
    );
    const json = JSON.stringify(err.toJSON());
    assert.ok(!json.includes(password) && !err.message.includes(lab!.password));
  });

  it('rejects credentials for another user and a malformed public key', async () => {
    const wrongUser = rejection(
      bootstrapKey(userTarget(h1), { username: 'root', password: 'x' }, lab!.publicKey, options()),
    );
    assert.equal((await wrongUser).code, 'BOOTSTRAP_USER_MISMATCH');
    const badKey = await rejection(
      bootstrapKey(
        userTarget(h1),
        { password: lab!.password },
        'ssh-ed25519 AAAA\nrm -rf /',
        options(),
      ),
    );
    assert.ok(badKey instanceof StalledError);
    assert.equal(badKey.code, 'SSH_PUBLIC_KEY_INVALID');
  });

  it('quotes arguments for a user whose login shell is /bin/sh', async () => {
    const r = await pool.run(userTarget(h1), ['printf', '%s\\036', ...NASTY_ARGS]);
    assert.deepEqual(r.stdout.split('\x1e').slice(0, -1), NASTY_ARGS);
  });

  it('kills a timed-out command of a non-root user as well', async () => {
    const argv = ['sleep', `61.${randomInt(100000, 999999)}`];
    const failed = rejection(pool.run(userTarget(h1), argv, { timeoutMs: 800 }));
    // Until the remote sleep shows up (well before its 800 ms timeout), not a fixed wait.
    const up = Date.now() + 650;
    while (pidsRunning(argv).length === 0 && Date.now() < up) await sleep(10);
    assert.equal(pidsRunning(argv).length, 1, 'the remote sleep should be running');
    const err = await failed;
    assert.equal(err.code, 'COMMAND_TIMEOUT');
    const deadline = Date.now() + 1000;
    while (pidsRunning(argv).length > 0 && Date.now() < deadline) await sleep(20);
    assert.deepEqual(pidsRunning(argv), []);
  });

  it('prefixes `sudo -n` for the non-root user and fails clearly without sudo rights', async () => {
    const err = await rejection(pool.run(userTarget(h1), ['apt-get', 'update'], { sudo: true }));
    assert.ok(err instanceof ExecError);
    assert.ok(err.cmd.startsWith('sudo -n -- apt-get update'), err.cmd);
    // The lab user may not use sudo; on a machine without sudo the shell cannot find it at all.
    assert.ok(['SUDO_UNAVAILABLE', 'SUDO_DENIED'].includes(err.code), err.code);
    assert.equal(err.retry, 'stalled');
    assert.match(
      err.message,
      new RegExp(`^${h1.name}: sudo -n -- apt-get update exited \\d+: .*sudo`),
    );
  });
});
