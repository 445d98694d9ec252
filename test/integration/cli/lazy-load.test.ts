import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./fixtures/record-modules.mjs', import.meta.url));
/** The heavy dependencies only the commands that talk to nodes, git or Kubernetes load. */
const HEAVY = ['@kubernetes/client-node', 'isomorphic-git', 'node-ssh'];

/** The modules a `node --import PRELOAD ...args` process resolved, and its exit code. */
async function modulesOf(
  args: string[],
  dir: string,
  mode: Mode = 'modules',
): Promise<{ code: number; modules: string[] }> {
  const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  // bin/bpa runs the bundle, or the modules tsc wrote under coverage (NODE_V8_COVERAGE).
  const env: NodeJS.ProcessEnv = { ...process.env, BPA_TEST_MODULE_LOG: log };
  // Empty, not deleted: Node.js gives a child of a process under coverage its NODE_V8_COVERAGE
  // unless the child's environment names the variable itself.
  env['NODE_V8_COVERAGE'] = '';
  if (mode === 'modules') env['NODE_V8_COVERAGE'] = join(dir, 'coverage');
  const code = await new Promise<number>((resolve) => {
    execFile(
      process.execPath,
      ['--import', PRELOAD, ...args],
      { cwd: ROOT, env, timeout: 60_000 },
      (err) => resolve(err ? (typeof err.code === 'number' ? err.code : -1) : 0),
    );
  });
  const text = await readFile(log, 'utf8').catch(() => '');
  return { code, modules: text.split('\n').filter(Boolean) };
}

type Mode = 'bundle' | 'modules';

/**
 * The heavy modules loaded: from node_modules, or (the Kubernetes client, which
 * scripts/bundle.mjs bundles for its tree-shaking) a chunk of the bundle holding it.
 */
const heavyIn = (modules: string[]): string[] => {
  const loaded = HEAVY.filter((h) => modules.some((m) => m.includes(`/node_modules/${h}/`)));
  const kube = HEAVY[0] as string;
  const chunks = modules
    .filter((m) => m.includes('/dist/bundle/'))
    .map((m) => m.replace(/^file:\/\//, ''));
  if (
    !loaded.includes(kube) &&
    chunks.some((m) => readFileSync(m, 'utf8').includes('var KubeConfig=class'))
  )
    loaded.unshift(kube);
  return loaded;
};

describe('lazy loading: bpa validate and bpa --version load no heavy modules', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-lazy-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the recorder sees the Kubernetes client in a chunk of the bundle when one is loaded', async () => {
    const chunk = readdirSync(join(ROOT, 'dist', 'bundle')).find(
      (f) =>
        f.endsWith('.js') &&
        readFileSync(join(ROOT, 'dist', 'bundle', f), 'utf8').includes('var KubeConfig=class'),
    );
    assert.ok(chunk, 'a chunk holds the client');
    // Tree-shaken: the API groups bpa uses, not the 65 of the client (a namespace import of
    // the client, `await import('@kubernetes/client-node')`, would keep them all).
    const groups = readFileSync(join(ROOT, 'dist', 'bundle', chunk), 'utf8').match(
      /Observable[A-Za-z0-9]*Api=class/g,
    );
    assert.ok(groups && groups.length <= 10, `${groups?.length} API groups bundled`);
    const r = await modulesOf(
      ['--input-type=module', '-e', `await import('./dist/bundle/${chunk}');`],
      dir,
    );
    assert.equal(r.code, 0);
    assert.deepEqual(heavyIn(r.modules), ['@kubernetes/client-node']);
  });

  it('the recorder sees a heavy module when one is loaded', async () => {
    const r = await modulesOf(
      ['--input-type=module', '-e', "await import('isomorphic-git'); await import('node-ssh');"],
      dir,
    );
    assert.equal(r.code, 0);
    assert.deepEqual(heavyIn(r.modules), ['isomorphic-git', 'node-ssh']);
  });

  for (const mode of ['bundle', 'modules'] as const) {
    // What shows the CLI itself was recorded: its bundle, or its modules.
    const cli = mode === 'bundle' ? '/dist/bundle/main.js' : '/dist/cli/main.js';
    it(`bpa --version (${mode})`, async () => {
      const r = await modulesOf([join(ROOT, 'bin', 'bpa'), '--version'], dir, mode);
      assert.equal(r.code, 0);
      assert.ok(
        r.modules.some((m) => m.includes(cli)),
        'the CLI was recorded',
      );
      assert.deepEqual(heavyIn(r.modules), []);
    });

    it(`bpa validate (${mode})`, async () => {
      const r = await modulesOf([join(ROOT, 'bin', 'bpa'), 'validate', 'sites/example'], dir, mode);
      assert.equal(r.code, 0);
      assert.ok(
        r.modules.some((m) => m.includes(mode === 'bundle' ? cli : '/dist/validate/')),
        'the validator was recorded',
      );
      assert.deepEqual(heavyIn(r.modules), []);
    });
  }

  it('the SSH layer loads node-ssh (and ssh2, 16 MiB of WebAssembly memory) only to connect', async () => {
    // A serve whose clusters are all suspended, or have nothing to do, reaches no node.
    const r = await modulesOf(
      [
        '--input-type=module',
        '-e',
        "await import('./dist/ssh/session.js'); await import('./dist/ssh/pool.js'); await import('./dist/ssh/connect.js');",
      ],
      dir,
    );
    assert.equal(r.code, 0);
    assert.ok(
      r.modules.some((m) => m.includes('/dist/ssh/connect.js')),
      'the SSH layer was recorded',
    );
    assert.deepEqual(heavyIn(r.modules), []);
  });

  it("bpa validate and bpa plan load neither ajv's schema compiler, the yaml package nor pino", async () => {
    // The schemas are compiled at development time (src/validate/compiled-schemas.ts), the
    // yaml package only reads status and sops files, and neither command logs (its logger
    // is util/silent-logger.ts): none of them is a site's validation or plan. Checked on the
    // modules tsc wrote: the bundle holds the small packages (scripts/bundle.mjs) and keeps
    // the same lazy imports as chunks.
    const state = join(dir, 'state');
    for (const mode of ['modules'] as const) {
      for (const args of [
        ['validate', 'sites/example'],
        ['plan', 'sites/example', '--state', state, '-o', 'json'],
      ]) {
        const r = await modulesOf([join(ROOT, 'bin', 'bpa'), ...args], dir, mode);
        assert.ok([0, 2].includes(r.code), `bpa ${args[0]} exited ${r.code}`);
        // The compiled schemas' runtime helpers show the schema checks ran.
        assert.ok(
          r.modules.some((m) => m.includes('/node_modules/ajv/dist/runtime/')),
          `bpa ${args[0]}: the compiled schemas were recorded`,
        );
        const compiler = r.modules.filter(
          (m) =>
            /\/node_modules\/ajv\/dist\/(core|ajv|compile\/)/.test(m) ||
            m.includes('/node_modules/yaml/') ||
            m.includes('/node_modules/pino/'),
        );
        assert.deepEqual(compiler, [], `bpa ${args[0]} (${mode})`);
      }
    }
  });
});
