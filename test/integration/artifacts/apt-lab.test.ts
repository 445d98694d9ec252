import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDeb, type DebSpec } from '../../lab/apt-repo.js';
import { startLab, type Lab } from '../../lab/lab.js';
import { bpa, labArgs, packageLabReady } from '../apply/harness.js';
import { updateLabSite, writeLabSite, type LabSiteOptions } from '../apply/lab-site.js';
import { startServe, TOKEN, type ServeProcess } from './serve-process.js';

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { env, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    ),
  );
}

/** An OpenPGP key pair made for this run (no passphrase); returns the armored secret key file. */
async function makeSigningKey(dir: string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'bpa-gpg-'));
  try {
    const gpg = (...args: string[]): Promise<string> =>
      run('gpg', ['--batch', '--homedir', home, '--pinentry-mode', 'loopback', ...args]);
    await gpg('--passphrase', '', '--quick-gen-key', 'bpa apt test <apt@bpa.invalid>', 'ed25519');
    const file = join(dir, 'apt-signing-key.asc');
    await gpg('--armor', '--output', file, '--export-secret-keys');
    return file;
  } finally {
    await run('gpgconf', ['--homedir', home, '--kill', 'gpg-agent']).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * bpa's apt repository used by the real apt-get on lab hosts: packages built with dpkg-deb,
 * uploaded through the API to bpa serve on the lab's gateway address, installed and upgraded
 * by `bpa reconcile` with `packageMirror: {bpa: true}`, the repository signed by a key made
 * for the run.
 */
describe('bpa serve apt repository on lab hosts (real apt-get)', function () {
  this.timeout(600_000);
  let lab: Lab | undefined;
  let srv: ServeProcess | undefined;
  let tmp = '';
  let site = '';
  let state = '';
  let key = '';
  const debs = (): string => join(tmp, 'debs');
  const nodes: LabSiteOptions['nodes'] = [
    { name: 'master-1', roles: ['master'], host: 0 },
    { name: 'worker-1', roles: ['worker'], host: 1 },
  ];
  const siteDoc =
    'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: lab\nspec:\n  packageMirror: {bpa: true}\n';

  const upload = async (spec: DebSpec): Promise<number> => {
    const file = await buildDeb(debs(), spec);
    const data = await readFile(file);
    const name = file.split('/').pop() ?? '';
    const r = await fetch(`${srv!.url}/api/v1/artifacts/packages/${name}`, {
      method: 'PUT',
      body: data,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'x-checksum-sha256': createHash('sha256').update(data).digest('hex'),
      },
    });
    return r.status;
  };
  const installed = async (host: string, pkg: string): Promise<string | null> => {
    const r = await lab!
      .exec(host, ['dpkg-query', '-W', '-f=${db:Status-Abbrev} ${Version}', pkg])
      .catch(() => undefined);
    const [status, version] = (r?.stdout ?? '').trim().split(/\s+/);
    // Installed: `ii`, or `hi` once bpa holds a package pinned by version.
    return status !== undefined && /^[ih]i/.test(status) && version ? version : null;
  };
  // No --allow-site-commands: bpa's own repository needs no opt-in.
  const reconcile = (): ReturnType<typeof bpa> =>
    bpa([
      'reconcile',
      '--once',
      site,
      ...labArgs(lab!, state, ['--artifacts-url', srv!.url, '--apt-signing-key', key]),
    ]);

  before(async function () {
    if (!(await packageLabReady())) this.skip();
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-apt-lab-'));
    await mkdir(debs(), { recursive: true });
    state = join(tmp, 'state');
    key = await makeSigningKey(tmp);
    srv = await startServe(join(tmp, 'serve'), {
      listen: `${lab.gatewayIp}:0`,
      extra: ['--apt-signing-key', key],
    });
    site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'apt',
        nodes,
        masterSoftware: ['bpa-test-a: {version: 1.0-1}'],
        workerSoftware: ['bpa-test-b'],
        extraSite: siteDoc,
      },
      join(tmp, 'site'),
    );
  });
  after(async () => {
    await srv?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('publishes uploaded packages as a signed repository gpgv accepts', async () => {
    assert.equal(await upload({ name: 'bpa-test-a', version: '1.0-1' }), 201);
    assert.equal(
      await upload({ name: 'bpa-test-b', version: '1.0-1', depends: 'bpa-test-a' }),
      201,
    );
    const packages = await (await fetch(`${srv!.url}/artifacts/apt/Packages`)).text();
    assert.match(packages, /^Package: bpa-test-a\nVersion: 1\.0-1\n/m);
    assert.match(packages, /^Filename: pool\/bpa-test-b_1\.0-1_all\.deb$/m);
    // The signatures verify with the public key bpa serves, and only with it.
    const check = await mkdtemp(join(tmpdir(), 'bpa-gpgv-'));
    try {
      const { writeFile } = await import('node:fs/promises');
      const pub = await (await fetch(`${srv!.url}/artifacts/apt/key.asc`)).text();
      await writeFile(join(check, 'key.asc'), pub);
      await run('gpg', ['--batch', '--homedir', check, '--import', join(check, 'key.asc')]);
      await run('gpg', [
        '--batch',
        '--homedir',
        check,
        '--export',
        '--output',
        join(check, 'key.gpg'),
      ]);
      await writeFile(
        join(check, 'InRelease'),
        await (await fetch(`${srv!.url}/artifacts/apt/InRelease`)).text(),
      );
      await run('gpgv', ['--keyring', join(check, 'key.gpg'), join(check, 'InRelease')]);
    } finally {
      await run('gpgconf', ['--homedir', check, '--kill', 'gpg-agent']).catch(() => undefined);
      await rm(check, { recursive: true, force: true });
    }
  });

  it('installs from it with bpa and the real apt-get, signed-by its key', async () => {
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /✓ install-packages/);
    assert.equal(await installed('h1', 'bpa-test-a'), '1.0-1');
    assert.equal(await installed('h2', 'bpa-test-b'), '1.0-1');
    assert.equal(await installed('h2', 'bpa-test-a'), '1.0-1', 'a dependency, from bpa too');
    const list = await lab!.exec('h1', ['cat', '/etc/apt/sources.list.d/bpa-mirror.list']);
    assert.equal(
      list.stdout.trim(),
      `deb [signed-by=/etc/apt/keyrings/bpa-artifacts.asc] ${srv!.url}/artifacts/apt/ ./`,
    );
    const onNode = await lab!.exec('h1', ['cat', '/etc/apt/keyrings/bpa-artifacts.asc']);
    const served = await (await fetch(`${srv!.url}/artifacts/apt/key.asc`)).text();
    assert.equal(onNode.stdout, served);
  });

  it('upgrades when a newer version is uploaded and the pin bumped', async () => {
    assert.equal(await upload({ name: 'bpa-test-a', version: '2.0-1' }), 201);
    await updateLabSite(site, lab!.hosts, {
      cluster: 'apt',
      nodes,
      masterSoftware: ['bpa-test-a: {version: 2.0-1}'],
      workerSoftware: ['bpa-test-b'],
      extraSite: siteDoc,
    });
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /master-1 +~bpa-test-a 1\.0-1 → 2\.0-1/);
    assert.equal(await installed('h1', 'bpa-test-a'), '2.0-1');
    const unpacked = await lab!.exec('h1', ['cat', '/usr/share/bpa-test/bpa-test-a']);
    assert.equal(unpacked.stdout.trim(), 'bpa-test-a 2.0-1');
  });

  it('without a signing key: the nodes trust the repository as it is, and apt installs', async () => {
    const unsigned = await startServe(join(tmp, 'serve-unsigned'), {
      listen: `${lab!.gatewayIp}:0`,
    });
    try {
      const file = await buildDeb(debs(), { name: 'bpa-test-c', version: '1.0-1' });
      const data = await readFile(file);
      const r = await fetch(`${unsigned.url}/api/v1/artifacts/packages/bpa-test-c_1.0-1_all.deb`, {
        method: 'PUT',
        body: data,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'x-checksum-sha256': createHash('sha256').update(data).digest('hex'),
        },
      });
      assert.equal(r.status, 201);
      assert.equal((await fetch(`${unsigned.url}/artifacts/apt/InRelease`)).status, 404);
      const other = await writeLabSite(
        lab!.hosts,
        {
          cluster: 'apt2',
          nodes: [{ name: 'master-1', roles: ['master', 'worker'], host: 1 }],
          workerSoftware: ['bpa-test-c'],
          extraSite: siteDoc,
        },
        join(tmp, 'site-unsigned'),
      );
      const applied = await bpa([
        'reconcile',
        '--once',
        other,
        ...labArgs(lab!, join(tmp, 'state-unsigned'), ['--artifacts-url', unsigned.url]),
      ]);
      assert.equal(applied.code, 0, applied.stdout + applied.stderr);
      assert.equal(await installed('h2', 'bpa-test-c'), '1.0-1');
      const list = await lab!.exec('h2', ['cat', '/etc/apt/sources.list.d/bpa-mirror.list']);
      assert.equal(list.stdout.trim(), `deb [trusted=yes] ${unsigned.url}/artifacts/apt/ ./`);
    } finally {
      await unsigned.stop();
    }
  });

  it("apt on the node refuses the repository when it is not signed by bpa's key", async () => {
    // Another key in the node's keyring: apt-get update must fail on the signature.
    const other = await makeSigningKey(await mkdtemp(join(tmp, 'other-')));
    const otherHome = await mkdtemp(join(tmpdir(), 'bpa-gpg-other-'));
    let otherPub = '';
    try {
      await run('gpg', ['--batch', '--homedir', otherHome, '--import', other]);
      otherPub = await run('gpg', ['--batch', '--homedir', otherHome, '--armor', '--export']);
    } finally {
      await run('gpgconf', ['--homedir', otherHome, '--kill', 'gpg-agent']).catch(() => undefined);
      await rm(otherHome, { recursive: true, force: true });
    }
    await lab!.exec('h1', [
      'sh',
      '-c',
      `printf '%s' '${otherPub.replace(/'/g, '')}' > /etc/apt/keyrings/bpa-artifacts.asc`,
    ]);
    const update = await lab!
      .exec('h1', [
        'apt-get',
        'update',
        '-o',
        'Dir::Etc::sourcelist=/etc/apt/sources.list.d/bpa-mirror.list',
        '-o',
        'Dir::Etc::sourceparts=-',
        '-o',
        'APT::Get::List-Cleanup=0',
      ])
      .then(
        (x) => ({ ok: true, text: x.stdout }),
        (err: Error) => ({ ok: false, text: err.message }),
      );
    // apt keeps the lists it verified before and warns: the new index is not taken.
    assert.match(update.text, /signatures couldn't be verified[^\n]*NO_PUBKEY/, update.text);
  });
});
