import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SshPool, type KnownHosts, type SshOptions } from '../../../src/ssh/index.js';
import { ExecError } from '../../../src/util/exec-error.js';
import { StalledError } from '../../../src/util/errors.js';
import { canRunLab, startLab, type Lab, type LabHost } from '../../lab/lab.js';
import { rejection, targetOf } from './helpers.js';

/** The fingerprint OpenSSH itself computes for a public key line. */
async function sshKeygenFingerprint(dir: string, keyLine: string): Promise<string> {
  const file = join(dir, `key-${Date.now()}.pub`);
  await writeFile(file, `${keyLine}\n`);
  const { stdout } = await promisify(execFile)('ssh-keygen', ['-l', '-E', 'sha256', '-f', file]);
  const fingerprint = stdout.split(' ')[1] ?? '';
  assert.match(fingerprint, /^SHA256:/, stdout);
  return fingerprint;
}

describe('SSH host keys pinned on first use (real sshd)', function () {
  this.timeout(30_000);
  let lab: Lab | undefined;
  let tmp: string;
  let knownHostsFile: string;
  let h1: LabHost;
  let h2: LabHost;
  const options = (): SshOptions => ({ privateKeyPath: lab!.keyPath, knownHostsFile });
  const readPins = async (): Promise<KnownHosts> =>
    JSON.parse(await readFile(knownHostsFile, 'utf8')) as KnownHosts;
  /** Runs one command through a fresh pool, as a new apply would. */
  const runOnce = async (host: LabHost, argv: string[]): Promise<string> => {
    const pool = new SshPool(options());
    try {
      return (await pool.run(targetOf(host), argv)).stdout;
    } finally {
      await pool.close();
    }
  };

  before(async function () {
    this.timeout(90_000);
    const check = canRunLab();
    if (!check.ok) {
      console.log(`    skipping the host key tests: ${check.reason}`);
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ssh-hostkeys-'));
    knownHostsFile = join(tmp, 'state', 'ssh', 'known_hosts.json');
    lab = await startLab({ hosts: 2 });
    [h1, h2] = lab.hosts as [LabHost, LabHost];
  });

  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('pins the key of every host on first connect, with the fingerprint OpenSSH shows', async () => {
    assert.ok(!existsSync(knownHostsFile));
    // Both at once: concurrent pins must both land in the file.
    const pool = new SshPool(options());
    try {
      await Promise.all([pool.run(targetOf(h1), ['true']), pool.run(targetOf(h2), ['true'])]);
    } finally {
      await pool.close();
    }
    const pins = await readPins();
    assert.deepEqual(Object.keys(pins).sort(), [`${h1.ip}:22`, `${h2.ip}:22`].sort());
    for (const h of [h1, h2]) {
      const pin = pins[`${h.ip}:22`]!;
      assert.equal(pin.algorithm, 'ssh-ed25519');
      assert.equal(pin.fingerprint, await sshKeygenFingerprint(tmp, h.hostKey));
      assert.equal(pin.node, h.name);
      assert.ok(Math.abs(Date.parse(pin.firstSeen) - Date.now()) < 60_000);
    }
    assert.equal((await stat(knownHostsFile)).mode & 0o777, 0o600);
  });

  it('accepts the pinned key on later connections and leaves the file as it was', async () => {
    const before = await readFile(knownHostsFile, 'utf8');
    assert.equal(await runOnce(h1, ['hostname']), `${h1.name}\n`);
    assert.equal(await readFile(knownHostsFile, 'utf8'), before);
  });

  it('refuses a changed host key with HOST_KEY_CHANGED, and runs nothing', async () => {
    const pinned = (await readPins())[`${h1.ip}:22`]!;
    await lab!.rotateHostKey(h1.name);
    const offered = await sshKeygenFingerprint(tmp, lab!.knownHostKeys[h1.name]!);
    assert.notEqual(offered, pinned.fingerprint);

    const pool = new SshPool(options());
    let err;
    try {
      err = await rejection(pool.run(targetOf(h1), ['touch', '/root/bpa-must-not-exist']));
    } finally {
      await pool.close();
    }
    assert.ok(err instanceof ExecError);
    assert.equal(err.code, 'HOST_KEY_CHANGED');
    assert.equal(err.retry, 'stalled');
    assert.equal(err.host, h1.name);
    for (const part of [
      h1.name,
      `${h1.ip}:22`,
      pinned.fingerprint,
      offered,
      knownHostsFile,
      'remove the entry',
    ]) {
      assert.ok(err.message.includes(part), `message lacks ${part}: ${err.message}`);
    }
    const probe = await lab!.exec(h1.name, [
      'sh',
      '-c',
      'test -e /root/bpa-must-not-exist && echo yes || echo no',
    ]);
    assert.equal(probe.stdout.trim(), 'no');
    // The pin is kept: only a person may replace it.
    assert.equal((await readPins())[`${h1.ip}:22`]!.fingerprint, pinned.fingerprint);
    // Still refused on the next attempt.
    await assert.rejects(
      runOnce(h1, ['true']),
      (e: unknown) => e instanceof ExecError && e.code === 'HOST_KEY_CHANGED',
    );
  });

  it('pins the new key once the entry is removed by hand', async () => {
    const pins = await readPins();
    delete pins[`${h1.ip}:22`];
    await writeFile(knownHostsFile, JSON.stringify(pins));
    assert.equal(await runOnce(h1, ['hostname']), `${h1.name}\n`);
    const repinned = (await readPins())[`${h1.ip}:22`]!;
    assert.equal(
      repinned.fingerprint,
      await sshKeygenFingerprint(tmp, lab!.knownHostKeys[h1.name]!),
    );
    assert.ok((await readPins())[`${h2.ip}:22`], 'the other pin was kept');
  });

  it('stops with KNOWN_HOSTS_INVALID on a damaged pin file instead of trusting anything', async () => {
    const saved = await readFile(knownHostsFile, 'utf8');
    await writeFile(knownHostsFile, '{ "198.18.0.1:22": ');
    try {
      const err = await rejection(runOnce(h2, ['true']));
      assert.ok(err instanceof StalledError);
      assert.equal(err.code, 'KNOWN_HOSTS_INVALID');
      assert.ok(err.message.includes(knownHostsFile));
    } finally {
      await writeFile(knownHostsFile, saved);
    }
  });
});
