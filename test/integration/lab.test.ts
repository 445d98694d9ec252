import { strict as assert } from 'node:assert';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canRunLab, cleanupStaleLabs, startLab, type Lab, type LabHost } from '../lab/lab.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(cmd: string, args: string[], input?: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() });
    });
    // A command that exits without reading its input must not fail the test with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });
}

const sshBase = (knownHosts: string, strict = false): string[] => [
  '-F',
  '/dev/null',
  '-o',
  `UserKnownHostsFile=${knownHosts}`,
  '-o',
  `StrictHostKeyChecking=${strict ? 'yes' : 'no'}`,
  '-o',
  'ConnectTimeout=5',
  '-o',
  'LogLevel=ERROR',
];

/** How a TCP connection to host:22 ends within `ms`: 'open', an error code, or 'timeout'. */
function probe(ip: string, ms = 1000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: ip, port: 22 });
    const done = (what: string): void => {
      socket.destroy();
      resolve(what);
    };
    socket.setTimeout(ms, () => done('timeout'));
    socket.on('connect', () => done('open'));
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

async function netnsList(): Promise<string> {
  return (await exec('ip', ['netns', 'list'])).stdout;
}

/** Checks that nothing of lab `id` remains on the machine. */
async function assertGone(id: string, bridge: string, user: string, pids: number[]): Promise<void> {
  assert.doesNotMatch(await netnsList(), new RegExp(`bpa-${id}-h`));
  assert.notEqual((await exec('ip', ['link', 'show', 'dev', bridge])).code, 0, 'bridge remains');
  const links = (await exec('ip', ['-o', 'link', 'show'])).stdout;
  assert.doesNotMatch(links, new RegExp(`bpv${id}-`), 'a veth remains');
  assert.notEqual((await exec('getent', ['passwd', user])).code, 0, 'user remains');
  assert.ok(!existsSync(`/tmp/bpa-labs/${id}`), 'lab directory remains');
  for (const pid of pids) {
    const stat = existsSync(`/proc/${pid}/stat`) ? await readFile(`/proc/${pid}/stat`, 'utf8') : '';
    // A zombie is dead; it waits only for a parent that is not ours to reap it.
    assert.ok(stat === '' || / Z /.test(stat), `process ${pid} still runs`);
  }
}

