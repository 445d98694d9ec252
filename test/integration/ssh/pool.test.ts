import { strict as assert } from 'node:assert';
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshPool, remoteCommand, type SshOptions } from '../../../src/ssh/index.js';
import { ExecError } from '../../../src/util/exec-error.js';
import { StalledError } from '../../../src/util/errors.js';
import { canRunLab, startLab, type Lab, type LabHost } from '../../lab/lab.js';
import { NASTY_ARGS, pidsRunning, rejection, sleep, targetOf } from './helpers.js';

describe('SshPool against lab hosts (real sshd)', function () {
  this.timeout(30_000);
  let lab: Lab | undefined;
  let tmp: string;
  let pool: SshPool;
  let h1: LabHost;
  let h2: LabHost;
  const options = (extra: Partial<SshOptions> = {}): SshOptions => ({
    privateKeyPath: lab!.keyPath,
    knownHostsFile: join(tmp, 'ssh', 'known_hosts.json'),
    ...extra,
  });

  before(async function () {
    this.timeout(90_000);
    const check = canRunLab();
    if (!check.ok) {
      console.log(`    skipping the SSH pool tests: ${check.reason}`);
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ssh-pool-'));
    lab = await startLab({ hosts: 2 });
    [h1, h2] = lab.hosts as [LabHost, LabHost];
    pool = new SshPool(options());
  });

  after(async () => {
    await pool?.close();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('runs a command and returns its output untrimmed', async () => {
    const r = await pool.run(targetOf(h1), ['sh', '-c', 'hostname; echo to-stderr >&2']);
    assert.equal(r.stdout, `${h1.name}\n`);
    assert.equal(r.stderr, 'to-stderr\n');
  });

  it('reuses one connection for every command to a target', async () => {
    const conn = async (): Promise<string> =>
      (await pool.run(targetOf(h1), ['sh', '-c', 'echo "$SSH_CONNECTION"'])).stdout.trim();
    const first = await conn();
    const seen = await Promise.all(Array.from({ length: 12 }, conn));
    // SSH_CONNECTION holds the client's address and port: one TCP connection for all of them.
    assert.match(first, /^\S+ \d+ \S+ 22$/);
    assert.deepEqual(new Set(seen), new Set([first]));
    assert.equal(pool.openConnections, 1);
    await pool.run(targetOf(h2), ['true']);
    assert.equal(pool.openConnections, 2);
  });

  it('passes stdin and environment variables', async () => {
    const r = await pool.run(targetOf(h1), ['sh', '-c', 'cat; printf "%s" "$BPA_X"'], {
      stdin: 'from stdin\n',
      env: { BPA_X: "it's $(not) run" },
    });
    assert.equal(r.stdout, "from stdin\nit's $(not) run");
  });

  it('reports a non-zero exit with its code, command, host and stderr tail', async () => {
    const script = 'for i in $(seq 1 40); do echo "err line $i" >&2; done; echo out; exit 3';
    const err = await rejection(pool.run(targetOf(h1), ['sh', '-c', script]));
    assert.ok(err instanceof ExecError);
    assert.equal(err.exitCode, 3);
    assert.equal(err.code, 'REMOTE_COMMAND_FAILED');
    assert.equal(err.retry, 'transient');
    assert.equal(err.host, h1.name);
    assert.match(err.cmd, /^sh -c 'for i in/);
    assert.match(err.message, new RegExp(`^${h1.name}: sh -c .* exited 3: err line 40$`));
    const lines = err.stderrTail.split('\n');
    assert.equal(lines.length, 20);
    assert.match(lines[0]!, /err line 21$/);
    assert.equal(err.stdoutTail, 'out');
    assert.equal(err.toJSON().exitCode, 3);
  });

  it('returns the whole stdout for an exit code the caller accepts, and still fails on others', async () => {
    // 100 lines, far past the 20-line / 2 KiB tail an ExecError keeps for display.
    const script = 'seq 1 100; echo warn >&2; exit "$0"';
    const r = await pool.run(targetOf(h1), ['sh', '-c', script, '1'], { okExitCodes: [0, 1] });
    assert.equal(r.exitCode, 1);
    assert.equal(r.stdout, `${Array.from({ length: 100 }, (_, i) => i + 1).join('\n')}\n`);
    assert.equal(r.stderr, 'warn\n');
    const ok = await pool.run(targetOf(h1), ['sh', '-c', script, '0'], { okExitCodes: [0, 1] });
    assert.equal(ok.exitCode, 0);
    const err = await rejection(
      pool.run(targetOf(h1), ['sh', '-c', script, '2'], { okExitCodes: [0, 1] }),
    );
    assert.ok(err instanceof ExecError);
    assert.equal(err.exitCode, 2);
    const notAccepted = await rejection(pool.run(targetOf(h1), ['sh', '-c', script, '1']));
    assert.ok(notAccepted instanceof ExecError, 'exit 1 fails unless the caller accepts it');
  });

  it('classifies a missing remote command', async () => {
    const err = await rejection(pool.run(targetOf(h1), ['bpa-no-such-command', 'x']));
    assert.ok(err instanceof ExecError);
    assert.equal(err.exitCode, 127);
    assert.equal(err.code, 'COMMAND_NOT_FOUND');
    assert.equal(err.retry, 'stalled');
  });

  it('delivers arguments with shell metacharacters byte-exact (no injection)', async () => {
    const r = await pool.run(targetOf(h1), ['printf', '%s\\036', ...NASTY_ARGS]);
    assert.deepEqual(r.stdout.split('\x1e').slice(0, -1), NASTY_ARGS);
    const leaked = await lab!.exec(h1.name, [
      'sh',
      '-c',
      'ls /tmp/bpa-injected /tmp/bpa-redirected 2>/dev/null || true',
    ]);
    assert.equal(leaked.stdout, '');
    assert.ok(!existsSync('/tmp/bpa-injected'));
  });

  it('kills a command at its timeout, and the connection still works', async () => {
    // A unique duration marks this sleep among every process on the machine.
    const argv = ['sleep', `60.${randomInt(100000, 999999)}`];
    const started = Date.now();
    const failed = rejection(pool.run(targetOf(h1), argv, { timeoutMs: 1000 }));
    // Until the remote sleep shows up (well before its 1000 ms timeout), not a fixed wait.
    const up = Date.now() + 850;
    while (pidsRunning(argv).length === 0 && Date.now() < up) await sleep(10);
    assert.equal(pidsRunning(argv).length, 1, 'the remote sleep should be running');
    const err = await failed;
    const elapsed = Date.now() - started;
    assert.ok(err instanceof ExecError);
    assert.equal(err.code, 'COMMAND_TIMEOUT');
    assert.equal(err.retry, 'transient');
    assert.equal(err.timedOut, true);
    assert.match(err.message, new RegExp(`^${h1.name}: sleep 60\\.\\d+ timed out after 1 s`));
    assert.ok(elapsed < 2000, `rejected ${elapsed} ms after the start`);
    const deadline = Date.now() + 1000;
    while (pidsRunning(argv).length > 0 && Date.now() < deadline) await sleep(20);
    assert.deepEqual(pidsRunning(argv), [], 'the remote sleep survived the timeout');
    assert.equal((await pool.run(targetOf(h1), ['echo', 'still here'])).stdout, 'still here\n');
    assert.equal(pool.openConnections, 2);
  });

  it('reconnects after the host dropped an idle connection', async () => {
    await pool.run(targetOf(h2), ['true']);
    await lab!.stopSshd(h2.name, { killSessions: true });
    await lab!.startSshd(h2.name);
    await sleep(100);
    assert.equal((await pool.run(targetOf(h2), ['hostname'])).stdout, `${h2.name}\n`);
  });

  it('adds `sudo -n --` for a non-root user only', () => {
    const asUser = { ...targetOf(h1), user: 'deploy' };
    assert.equal(
      remoteCommand(asUser, ['apt-get', 'install'], { sudo: true }),
      'sudo -n -- apt-get install',
    );
    assert.equal(
      remoteCommand(targetOf(h1), ['apt-get', 'install'], { sudo: true }),
      'apt-get install',
    );
    assert.equal(
      remoteCommand(asUser, ['id'], { sudo: true, env: { LC_ALL: 'C' } }),
      "sudo -n -- env 'LC_ALL=C' id",
    );
    assert.throws(() => remoteCommand(asUser, ['id'], { env: { 'A;B': 'x' } }), StalledError);
  });

  it('fails with SSH_KEY_MISSING naming the path when the private key is absent', async () => {
    const missing = join(tmp, 'no-such-key');
    const other = new SshPool(options({ privateKeyPath: missing }));
    try {
      const err = await rejection(other.run(targetOf(h1), ['true']));
      assert.ok(err instanceof StalledError);
      assert.equal(err.code, 'SSH_KEY_MISSING');
      assert.ok(err.message.includes(missing));
    } finally {
      await other.close();
    }
  });

  it('fails with SSH_KEY_INVALID, without key material, when the key file is not a key', async () => {
    const bad = join(tmp, 'not-a-key');
    await writeFile(bad, 'AAAAsecretish-not-a-key\n', { mode: 0o600 });
    const other = new SshPool(options({ privateKeyPath: bad }));
    try {
      const err = await rejection(other.run(targetOf(h1), ['true']));
      assert.equal(err.code, 'SSH_KEY_INVALID');
      assert.equal(err.retry, 'stalled');
      assert.ok(err.message.includes(bad));
      assert.ok(!JSON.stringify(err.toJSON()).includes('secretish'));
    } finally {
      await other.close();
    }
  });

  it('reports SSH_CONNECTION_LOST (transient) when sshd dies under a running command', async () => {
    const other = new SshPool(options());
    try {
      const failed = rejection(other.run(targetOf(h2), ['sleep', '20']));
      await sleep(300);
      const started = Date.now();
      await lab!.stopSshd(h2.name, { killSessions: true });
      const err = await failed;
      assert.ok(Date.now() - started < 3000);
      assert.ok(err instanceof ExecError);
      assert.equal(err.code, 'SSH_CONNECTION_LOST');
      assert.equal(err.retry, 'transient');
      assert.equal(err.host, h2.name);
    } finally {
      await other.close();
      await lab!.startSshd(h2.name);
    }
  });

  it('reports SSH_UNREACHABLE (transient) when sshd is stopped: connection refused', async () => {
    await lab!.stopSshd(h2.name);
    const other = new SshPool(options());
    try {
      const err = await rejection(other.run(targetOf(h2), ['true']));
      assert.ok(err instanceof ExecError);
      assert.equal(err.code, 'SSH_UNREACHABLE');
      assert.equal(err.retry, 'transient');
      assert.match(
        err.message,
        new RegExp(`^${h2.name} \\(${h2.ip.replace(/\./g, '\\.')}:22\\): .*connection refused`),
      );
      assert.equal(err.host, h2.name);
    } finally {
      await other.close();
      await lab!.startSshd(h2.name);
    }
  });

  it('reports SSH_UNREACHABLE within the connect timeout when the link is down', async () => {
    await lab!.setLink(h2.name, false);
    const other = new SshPool(options({ connectTimeoutMs: 1000 }));
    try {
      const started = Date.now();
      const err = await rejection(other.run(targetOf(h2), ['true']));
      const elapsed = Date.now() - started;
      assert.ok(err instanceof ExecError);
      assert.equal(err.code, 'SSH_UNREACHABLE');
      assert.equal(err.retry, 'transient');
      assert.ok(elapsed >= 900 && elapsed < 2500, `failed after ${elapsed} ms`);
      assert.match(err.message, /no SSH login within 1000 ms/);
    } finally {
      await other.close();
      await lab!.setLink(h2.name, true);
    }
    // The host is back: a new attempt from the same kind of pool works.
    const again = new SshPool(options());
    try {
      assert.equal((await again.run(targetOf(h2), ['hostname'])).stdout, `${h2.name}\n`);
    } finally {
      await again.close();
    }
  });

  it('closes every connection on close()', async () => {
    const other = new SshPool(options());
    await Promise.all([other.run(targetOf(h1), ['true']), other.run(targetOf(h2), ['true'])]);
    assert.equal(other.openConnections, 2);
    await other.close();
    assert.equal(other.openConnections, 0);
    await assert.rejects(other.run(targetOf(h1), ['true']), /closed/);
  });
});
