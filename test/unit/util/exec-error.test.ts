import assert from 'node:assert/strict';
import { BpaError } from '../../../src/util/errors.js';
import { ExecError, classify, DPKG_LOCK_RETRY_MS } from '../../../src/util/exec-error.js';
import { tailOf } from '../../../src/util/tail.js';

describe('ExecError and classify', () => {
  // [stderr as tools really print it, exit code, expected code, expected retry]
  const cases: Array<[string, number | null, string, string]> = [
    [
      'ssh: connect to host 10.0.0.5 port 22: Connection refused',
      255,
      'SSH_UNREACHABLE',
      'transient',
    ],
    [
      'ssh: connect to host 10.0.0.5 port 22: Connection timed out',
      255,
      'SSH_UNREACHABLE',
      'transient',
    ],
    [
      'ssh: connect to host 10.0.0.5 port 22: No route to host',
      255,
      'SSH_UNREACHABLE',
      'transient',
    ],
    [
      'fatal: unable to access: Could not resolve host: git.example',
      128,
      'CONNECTION_FAILED',
      'transient',
    ],
    ['error: RPC failed; curl 56 Broken pipe', 1, 'CONNECTION_FAILED', 'transient'],
    ['fatal: h3 | UNREACHABLE! => {"changed": false}', 4, 'CONNECTION_FAILED', 'transient'],
    ['root@10.0.0.5: Permission denied (publickey,password).', 255, 'SSH_AUTH', 'stalled'],
    ['Received disconnect: Too many authentication failures', 255, 'SSH_AUTH', 'stalled'],
    [
      '@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\nHost key verification failed.',
      255,
      'HOST_KEY_CHANGED',
      'stalled',
    ],
    ['Host key verification failed.', 255, 'HOST_KEY_REJECTED', 'stalled'],
    ['E: Unable to locate package bpa-nope', 100, 'PACKAGE_NOT_FOUND', 'stalled'],
    ["E: Version '9.9' for 'curl' was not found", 100, 'PACKAGE_NOT_FOUND', 'stalled'],
    ["E: Package 'foo' has no installation candidate", 100, 'PACKAGE_NOT_FOUND', 'stalled'],
    ['sh: 1: frobnicate: not found', 127, 'COMMAND_NOT_FOUND', 'stalled'],
    ['bash: line 1: frobnicate: command not found', 127, 'COMMAND_NOT_FOUND', 'stalled'],
    ['', 127, 'COMMAND_NOT_FOUND', 'stalled'],
    ['sh: 1: sudo: not found', 127, 'SUDO_UNAVAILABLE', 'stalled'],
    ['sudo: a password is required', 1, 'SUDO_DENIED', 'stalled'],
    [
      'deploy is not in the sudoers file.  This incident will be reported.',
      1,
      'SUDO_DENIED',
      'stalled',
    ],
    [
      'E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?',
      100,
      'PERMISSION_DENIED',
      'stalled',
    ],
    ["touch: cannot touch '/etc/x': Permission denied", 1, 'PERMISSION_DENIED', 'stalled'],
    ['write error: No space left on device', 1, 'DISK_FULL', 'stalled'],
    ['something odd happened', 2, 'COMMAND_FAILED', 'transient'],
  ];
  for (const [stderr, exitCode, code, retry] of cases) {
    it(`${JSON.stringify(stderr.split('\n')[0])} exit ${exitCode} → ${code} (${retry})`, () => {
      const c = classify(stderr, exitCode);
      assert.equal(c.code, code);
      assert.equal(c.retry, retry);
    });
  }

  it('waits 10 s for a held dpkg lock', () => {
    for (const stderr of [
      'E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?',
      'dpkg: error: dpkg frontend lock was locked by another process with pid 4242',
    ]) {
      assert.deepEqual(classify(stderr, 100), {
        code: 'DPKG_LOCKED',
        retry: 'waiting',
        retryAfterMs: DPKG_LOCK_RETRY_MS,
      });
    }
    const err = new ExecError({
      cmd: 'apt-get install -y curl',
      exitCode: 100,
      stderr: 'E: Could not get lock /var/lib/dpkg/lock',
      host: 'h1',
    });
    assert.equal(err.retry, 'waiting');
    assert.equal(err.retryAfterMs, 10_000);
    assert.equal(err.toJSON().retryAfterMs, 10_000);
  });

  it('tells timeouts, signals and remote failures apart', () => {
    assert.deepEqual(classify('', null, { timedOut: true }), {
      code: 'COMMAND_TIMEOUT',
      retry: 'transient',
    });
    assert.deepEqual(classify('', null, { signal: 'SIGKILL' }), {
      code: 'COMMAND_KILLED',
      retry: 'transient',
    });
    assert.deepEqual(classify('boom', 1, { remote: true }), {
      code: 'REMOTE_COMMAND_FAILED',
      retry: 'transient',
    });
  });

  it('formats `<host>: <cmd> exited <code>: <last stderr line>`', () => {
    const err = new ExecError({
      cmd: "apt-get install -y 'curl=7.88'",
      exitCode: 100,
      stderr: 'Reading package lists...\nE: Unable to locate package curl\n\n',
      host: 'master-1',
    });
    assert.ok(err instanceof BpaError);
    assert.equal(
      err.message,
      "master-1: apt-get install -y 'curl=7.88' exited 100: E: Unable to locate package curl",
    );
    assert.equal(err.code, 'PACKAGE_NOT_FOUND');
    assert.equal(err.name, 'ExecError');
    const local = new ExecError({ cmd: 'git fetch', exitCode: 1, stderr: '' });
    assert.equal(local.message, 'git fetch exited 1');
    const timeout = new ExecError({
      cmd: 'sleep 60',
      exitCode: null,
      timedOut: true,
      timeoutMs: 1500,
      host: 'h1',
    });
    assert.equal(timeout.message, 'h1: sleep 60 timed out after 1500 ms');
    assert.equal(timeout.code, 'COMMAND_TIMEOUT');
    const killed = new ExecError({ cmd: 'installer', exitCode: null, signal: 'SIGKILL' });
    assert.equal(killed.message, 'installer killed by SIGKILL');
  });

  it('keeps the last 20 lines / ~2 KB of output, without colours', () => {
    const many = Array.from({ length: 50 }, (_, i) => `\x1b[31mline ${i}\x1b[0m`).join('\n');
    const tail = tailOf(many);
    assert.equal(tail, `…${Array.from({ length: 20 }, (_, i) => `line ${i + 30}`).join('\n')}`);
    const long = `${'é'.repeat(3000)}\nlast`;
    const cut = tailOf(long);
    assert.ok(Buffer.byteLength(cut) <= 2048 + 3);
    assert.ok(cut.startsWith('…é') && cut.endsWith('é\nlast'), 'cut on a character boundary');
    const err = new ExecError({ cmd: 'x', exitCode: 1, stdout: many, stderr: many });
    assert.equal(err.stderrTail.split('\n').length, 20);
    assert.equal(err.stdoutTail, tail);
  });

  it('removes credentials from the command, the output and the message', () => {
    const err = new ExecError({
      cmd: 'git clone https://bpa:ghp_token123@git.example/site.git',
      exitCode: 128,
      stderr: "fatal: repository 'https://bpa:ghp_token123@git.example/site.git/' not found",
    });
    const json = JSON.stringify(err.toJSON());
    assert.ok(!json.includes('ghp_token123'), json);
    assert.ok(!err.message.includes('ghp_token123'));
    assert.match(err.cmd, /https:\/\/\*\*\*@git\.example/);
  });

  it('serialises every field for reports', () => {
    const err = new ExecError({
      cmd: 'dpkg-query -W curl',
      exitCode: 1,
      stdout: 'out',
      stderr: 'err',
      host: 'h2',
    });
    assert.deepEqual(err.toJSON(), {
      code: 'REMOTE_COMMAND_FAILED',
      message: 'h2: dpkg-query -W curl exited 1: err',
      retry: 'transient',
      cmd: 'dpkg-query -W curl',
      exitCode: 1,
      signal: null,
      timedOut: false,
      stdoutTail: 'out',
      stderrTail: 'err',
      host: 'h2',
    });
  });

  it('lets the caller set code, retry and message for failures that are not an exit', () => {
    const err = new ExecError({
      cmd: 'true',
      exitCode: null,
      host: 'h1',
      code: 'SSH_UNREACHABLE',
      retry: 'transient',
      message: 'h1 (10.0.0.1:22): cannot connect: connection refused',
    });
    assert.equal(err.code, 'SSH_UNREACHABLE');
    assert.equal(err.retry, 'transient');
    assert.equal(err.message, 'h1 (10.0.0.1:22): cannot connect: connection refused');
  });
});