describe('test lab (network namespaces, sshd, dnsmasq)', function () {
  this.timeout(60_000);
  let lab: Lab | undefined;
  let tmp: string;
  let knownHosts: string;

  const ssh = (user: string, host: LabHost, command: string, key?: string): Promise<Result> => {
    const args = sshBase(knownHosts).concat(['-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes']);
    args.push('-i', key ?? lab!.keyPath, `${user}@${host.ip}`, command);
    return exec('ssh', args);
  };
  const host = (name: string): LabHost => {
    const found = lab!.hosts.find((h) => h.name === name);
    assert.ok(found, `no host ${name}`);
    return found;
  };

  before(async function () {
    const check = canRunLab();
    if (!check.ok) {
      console.log(`    skipping the lab tests: ${check.reason}`);
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-lab-test-'));
    knownHosts = join(tmp, 'known_hosts');
    const t0 = Date.now();
    lab = await startLab({ hosts: 3 });
    console.log(`    lab ${lab.id}: 3 hosts up in ${Date.now() - t0} ms`);
  });

  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('gives each host a distinct lease from dnsmasq, recorded for its MAC', async () => {
    const leases = (await readFile(lab!.leaseFile, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [expiry, mac, ip, hostname] = line.split(' ');
        return { expiry: Number(expiry), mac, ip, hostname };
      });
    assert.equal(lab!.hosts.length, 3);
    for (const h of lab!.hosts) {
      assert.equal(h.addressing, 'dhcp');
      assert.match(h.mac, /^02:/);
      const lease = leases.find((l) => l.mac === h.mac);
      assert.ok(lease, `no lease for ${h.name} (${h.mac})`);
      assert.equal(lease.ip, h.ip);
      assert.equal(lease.hostname, h.name);
      assert.ok(lease.expiry > Date.now() / 1000);
      const inside = await lab!.exec(h.name, ['ip', '-4', '-o', 'addr', 'show', 'dev', 'eth0']);
      assert.match(inside.stdout, new RegExp(` ${h.ip.replace(/\./g, '\\.')}/24 `));
    }
    assert.equal(new Set(lab!.hosts.map((h) => h.ip)).size, 3);
    assert.equal(new Set(lab!.hosts.map((h) => h.mac)).size, 3);
    assert.deepEqual(lab!.warnings, []);
  });

  it("logs in as root with bpa's key and reaches each host's own hostname", async () => {
    for (const h of lab!.hosts) {
      const r = await ssh('root', h, 'hostname');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, h.name);
    }
    // The recorded host keys are the ones the hosts present: strict checking passes.
    const pinned = join(tmp, 'pinned');
    const lines = lab!.hosts.map((h) => `${h.ip} ${lab!.knownHostKeys[h.name]}\n`);
    await writeFile(pinned, lines.join(''));
    const h1 = host('h1');
    const args = sshBase(pinned, true).concat(['-o', 'BatchMode=yes', '-i', lab!.keyPath]);
    const strict = await exec('ssh', args.concat([`root@${h1.ip}`, 'hostname']));
    assert.equal(strict.code, 0, strict.stderr);
    assert.equal(strict.stdout, 'h1');
  });

  it('logs in as the test user with its password', async () => {
    const h2 = host('h2');
    const args = ['-p', lab!.password, 'ssh', ...sshBase(knownHosts)];
    args.push('-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password');
    const ok = await exec('sshpass', args.concat([`${lab!.user}@${h2.ip}`, 'hostname; id -un']));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, `h2\n${lab!.user}`);
    args[1] = 'wrong-password';
    const bad = await exec('sshpass', args.concat([`${lab!.user}@${h2.ip}`, 'hostname']));
    assert.notEqual(bad.code, 0);
  });

  it("keeps each host's home directories and authorized keys to itself", async () => {
    const [h1, h2] = [host('h1'), host('h2')];
    assert.equal((await ssh('root', h1, 'echo h1-only > /root/marker')).code, 0);
    assert.equal((await ssh('root', h1, 'cat /root/marker')).stdout, 'h1-only');
    assert.equal(
      (await ssh('root', h2, 'test -e /root/marker && echo seen || echo absent')).stdout,
      'absent',
    );

    // Install a new key for the test user on h1 only, as ssh-copy-id would.
    const key = join(tmp, 'user_key');
    assert.equal((await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key])).code, 0);
    const pub = await readFile(`${key}.pub`, 'utf8');
    const copy = ['-p', lab!.password, 'ssh', ...sshBase(knownHosts)];
    copy.push('-o', 'PubkeyAuthentication=no', `${lab!.user}@${h1.ip}`);
    copy.push('mkdir -p ~/.ssh && cat >> ~/.ssh/authorized_keys');
    const copied = await exec('sshpass', copy, pub);
    assert.equal(copied.code, 0, copied.stderr);
    const onH1 = await ssh(lab!.user, h1, 'hostname', key);
    assert.equal(onH1.code, 0, onH1.stderr);
    assert.equal(onH1.stdout, 'h1');
    const onH2 = await ssh(lab!.user, h2, 'hostname', key);
    assert.notEqual(onH2.code, 0, 'the key installed on h1 must not open h2');
    assert.match(onH2.stderr, /Permission denied/);
    // And the key lives in h1's directory in the lab, not in any real home.
    const stored = await readFile(
      join(h1.dir, 'home', lab!.user, '.ssh', 'authorized_keys'),
      'utf8',
    );
    assert.equal(stored, pub);
  });

  it('stopSshd makes port 22 refuse connections; startSshd brings it back', async () => {
    const h2 = host('h2');
    const oldPid = h2.sshdPid;
    await lab!.stopSshd('h2');
    assert.equal(h2.sshdPid, 0);
    assert.equal(await probe(h2.ip), 'ECONNREFUSED');
    assert.equal(await probe(host('h1').ip), 'open', 'other hosts keep running');
    await lab!.startSshd('h2');
    assert.notEqual(h2.sshdPid, oldPid);
    const r = await ssh('root', h2, 'hostname');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'h2', 'the restarted sshd runs in the same host');
  });

  it('stopSshd leaves open sessions running unless told to kill them', async () => {
    const h1 = host('h1');
    // A session that echoes each input line back, so we can tell whether it is still alive.
    const children: ChildProcess[] = [];
    const session = (): {
      next: () => Promise<unknown>;
      send: (l: string) => void;
      ended: Promise<number>;
    } => {
      const args = sshBase(knownHosts).concat(['-o', 'BatchMode=yes', '-i', lab!.keyPath]);
      args.push(`root@${h1.ip}`, 'echo ready; while read l; do echo "got $l"; done');
      const child = spawn('ssh', args, { stdio: ['pipe', 'pipe', 'ignore'] });
      children.push(child);
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      return {
        next: async () => (await lines.next()).value,
        send: (line) => child.stdin.write(`${line}\n`),
        ended: new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1))),
      };
    };
    try {
      const kept = session();
      assert.equal(await kept.next(), 'ready');
      await lab!.stopSshd('h1');
      assert.equal(await probe(h1.ip), 'ECONNREFUSED');
      kept.send('one');
      assert.equal(await kept.next(), 'got one', 'a plain stop keeps open sessions');
      await lab!.startSshd('h1');

      const killed = session();
      assert.equal(await killed.next(), 'ready');
      await lab!.stopSshd('h1', { killSessions: true });
      assert.notEqual(await killed.ended, 0);
      assert.notEqual(await kept.ended, 0);
    } finally {
      for (const child of children) child.kill();
    }
    await lab!.startSshd('h1');
    assert.equal((await ssh('root', h1, 'hostname')).stdout, 'h1');
  });

  it('rotateHostKey changes the key the host presents', async () => {
    const h3 = host('h3');
    const scan = async (): Promise<string> => {
      const r = await exec('ssh-keyscan', ['-t', 'ed25519', '-T', '5', h3.ip]);
      return r.stdout.split('\n').find((l) => l.startsWith(h3.ip)) ?? '';
    };
    const before = await scan();
    assert.equal(before, `${h3.ip} ${lab!.knownHostKeys.h3}`);
    await lab!.rotateHostKey('h3');
    const after = await scan();
    assert.notEqual(after, before);
    assert.equal(after, `${h3.ip} ${lab!.knownHostKeys.h3}`);
    const knownHostsFile = await readFile(lab!.knownHostsPath, 'utf8');
    assert.ok(knownHostsFile.includes(after), 'the lab known_hosts file follows the rotation');
  });

  it('setLink cuts a host off the network and restores it', async () => {
    const h3 = host('h3');
    await lab!.setLink('h3', false);
    assert.notEqual(await probe(h3.ip), 'open');
    await lab!.setLink('h3', true);
    assert.equal(await probe(h3.ip, 5000), 'open');
  });

  it('addHost adds a fourth host with its own lease and sshd', async () => {
    const h4 = await lab!.addHost();
    assert.equal(h4.name, 'h4');
    assert.equal(lab!.hosts.length, 4);
    assert.ok(!lab!.hosts.slice(0, 3).some((h) => h.ip === h4.ip || h.mac === h4.mac));
    const leases = await readFile(lab!.leaseFile, 'utf8');
    assert.match(leases, new RegExp(` ${h4.mac} ${h4.ip.replace(/\./g, '\\.')} h4 `));
    const r = await ssh('root', h4, 'hostname');
    assert.equal(r.stdout, 'h4');
  });

  it('stop removes every namespace, link, process, the user and the lab directory', async () => {
    const { id, bridge, user } = lab!;
    const pids = lab!.hosts.flatMap((h) => [h.sshdPid, h.holderPid]);
    const t0 = Date.now();
    await lab!.stop();
    console.log(`    lab ${id}: 4 hosts down in ${Date.now() - t0} ms`);
    await assertGone(id, bridge, user, pids);
    lab = undefined;
  });
});

