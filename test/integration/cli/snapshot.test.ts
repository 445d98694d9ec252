import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cp,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SNAPSHOT = join(ROOT, 'dist', 'snapshot');
const BIN = join(ROOT, 'bin', 'bpa');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `bpa` run as a program (the shell half of bin/bpa), with no coverage and no NODE_OPTIONS
 * unless given: BPA_SNAPSHOT=on starts validate, plan and diff from the start-up snapshot
 * or fails, BPA_SNAPSHOT=off never starts from it.
 */
function bpa(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      {
        cwd,
        timeout: 60_000,
        maxBuffer: 1 << 26,
        // Empty, not deleted: a child of a process under coverage gets NODE_V8_COVERAGE
        // unless its environment names the variable.
        env: { ...process.env, NODE_V8_COVERAGE: '', NODE_OPTIONS: '', BPA_STATE_DIR: '', ...env },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Runs `args` from the snapshot (`snapshotBin`: an installation with nothing else to run a
 * command with) and from the bundle (the repository's bin/bpa); both must agree, byte for byte.
 */
async function bothWays(snapshotBin: string, args: string[], cwd: string): Promise<Run> {
  const fromSnapshot = await bpa(snapshotBin, args, { BPA_SNAPSHOT: 'on' }, cwd);
  const fromBundle = await bpa(BIN, args, { BPA_SNAPSHOT: 'off' }, cwd);
  assert.deepEqual(fromSnapshot, fromBundle, `bpa ${args.join(' ')}`);
  return fromSnapshot;
}

/**
 * An installation in `dir`, as an image or a moved checkout has it: bin/bpa and package.json
 * copied, node_modules linked, the snapshot copied (its stamp keeping its time) and, with
 * `withBundle`, the rest of dist/ linked. Without it, only the snapshot can run a command.
 */
async function install(dir: string, withBundle: boolean): Promise<string> {
  await mkdir(join(dir, 'bin'), { recursive: true });
  await mkdir(join(dir, 'dist'));
  const bin = join(dir, 'bin', 'bpa');
  await cp(BIN, bin);
  await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  if (withBundle) {
    for (const entry of await readdir(join(ROOT, 'dist'))) {
      if (entry !== 'snapshot') await symlink(join(ROOT, 'dist', entry), join(dir, 'dist', entry));
    }
  }
  await cp(SNAPSHOT, join(dir, 'dist', 'snapshot'), { recursive: true });
  await touchLike(join(dir, 'dist', 'snapshot', 'node.stamp'), join(SNAPSHOT, 'node.stamp'));
  return bin;
}

/**
 * bin/bpa starts `bpa validate`, `bpa plan` and `bpa diff` from the CLI's start-up snapshot
 * (scripts/bundle.mjs, docs/PERFORMANCE.md): the same output and exit codes as the bundle,
 * from wherever the installation is, and the bundle whenever the snapshot cannot be read.
 */
describe('the start-up snapshot (dist/snapshot) behaves as the bundle', function () {
  this.timeout(300_000);
  let dir: string;
  /** bin/bpa of an installation elsewhere that has the snapshot and no bundle. */
  let snap: string;
  before(async function () {
    // Asked of a node of its own: the tests' node runs without require(esm) (.mocharc).
    if ((await nodeEval('process.features.require_module')) !== 'true') {
      console.log(
        `      skipped: Node.js ${process.version} cannot require() an ES module, so npm run build makes no snapshot`,
      );
      this.skip();
    }
    dir = await mkdtemp(join(tmpdir(), 'bpa-snapshot-'));
    const example = join(ROOT, 'sites', 'example');
    await cp(example, join(dir, 'site'), { recursive: true });
    await cp(example, join(dir, 'broken'), { recursive: true });
    await writeFile(
      join(dir, 'broken', 'extra.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\nmetadata:\n  name: [x\n',
    );
    await cp(example, join(dir, 'unplaced'), { recursive: true });
    const prov = join(dir, 'unplaced', 'clusters', 'cluster-east', 'provisioning.yaml');
    await writeFile(prov, (await readFile(prov, 'utf8')).replace(/cpu: 24/g, 'cpu: 512'));
    // .bpaignore (read with a package the snapshot holds), and a file that is not UTF-8.
    await cp(example, join(dir, 'ignoring'), { recursive: true });
    await writeFile(join(dir, 'ignoring', '.bpaignore'), 'drafts/\n');
    await mkdir(join(dir, 'ignoring', 'drafts'));
    await writeFile(join(dir, 'ignoring', 'drafts', 'wip.yaml'), 'kind: [\n');
    await cp(example, join(dir, 'latin1'), { recursive: true });
    await writeFile(join(dir, 'latin1', 'notes.yaml'), Buffer.from('# caf\xe9\n', 'latin1'));
    // A repository of two revisions, for bpa diff BASE HEAD -C REPO (isomorphic-git).
    const repo = join(dir, 'repo');
    await cp(example, join(repo, 'site'), { recursive: true });
    await git(repo, 'init', '-q');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-qm', 'base');
    const software = join(repo, 'site', 'clusters', 'cluster-east', 'software.yaml');
    await writeFile(software, (await readFile(software, 'utf8')).replace('- htop', '- vim'));
    await git(repo, 'commit', '-qam', 'head');
    snap = await install(join(dir, 'snapshot-only'), false);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('gives the output and exit code of the bundle for validate, plan and diff', async () => {
    const cases: Array<[string[], number]> = [
      [['validate', 'site'], 0],
      [['validate', 'broken'], 1],
      [['validate', 'broken', '-o', 'json'], 1],
      [['validate', 'broken', '-o', 'github'], 1],
      [['validate', 'ignoring'], 0],
      [['validate', 'latin1'], 1],
      [['plan', 'site', '--state', 'state-a'], 2],
      [['plan', 'site', '--state', 'state-b', '-o', 'json'], 2],
      [['plan', 'site', '--state', 'state-c', '-o', 'markdown', '--out', 'ini'], 2],
      [['plan', 'ignoring', '--state', 'state-h', '-o', 'json'], 2],
      [['plan', 'unplaced', '--state', 'state-d'], 1],
      [['plan', 'missing'], 1],
      [['plan', '--no-such-option'], 64],
      [['plan', '--help'], 0],
      [['diff', 'site', 'broken', '--state', 'state-e'], 1],
      [['diff', 'site', 'unplaced', '--state', 'state-f', '-o', 'json'], 1],
      [['diff', 'HEAD~1', 'HEAD', '-C', 'repo', '--path', 'site', '--state', 'state-i'], 2],
    ];
    for (const [args, code] of cases) {
      const r = await bothWays(snap, args, dir);
      assert.equal(r.code, code, `bpa ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    }
    // That installation has nothing but the snapshot to run a command with.
    const noBundle = await bpa(snap, ['validate', 'site'], { BPA_SNAPSHOT: 'off' }, dir);
    assert.equal(noBundle.code, 2);
    assert.match(noBundle.stderr, /is missing; run "npm ci" or "npm run build" first/);
    // A located problem keeps its file:line.
    const unplaced = await bpa(
      snap,
      ['plan', 'unplaced', '--state', 'state-g'],
      { BPA_SNAPSHOT: 'on' },
      dir,
    );
    assert.match(
      unplaced.stdout,
      /provisioning\.yaml:\d+:\d+: error NODE_UNPLACED: cluster cluster-east: worker-1: needs cpu>=512/,
    );
    // --out wrote the hosts.ini files.
    assert.ok((await readdir(join(dir, 'ini'))).length > 0);
  });

  it('starts through a link to bin/bpa, as npm installs it', async () => {
    const link = join(dir, 'link-bin', 'bpa');
    await mkdir(join(dir, 'link-bin'));
    await symlink(snap, link);
    const r = await bothWays(link, ['validate', 'site'], dir);
    assert.equal(r.code, 0, r.stderr);
  });

  it('loads packages it does not hold (the Kubernetes client) from the installation', async () => {
    const { startFakeKube } = await import('../../fakes/kube-api-server.js');
    const { putObjectsOf } = await import('../../fakes/kube-inventory.js');
    const kube = await startFakeKube();
    try {
      await putObjectsOf(kube, join(ROOT, 'sites', 'example', 'inventory', 'hosts.yaml'));
      await cp(join(dir, 'site'), join(dir, 'api-site'), { recursive: true });
      await rm(join(dir, 'api-site', 'inventory'), { recursive: true });
      const args = (state: string): string[] => [
        'plan',
        'api-site',
        '-o',
        'json',
        '--state',
        state,
        '--kubeconfig',
        kube.kubeconfigPath,
        '--inventory-namespace',
        'metal3',
      ];
      const listed = kube.requests.length;
      const fromSnapshot = await bpa(snap, args('kube-a'), { BPA_SNAPSHOT: 'on' }, dir);
      assert.equal(fromSnapshot.code, 2, fromSnapshot.stdout + fromSnapshot.stderr);
      assert.ok(
        kube.requests
          .slice(listed)
          .some((r) => r.path === '/apis/metal3.io/v1alpha1/namespaces/metal3/baremetalhosts'),
      );
      const fromBundle = await bpa(BIN, args('kube-b'), { BPA_SNAPSHOT: 'off' }, dir);
      assert.deepEqual(fromSnapshot, fromBundle);
      const embedded = await bpa(BIN, ['plan', 'site', '-o', 'json', '--state', 'kube-c'], {}, dir);
      const hash = (out: string): string => (JSON.parse(out) as { hash: string }).hash;
      assert.equal(hash(fromSnapshot.stdout), hash(embedded.stdout));
    } finally {
      await kube.stop();
    }
  });

  it('falls back to the bundle when another Node.js built the snapshot, NODE_OPTIONS is set, or there is none', async () => {
    const inst = join(dir, 'installed');
    const instBin = await install(inst, true);
    const stamp = join(inst, 'dist', 'snapshot', 'node.stamp');
    const refusal =
      'bpa: cannot start from the start-up snapshot: another Node.js built it (npm run build makes it again)\n';

    // The same node, changed since (another time).
    await utimes(stamp, new Date(), new Date(Date.now() - 86_400_000));
    const changed = await bpa(instBin, ['validate', 'site'], { BPA_SNAPSHOT: 'on' }, dir);
    assert.deepEqual([changed.code, changed.stderr], [1, refusal]);
    const fallback = await bpa(instBin, ['validate', 'site'], {}, dir);
    assert.equal(fallback.code, 0, fallback.stderr);
    assert.match(fallback.stdout, /valid/);

    // Another file with the same time (as every file of a Nix store has).
    const text = await readFile(stamp, 'utf8');
    await writeFile(stamp, `/bin/sh\n${text.split('\n')[1] ?? ''}\n`);
    await touchLike(stamp, join(SNAPSHOT, 'node.stamp'));
    const other = await bpa(instBin, ['validate', 'site'], { BPA_SNAPSHOT: 'on' }, dir);
    assert.deepEqual([other.code, other.stderr], [1, refusal]);
    await writeFile(stamp, text);
    await touchLike(stamp, join(SNAPSHOT, 'node.stamp'));
    const same = await bpa(instBin, ['validate', 'site'], { BPA_SNAPSHOT: 'on' }, dir);
    assert.equal(same.code, 0, same.stderr);

    const options = { NODE_OPTIONS: '--max-old-space-size=512' };
    const refusedOptions = await bpa(
      instBin,
      ['validate', 'site'],
      { ...options, BPA_SNAPSHOT: 'on' },
      dir,
    );
    assert.equal(refusedOptions.code, 1);
    assert.match(refusedOptions.stderr, /NODE_OPTIONS is set/);
    const withOptions = await bpa(instBin, ['validate', 'site'], options, dir);
    assert.equal(withOptions.code, 0, withOptions.stderr);

    await rm(join(inst, 'dist', 'snapshot'), { recursive: true });
    const none = await bpa(instBin, ['validate', 'site'], { BPA_SNAPSHOT: 'on' }, dir);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /has none \(npm run build makes it\)/);
    const without = await bpa(instBin, ['validate', 'site'], {}, dir);
    assert.equal(without.code, 0, without.stderr);
  });

  it('gives V8 one helper thread fewer than the cores, on machines of four cores or fewer', async () => {
    // An installation whose snapshot names a `node` that writes down how it was started, then
    // runs this Node.js; `nproc` says how many cores there are (BPA_TEST_CORES, or fails).
    const inst = join(dir, 'pool');
    const instBin = await install(inst, true);
    const fake = join(dir, 'pool-bin');
    await mkdir(fake);
    const log = join(dir, 'pool.log');
    const nprocSays = '#!/bin/sh\n[ -n "$BPA_TEST_CORES" ] || exit 1\necho "$BPA_TEST_CORES"\n';
    const node = join(fake, 'node');
    await writeFile(
      node,
      `#!/bin/sh\nprintf '%s\\n' "$*" >"$BPA_TEST_LOG"\nexec '${process.execPath}' "$@"\n`,
      { mode: 0o755 },
    );
    await writeFile(join(fake, 'nproc'), nprocSays, { mode: 0o755 });
    const stamp = join(inst, 'dist', 'snapshot', 'node.stamp');
    await writeFile(stamp, `${node}\n${process.version}\n`);
    await touchLike(stamp, node);
    const started = async (env: NodeJS.ProcessEnv): Promise<string> => {
      await rm(log, { force: true });
      const run = await bpa(
        instBin,
        ['validate', 'site'],
        { PATH: `${fake}:${process.env['PATH'] ?? ''}`, BPA_TEST_LOG: log, ...env },
        dir,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /valid/);
      return (await readFile(log, 'utf8')).trim();
    };
    const expected: Array<[string, string]> = [
      ['1', '--v8-pool-size=1 '],
      ['2', '--v8-pool-size=1 '],
      ['3', '--v8-pool-size=2 '],
      ['4', '--v8-pool-size=3 '],
      ['5', ''],
      ['16', ''],
      ['', ''], // nproc fails
      ['two', ''],
    ];
    for (const [cores, pool] of expected) {
      const args = await started({ BPA_TEST_CORES: cores, BPA_SNAPSHOT: 'on' });
      assert.ok(args.startsWith(`${pool}--snapshot-blob `), `${cores} cores: node ${args}`);
    }
    // The real nproc (where there is one): the cores this process may run on, whatever
    // OpenMP's variables ask for. They ask for a count that would change the flag.
    await rm(join(fake, 'nproc'));
    const cores = await nproc();
    if (cores === undefined) {
      console.log('      (no nproc on this machine: the real one is not checked)');
    } else {
      const omp = cores <= 4 ? '7' : '1';
      const env = { OMP_NUM_THREADS: omp, OMP_THREAD_LIMIT: omp, BPA_SNAPSHOT: 'on' };
      const real = await started(env);
      const pool = cores <= 4 ? `--v8-pool-size=${Math.max(1, cores - 1)} ` : '';
      assert.ok(real.startsWith(`${pool}--snapshot-blob `), `${cores} cores: node ${real}`);
    }
    await writeFile(join(fake, 'nproc'), nprocSays, { mode: 0o755 });
    // Without the snapshot the bundle gets the same; NODE_OPTIONS that chooses is left to choose.
    const bundle = await started({ BPA_TEST_CORES: '2', BPA_SNAPSHOT: 'off' });
    assert.ok(bundle.startsWith(`--v8-pool-size=1 ${instBin} validate`), bundle);
    for (const option of ['--v8-pool-size=2', '--v8_pool_size=2']) {
      const chosen = await started({ BPA_TEST_CORES: '2', NODE_OPTIONS: option });
      assert.ok(chosen.startsWith(`${instBin} validate`), `${option}: node ${chosen}`);
    }
  });

  it('other commands, and node bin/bpa, run the bundle; a bad BPA_SNAPSHOT is a usage error', async () => {
    const version = await bpa(BIN, ['--version'], { BPA_SNAPSHOT: 'on' }, dir);
    assert.equal(version.code, 0, version.stderr);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(version.stdout, `${pkg.version}\n`);
    const asScript = await bpa(
      process.execPath,
      [BIN, 'validate', 'site'],
      { BPA_SNAPSHOT: 'on' },
      dir,
    );
    assert.equal(asScript.code, 0, asScript.stderr);
    const bad = await bpa(BIN, ['validate', 'site'], { BPA_SNAPSHOT: 'y\\cz' }, dir);
    assert.equal(bad.code, 64);
    assert.equal(bad.stderr, 'bpa: BPA_SNAPSHOT is "y\\cz": give on, off or auto\n');
  });
});

/** Gives `file` the modification time of `like`, to the nanosecond (touch -r). */
function touchLike(file: string, like: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('touch', ['-r', like, file], (err) => (err ? reject(err) : resolve()));
  });
}

/** The cores `nproc` says this process may run on, OpenMP's variables cleared; undefined without it. */
function nproc(): Promise<number | undefined> {
  return new Promise((resolve) => {
    execFile(
      'nproc',
      { env: { ...process.env, OMP_NUM_THREADS: '', OMP_THREAD_LIMIT: '' } },
      (err, stdout) => resolve(err ? undefined : Number(stdout.trim())),
    );
  });
}

/** What `node -p expression` prints, without NODE_OPTIONS. */
function nodeEval(expression: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-p', expression],
      { env: { ...process.env, NODE_OPTIONS: '' } },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim())),
    );
  });
}

/** Runs git in `cwd`, as a fixed author. */
function git(cwd: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-c', 'user.name=bpa test', '-c', 'user.email=test@bpa.invalid', ...args],
      { cwd },
      (err) => (err ? reject(err) : resolve()),
    );
  });
}
