import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { canRunAptLab, startAptRepo, type AptRepo } from '../lab/apt-repo.js';
import { canRunLab, startLab, type Lab, type LabHost } from '../lab/lab.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(cmd: string, args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() });
    });
  });
}

/** The commands bpa runs on a node for an offline mirror (see issue 5). */
const MIRROR_LIST = '/etc/apt/sources.list.d/bpa-mirror.list';
const UPDATE =
  `apt-get update -o Dir::Etc::sourcelist=${MIRROR_LIST} -o Dir::Etc::sourceparts=- ` +
  '-o APT::Get::List-Cleanup=0';
const INSTALL = 'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends';

/** One `<name> <version> <status abbreviation>` line per package matching `pkg`. */
const QUERY = (pkg: string): string =>
  `dpkg-query -W -f='\${Package} \${Version} \${db:Status-Abbrev}\\n' ${pkg}`;

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

/** Processes whose mount table mentions `path` (e.g. an overlay with its upper dir there). */
async function processesMounting(path: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if ((await readFile(`/proc/${entry}/mountinfo`, 'utf8')).includes(path)) {
        pids.push(Number(entry));
      }
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

async function skipUnlessPossible(ctx: Mocha.Context): Promise<void> {
  const lab = canRunLab({ isolatedPackages: true });
  const apt = await canRunAptLab();
  const reason = !lab.ok ? lab.reason : !apt.ok ? apt.reason : undefined;
  if (reason !== undefined) {
    console.log(`    skipping the package lab tests: ${reason}`);
    ctx.skip();
  }
}

function sshTo(lab: Lab, host: LabHost, command: string): Promise<Result> {
  const args = ['-F', '/dev/null', '-o', `UserKnownHostsFile=${lab.knownHostsPath}`];
  args.push('-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5');
  args.push('-o', 'LogLevel=ERROR', '-i', lab.keyPath, `root@${host.ip}`, command);
  return exec('ssh', args);
}

describe('test lab: real apt-get and dpkg on hosts with their own package state', function () {
  this.timeout(90_000);
  let lab: Lab | undefined;
  let repo: AptRepo | undefined;
  let machineStatus = '';

  const host = (name: string): LabHost => {
    const found = lab!.hosts.find((h) => h.name === name);
    assert.ok(found, `no host ${name}`);
    return found;
  };
  const ssh = (name: string, command: string): Promise<Result> => sshTo(lab!, host(name), command);
  const ok = async (name: string, command: string): Promise<string> => {
    const r = await ssh(name, command);
    assert.equal(r.code, 0, `${name}: ${command}: ${r.stderr}\n${r.stdout}`);
    return r.stdout;
  };
  /** The package's version if dpkg has it fully installed on the host, else undefined. */
  const installed = async (name: string, pkg: string): Promise<string | undefined> => {
    const r = await ssh(name, QUERY(pkg));
    const [, version, status] = r.stdout.split(' ');
    return r.code === 0 && status === 'ii' ? version : undefined;
  };

  before(async function () {
    await skipUnlessPossible(this);
    machineStatus = await sha256('/var/lib/dpkg/status');
    const t0 = Date.now();
    lab = await startLab({ hosts: 3, isolatedPackages: true });
    console.log(`    lab ${lab.id}: 3 isolated hosts up in ${Date.now() - t0} ms`);
    const t1 = Date.now();
    repo = await startAptRepo(lab, [
      { name: 'bpa-test-a', version: '1.0-1' },
      { name: 'bpa-test-a', version: '2.0-1' },
      { name: 'bpa-test-b', version: '1.0-1', depends: 'bpa-test-a' },
    ]);
    console.log(`    repository with 3 packages built and served in ${Date.now() - t1} ms`);
  });

  after(async () => {
    await repo?.stop();
    await lab?.stop();
  });

  it("gives each host overlays over /etc /usr /var /opt in the host's own directory", async () => {
    assert.equal(lab!.isolatedPackages, true);
    for (const h of lab!.hosts) {
      const mounts = await ok(h.name, 'findmnt -rn -t overlay -o TARGET,OPTIONS');
      for (const dir of ['/etc', '/usr', '/var', '/opt']) {
        const line = mounts.split('\n').find((l) => l.startsWith(`${dir} `));
        assert.ok(line, `${h.name}: no overlay on ${dir}`);
        assert.ok(line.includes(`upperdir=${h.dir}/overlay${dir}/upper`), line);
      }
      assert.equal(await ok(h.name, 'findmnt -rn -o FSTYPE /run'), 'tmpfs');
    }
    // A host added later is isolated too.
    const h4 = await lab!.addHost();
    const added = await ok(h4.name, 'findmnt -rn -o FSTYPE,OPTIONS /var');
    assert.ok(added.startsWith('overlay ') && added.includes(`${h4.dir}/overlay/var/upper`), added);
    // This process's namespace sees none of them.
    const own = await readFile('/proc/self/mountinfo', 'utf8');
    assert.ok(!own.includes(lab!.dir), 'a host mount leaked into the root mount namespace');
  });

  it('installs a pinned version from the lab repository on one host only', async () => {
    assert.equal(await installed('h1', 'bpa-test-a'), undefined);
    await ok('h1', `printf '%s\\n' '${repo!.sourceLine}' > ${MIRROR_LIST} && ${UPDATE}`);
    const t0 = Date.now();
    await ok('h1', `${INSTALL} bpa-test-a=1.0-1`);
    console.log(`    one apt-get install over SSH: ${Date.now() - t0} ms`);

    assert.equal(await installed('h1', 'bpa-test-a'), '1.0-1');
    assert.equal(await ok('h1', 'cat /usr/share/bpa-test/bpa-test-a'), 'bpa-test-a 1.0-1');
    assert.equal(await installed('h2', 'bpa-test-a'), undefined);
    assert.notEqual((await ssh('h2', 'test -e /usr/share/bpa-test/bpa-test-a')).code, 0);
    // Nor on this machine: its dpkg database and /usr are untouched.
    assert.notEqual((await exec('dpkg-query', ['-W', 'bpa-test-a'])).code, 0);
    assert.ok(!existsSync('/usr/share/bpa-test/bpa-test-a'));
    assert.ok(!existsSync(MIRROR_LIST), 'the source list must stay on h1');
    assert.equal(await sha256('/var/lib/dpkg/status'), machineStatus);
    // The package came over HTTP from the repository, fetched by h1.
    const fetched = repo!.requestLog.find((r) => r.path.endsWith('/bpa-test-a_1.0-1_all.deb'));
    assert.ok(fetched, 'the .deb was not fetched from the repository');
    assert.equal(fetched.status, 200);
    assert.equal(fetched.from, host('h1').ip);
  });

  it('upgrades h1 to 2.0-1', async () => {
    await ok('h1', `${INSTALL} bpa-test-a=2.0-1`);
    assert.equal(await installed('h1', 'bpa-test-a'), '2.0-1');
    assert.equal(await ok('h1', 'cat /usr/share/bpa-test/bpa-test-a'), 'bpa-test-a 2.0-1');
  });

  it('installs b with its dependency a on h2', async () => {
    await ok('h2', `printf '%s\\n' '${repo!.sourceLine}' > ${MIRROR_LIST} && ${UPDATE}`);
    const out = await ok('h2', `${INSTALL} bpa-test-b=1.0-1`);
    assert.match(out, /bpa-test-a/, 'apt should name the dependency it pulls in');
    assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
    // The candidate for the dependency is the newest version in the repository.
    assert.equal(await installed('h2', 'bpa-test-a'), '2.0-1');
    assert.equal(await installed('h1', 'bpa-test-b'), undefined);
    assert.equal(await installed('h3', 'bpa-test-a'), undefined);
  });

  it('removes a from h1 and leaves h2 as it was', async () => {
    await ok('h1', 'DEBIAN_FRONTEND=noninteractive apt-get remove -y bpa-test-a');
    assert.equal(await installed('h1', 'bpa-test-a'), undefined);
    assert.notEqual((await ssh('h1', 'test -e /usr/share/bpa-test/bpa-test-a')).code, 0);
    assert.equal(await installed('h2', 'bpa-test-a'), '2.0-1');
    assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
  });

  it("reports apt's own errors for a package or a version the repository lacks", async () => {
    const missing = await ssh('h1', `${INSTALL} bpa-test-nope`);
    assert.equal(missing.code, 100);
    assert.match(missing.stderr, /Unable to locate package bpa-test-nope/);
    const version = await ssh('h1', `${INSTALL} bpa-test-a=9.9-1`);
    assert.equal(version.code, 100);
    assert.match(version.stderr, /Version '9\.9-1' for 'bpa-test-a' was not found/);
  });

  it('publishes a new version with add(); a host sees it after apt-get update', async () => {
    const before = repo!.requests;
    await repo!.add({ name: 'bpa-test-a', version: '3.0-1', description: 'the third one' });
    await assert.rejects(repo!.add({ name: 'bpa-test-a', version: '3.0-1' }), /published already/);
    await ok('h2', UPDATE);
    const policy = await ok('h2', 'apt-cache policy bpa-test-a');
    assert.match(policy, /Installed: 2\.0-1/);
    assert.match(policy, /Candidate: 3\.0-1/);
    await ok('h2', `${INSTALL} bpa-test-a=3.0-1`);
    assert.equal(await installed('h2', 'bpa-test-a'), '3.0-1');
    assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
    assert.ok(repo!.requests > before);
  });

  it('a failing postinst leaves the package half-configured on that host', async () => {
    await repo!.add({
      name: 'bpa-test-broken',
      version: '1.0-1',
      postinst: 'echo broken >&2; exit 3',
    });
    await ok('h3', `printf '%s\\n' '${repo!.sourceLine}' > ${MIRROR_LIST} && ${UPDATE}`);
    const r = await ssh('h3', `${INSTALL} bpa-test-broken=1.0-1`);
    assert.equal(r.code, 100);
    assert.match(
      r.stdout + r.stderr,
      /installed bpa-test-broken package post-installation script subprocess returned error exit status 3/,
    );
    assert.match(await ok('h3', QUERY('bpa-test-broken')), /^bpa-test-broken 1\.0-1 iF/);
    assert.equal(await installed('h1', 'bpa-test-broken'), undefined);
  });

  it('stop ends every host mount and removes the overlays', async () => {
    const { dir } = lab!;
    assert.ok((await processesMounting(dir)).length >= 3, 'the hosts should hold their mounts');
    await repo!.stop();
    repo = undefined;
    await lab!.stop();
    lab = undefined;
    // A mount namespace lives as long as a process in it: none may mention the lab any more.
    assert.deepEqual(await processesMounting(dir), []);
    assert.ok(!existsSync(dir), 'the lab directory (and the upper layers) remain');
    assert.equal(await sha256('/var/lib/dpkg/status'), machineStatus);
  });
});

describe('test lab: ten isolated hosts installing at once', function () {
  this.timeout(120_000);
  let lab: Lab | undefined;
  let repo: AptRepo | undefined;

  before(async function () {
    await skipUnlessPossible(this);
  });

  after(async () => {
    await repo?.stop();
    await lab?.stop();
  });

  it('starts in a few seconds and installs on every host in parallel', async () => {
    const t0 = Date.now();
    lab = await startLab({ hosts: 10, isolatedPackages: true });
    const startMs = Date.now() - t0;
    console.log(`    lab ${lab.id}: 10 isolated hosts up in ${startMs} ms`);
    assert.ok(startMs < 30_000, `startup took ${startMs} ms`);
    repo = await startAptRepo(lab, [{ name: 'bpa-test-a', version: '1.0-1' }]);
    const line = repo.sourceLine;
    const t1 = Date.now();
    const results = await Promise.all(
      lab.hosts.map((h) =>
        sshTo(
          lab!,
          h,
          `printf '%s\\n' '${line}' > ${MIRROR_LIST} && ${UPDATE} && ${INSTALL} bpa-test-a=1.0-1`,
        ),
      ),
    );
    console.log(`    update + install on 10 hosts in parallel: ${Date.now() - t1} ms`);
    for (const [i, r] of results.entries()) assert.equal(r.code, 0, `h${i + 1}: ${r.stderr}`);
    for (const h of lab.hosts) {
      const r = await sshTo(lab, h, QUERY('bpa-test-a'));
      assert.equal(r.stdout, 'bpa-test-a 1.0-1 ii', h.name);
    }
    const debFetches = repo.requestLog.filter((r) => r.path.endsWith('.deb'));
    assert.deepEqual(
      new Set(debFetches.map((r) => r.from)),
      new Set(lab.hosts.map((h) => h.ip)),
      'each host fetched the package itself',
    );
  });
});