describe('test lab: owners, the CLI and the host setup hook', function () {
  this.timeout(60_000);
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  let tmp: string;

  before(async function () {
    const check = canRunLab();
    if (!check.ok) {
      console.log(`    skipping the lab tests: ${check.reason}`);
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-lab-test-'));
  });

  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('cleanupStaleLabs removes the lab of a process that was killed', async () => {
    const script = join(tmp, 'owner.mts');
    const labModule = new URL('../lab/lab.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { startLab } from ${JSON.stringify(labModule)};
const lab = await startLab({ hosts: 2 });
console.log(JSON.stringify({ id: lab.id, bridge: lab.bridge, user: lab.user,
  pids: lab.hosts.flatMap((h) => [h.sshdPid, h.holderPid]) }));
setInterval(() => undefined, 1000);
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => resolve(d.toString()));
      child.on('exit', (code) => reject(new Error(`lab owner exited with ${code}`)));
    });
    const owned = JSON.parse(line) as { id: string; bridge: string; user: string; pids: number[] };
    assert.match(await netnsList(), new RegExp(`bpa-${owned.id}-h1`));
    // Still owned by a live process: not stale.
    assert.ok(!(await cleanupStaleLabs()).includes(owned.id));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.ok((await cleanupStaleLabs()).includes(owned.id));
    await assertGone(owned.id, owned.bridge, owned.user, owned.pids);
  });

  it('runs the host setup hook inside each host, with mounts private to that host', async () => {
    const setup = join(tmp, 'setup.sh');
    await writeFile(setup, 'mount -t tmpfs bpa-lab-test /mnt\necho "$BPA_LAB_HOST" > /mnt/who\n');
    const lab = await startLab({ hosts: 2, hostSetup: setup, authorizeKey: false });
    try {
      for (const h of lab.hosts) {
        assert.equal((await lab.exec(h.name, ['cat', '/mnt/who'])).stdout.trim(), h.name);
      }
      assert.ok(!existsSync('/mnt/who'), 'the mount must not leak into this namespace');
      // Without authorizeKey, bpa's key opens nothing.
      const [h1] = lab.hosts;
      assert.ok(h1);
      const args = sshBase(join(tmp, 'kh')).concat(['-o', 'BatchMode=yes', '-i', lab.keyPath]);
      const r = await exec('ssh', args.concat([`root@${h1.ip}`, 'hostname']));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Permission denied/);
    } finally {
      await lab.stop();
    }
  });

  it('the CLI starts a lab that outlives it and tears it down', async () => {
    const cli = join(repo, 'test', 'lab', 'cli.ts');
    const up = await exec(process.execPath, [
      '--import',
      'tsx',
      cli,
      'up',
      '--hosts',
      '1',
      '--no-dhcp',
      '--json',
    ]);
    assert.equal(up.code, 0, up.stderr);
    const summary = JSON.parse(up.stdout) as {
      id: string;
      bridge: string;
      user: string;
      gatewayIp: string;
      hosts: { name: string; ip: string; addressing: string; ssh: string }[];
    };
    try {
      const [h1] = summary.hosts;
      assert.ok(h1);
      assert.equal(h1.addressing, 'static');
      assert.equal(h1.ip, summary.gatewayIp.replace(/\.1$/, '.2'));
      // The printed command works as printed (the lab's known_hosts file is already correct).
      const cmd = h1.ssh.split(' ').slice(1);
      const r = await exec('ssh', [
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=yes',
        ...cmd,
        'hostname',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'h1');
    } finally {
      const down = await exec(process.execPath, [
        '--import',
        'tsx',
        cli,
        'down',
        '--id',
        summary.id,
      ]);
      assert.equal(down.code, 0, down.stderr);
    }
    await assertGone(summary.id, summary.bridge, summary.user, []);
  });
});
