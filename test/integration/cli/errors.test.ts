import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { writeKubeconfig } from '../../fakes/kubeconfig.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BPA = join(ROOT, 'bin', 'bpa');
const EXAMPLE = join(ROOT, 'sites', 'example');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function bpa(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      BPA,
      args,
      // A clean environment: no BPA_* or KUBECONFIG of the person running the tests.
      {
        cwd: ROOT,
        timeout: 30_000,
        env: { PATH: process.env['PATH'] ?? '', HOME: '/nonexistent', ...env },
      },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** One line on stderr, naming the command and the code; nothing that looks like a stack. */
function assertOneLine(r: Result, command: string, code: string): void {
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `expected one line, got:\n${r.stderr}`);
  assert.match(lines[0] ?? '', new RegExp(`^bpa ${command}: ${code}: `));
  assert.doesNotMatch(r.stderr, /\bat .*\(.*:\d+:\d+\)|internal error/);
}

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

describe('exit codes: 2 means changes, every error 1, a wrong command line 64', function () {
  this.timeout(90_000);
  let tmp: string;
  let kube: FakeKube;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-errors-'));
    kube = await startFakeKube();
  });
  after(async () => {
    await kube?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('changes: exit 2; a missing path: exit 1, one line saying what to do', async () => {
    assert.equal((await bpa(['plan', EXAMPLE, '--state', join(tmp, 'fresh')])).code, 2);
    const r = await bpa(['plan', join(tmp, 'nope')]);
    assert.equal(r.code, 1);
    assertOneLine(r, 'plan', 'PATH_NOT_FOUND');
    assert.match(r.stderr, /give an existing site directory/);
  });

  it('-o json prints the error as JSON too', async () => {
    const r = await bpa(['plan', '-o', 'json', join(tmp, 'nope')]);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { error: { code: string; retry: string } };
    assert.deepEqual([out.error.code, out.error.retry], ['PATH_NOT_FOUND', 'stalled']);
  });

  it('an unknown flag and reconcile without --once: 64', async () => {
    const unknown = await bpa(['plan', '--frobnicate', EXAMPLE]);
    assert.equal(unknown.code, 64);
    assert.match(unknown.stderr, /unknown option '--frobnicate'/);
    const once = await bpa(['reconcile', EXAMPLE]);
    assert.equal(once.code, 64);
    assertOneLine(once, 'reconcile', 'USAGE');
    assert.match(once.stderr, /use bpa serve/);
  });

  it('a kubeconfig that does not exist or is not a kubeconfig: 1, KUBECONFIG_INVALID', async () => {
    const missing = await bpa(['plan', EXAMPLE, '--kubeconfig', join(tmp, 'none.yaml')]);
    assert.equal(missing.code, 1);
    assertOneLine(missing, 'plan', 'KUBECONFIG_INVALID');
    assert.match(missing.stderr, /none\.yaml .*does not exist/);
    const garbage = join(tmp, 'garbage.yaml');
    await writeFile(garbage, 'clusters: [[[\n');
    const bad = await bpa(['plan', EXAMPLE, '--kubeconfig', garbage]);
    assert.equal(bad.code, 1);
    assertOneLine(bad, 'plan', 'KUBECONFIG_INVALID');
    const empty = join(tmp, 'empty.yaml');
    await writeFile(empty, 'apiVersion: v1\nkind: Config\n');
    const noContext = await bpa(['plan', EXAMPLE, '--kubeconfig', empty]);
    assert.equal(noContext.code, 1);
    assert.match(noContext.stderr, /no current context/);
  });

  it('the API server says 401 or 403, or refuses the connection: 1, INVENTORY_UNAVAILABLE', async () => {
    const wrongToken = await writeKubeconfig(join(tmp, 'wrong-token.yaml'), {
      server: kube.url,
      token: 'not-the-token',
    });
    const r401 = await bpa(['plan', EXAMPLE, '--kubeconfig', wrongToken]);
    assert.equal(r401.code, 1);
    assertOneLine(r401, 'plan', 'INVENTORY_UNAVAILABLE');
    assert.match(r401.stderr, /not authenticated \(401\); check the kubeconfig credentials/);

    kube.fail(
      { pathPrefix: '/apis/metal3.io' },
      { code: 403, message: 'baremetalhosts is forbidden' },
    );
    try {
      const r403 = await bpa(['plan', EXAMPLE, '--kubeconfig', kube.kubeconfigPath]);
      assert.equal(r403.code, 1);
      assertOneLine(r403, 'plan', 'INVENTORY_UNAVAILABLE');
      assert.match(r403.stderr, /forbidden \(403\).*grant list on baremetalhosts/);
    } finally {
      kube.clearFaults();
    }

    const refused = await writeKubeconfig(join(tmp, 'refused.yaml'), {
      server: `http://127.0.0.1:${await closedPort()}`,
      token: 't',
    });
    const rRefused = await bpa(['plan', EXAMPLE, '--kubeconfig', refused]);
    assert.equal(rRefused.code, 1);
    assertOneLine(rRefused, 'plan', 'INVENTORY_UNAVAILABLE');
    assert.match(rRefused.stderr, /ECONNREFUSED|refused/);
  });

  it('a corrupt applied.json in the state directory: 1, STATE_CORRUPT naming the file', async () => {
    const state = join(tmp, 'state');
    await mkdir(join(state, 'clusters', 'cluster-east'), { recursive: true });
    await writeFile(join(state, 'clusters', 'cluster-east', 'applied.json'), '{"cluster": "cl');
    const r = await bpa(['plan', EXAMPLE, '--state', state]);
    assert.equal(r.code, 1);
    assertOneLine(r, 'plan', 'STATE_CORRUPT');
    assert.match(r.stderr, /applied\.json: not a valid applied-state file.*move it away/);
  });

  it('a state path that is not a directory: 1, STATE_DIR_INVALID, for every command that takes --state', async () => {
    const file = join(tmp, 'state-file');
    await writeFile(file, 'not a directory\n');
    const commands: Array<[string, string[]]> = [
      ['plan', ['plan', EXAMPLE]],
      ['diff', ['diff', EXAMPLE, EXAMPLE]],
      ['apply', ['apply', EXAMPLE]],
      ['reconcile', ['reconcile', '--once', EXAMPLE]],
      // Refused before the repository is fetched into the state directory's cache.
      ['reconcile', ['reconcile', '--once', '--repo', 'http://127.0.0.1:1/site.git']],
      ['serve', ['serve', '--watch', EXAMPLE, '--listen', '127.0.0.1:0']],
    ];
    for (const [command, args] of commands) {
      for (const [state, why] of [
        ['/dev/null', /the state directory \/dev\/null is not a directory but a device/],
        [file, /is not a directory but a file/],
        [join(file, 'sub'), /cannot be created: a part of its path is not a directory/],
      ] as const) {
        const r = await bpa([...args, '--state', state]);
        assert.equal(r.code, 1, `${args.join(' ')} --state ${state}: ${r.stdout}${r.stderr}`);
        const last = r.stderr.trim().split('\n').pop() ?? '';
        assert.match(last, new RegExp(`^bpa ${command}: STATE_DIR_INVALID: `), r.stderr);
        assert.match(last, why);
        assert.match(last, /give --state \(BPA_STATE_DIR\) a directory/);
        assert.doesNotMatch(r.stderr, /INTERNAL_ERROR|this is a bug/);
      }
    }
    // BPA_STATE_DIR is the same setting.
    const fromEnv = await bpa(['plan', EXAMPLE], { BPA_STATE_DIR: '/dev/null' });
    assert.equal(fromEnv.code, 1);
    assertOneLine(fromEnv, 'plan', 'STATE_DIR_INVALID');
  });

  it('a bad setting: CONFIG_INVALID naming the setting, its source and the allowed values', async () => {
    const flag = await bpa(['plan', EXAMPLE, '--flavour', 'KUD']);
    assert.equal(flag.code, 64, 'a bad flag value is a wrong command line');
    assertOneLine(flag, 'plan', 'CONFIG_INVALID');
    assert.match(
      flag.stderr,
      /setting flavour: "KUD" from the flag --flavour .*allowed: one of kud, kubespray/,
    );

    const env = await bpa(['plan', EXAMPLE], { BPA_FLAVOUR: 'foo' });
    assert.equal(env.code, 1);
    assertOneLine(env, 'plan', 'CONFIG_INVALID');
    assert.match(env.stderr, /from the environment variable BPA_FLAVOUR/);

    const order = await bpa(['plan', EXAMPLE, '--ip-order', 'foo,bar']);
    assert.equal(order.code, 64);
    assert.match(order.stderr, /setting ipOrder: "foo,bar" .*"foo", which is not allowed/);

    const integer = await bpa(['plan', EXAMPLE, '--max-parallel-hosts', 'many']);
    assert.equal(integer.code, 64);
    assert.match(integer.stderr, /is not an integer; allowed: an integer from 1 to 1024/);

    const level = await bpa(['apply', EXAMPLE], { BPA_LOG_LEVEL: 'loud' });
    assert.equal(level.code, 1);
    assertOneLine(level, 'apply', 'CONFIG_INVALID');
    assert.match(level.stderr, /BPA_LOG_LEVEL/);
  });

  it('serve: --interval below the documented minimum, --repo with --watch: refused before starting', async () => {
    const interval = await bpa(['serve', '--watch', EXAMPLE, '--interval', '1ms']);
    assert.equal(interval.code, 64);
    assertOneLine(interval, 'serve', 'CONFIG_INVALID');
    assert.match(interval.stderr, /shorter than the minimum of 10s/);
    const badDuration = await bpa(['serve', '--watch', EXAMPLE], { BPA_RESYNC_INTERVAL: 'often' });
    assert.equal(badDuration.code, 1);
    assert.match(badDuration.stderr, /setting resyncInterval: "often" .* is not a duration/);

    const both = await bpa(['serve', '--watch', EXAMPLE, '--repo', 'http://127.0.0.1:1/site.git']);
    assert.equal(both.code, 64);
    assertOneLine(both, 'serve', 'USAGE');
    const fromEnv = await bpa(['serve', '--watch', EXAMPLE], {
      BPA_REPO_URL: 'http://127.0.0.1:1/site.git',
    });
    assert.equal(fromEnv.code, 64);
    assert.match(fromEnv.stderr, /the environment variable BPA_REPO_URL/);
    const neither = await bpa(['serve']);
    assert.equal(neither.code, 64);
  });

  it('serve --source kubernetes: with a repository, a directory or --require-approved-plan, refused; a bad source or namespace is a configuration error', async () => {
    for (const extra of [
      ['--repo', 'http://127.0.0.1:1/site.git'],
      ['--watch', EXAMPLE],
      ['--require-approved-plan'],
    ]) {
      const r = await bpa(['serve', '--source', 'kubernetes', ...extra]);
      assert.equal(r.code, 64, `${extra.join(' ')}: ${r.stderr}`);
      assertOneLine(r, 'serve', 'USAGE');
    }
    const env = await bpa(['serve', '--repo', 'http://127.0.0.1:1/site.git'], {
      BPA_SOURCE: 'kubernetes',
    });
    assert.equal(env.code, 64);
    assert.match(env.stderr, /--source kubernetes takes the site from the cluster's objects/);
    const bad = await bpa(['serve', '--source', 'svn']);
    assert.equal(bad.code, 64);
    assertOneLine(bad, 'serve', 'CONFIG_INVALID');
    const ns = await bpa([
      'serve',
      '--source',
      'kubernetes',
      '--watch-namespace',
      'Not_A_Namespace',
    ]);
    assert.equal(ns.code, 64);
    assertOneLine(ns, 'serve', 'CONFIG_INVALID');
    // Without a kubeconfig or a pod to run in, operator mode says what it needs.
    const none = await bpa(['serve', '--source', 'kubernetes', '--listen', '127.0.0.1:0'], {
      KUBERNETES_SERVICE_HOST: '',
      KUBECONFIG: '',
    });
    assert.equal(none.code, 1, none.stderr);
    assert.match(
      none.stderr,
      /NO_KUBECONFIG: operator mode \(--source kubernetes\) needs a kubeconfig/,
    );
  });

  it('reconcile: a directory and --repo together are refused', async () => {
    const r = await bpa(['reconcile', '--once', EXAMPLE, '--repo', 'http://127.0.0.1:1/s.git']);
    assert.equal(r.code, 64);
    assertOneLine(r, 'reconcile', 'USAGE');
  });

  it('a site with a bad Site setting is a site error with its line, not a crash', async () => {
    const site = join(tmp, 'site');
    await cp(EXAMPLE, site, { recursive: true });
    const text = (await import('node:fs/promises')).readFile(join(site, 'site.yaml'), 'utf8');
    await writeFile(join(site, 'site.yaml'), (await text).replace('flavour: kud', 'flavour: KUD'));
    const r = await bpa(['plan', site, '--state', join(tmp, 's2')]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /site\.yaml:\d+:\d+: error \w+: .*flavour/);
  });
});
