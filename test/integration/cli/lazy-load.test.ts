import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
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
): Promise<{ code: number; modules: string[] }> {
  const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  const code = await new Promise<number>((resolve) => {
    execFile(
      process.execPath,
      ['--import', PRELOAD, ...args],
      { cwd: ROOT, env: { ...process.env, BPA_TEST_MODULE_LOG: log }, timeout: 60_000 },
      (err) => resolve(err ? (typeof err.code === 'number' ? err.code : -1) : 0),
    );
  });
  const text = await readFile(log, 'utf8').catch(() => '');
  return { code, modules: text.split('\n').filter(Boolean) };
}

const heavyIn = (modules: string[]): string[] =>
  HEAVY.filter((h) => modules.some((m) => m.includes(`/node_modules/${h}/`)));

describe('lazy loading: bpa validate and bpa --version load no heavy modules', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-lazy-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the recorder sees a heavy module when one is loaded', async () => {
    const r = await modulesOf(
      ['--input-type=module', '-e', "await import('isomorphic-git'); await import('node-ssh');"],
      dir,
    );
    assert.equal(r.code, 0);
    assert.deepEqual(heavyIn(r.modules), ['isomorphic-git', 'node-ssh']);
  });

  it('bpa --version', async () => {
    const r = await modulesOf([join(ROOT, 'bin', 'bpa'), '--version'], dir);
    assert.equal(r.code, 0);
    assert.ok(
      r.modules.some((m) => m.includes('/dist/cli/main.js')),
      'the CLI was recorded',
    );
    assert.deepEqual(heavyIn(r.modules), []);
  });

  it('bpa validate', async () => {
    const r = await modulesOf([join(ROOT, 'bin', 'bpa'), 'validate', 'sites/example'], dir);
    assert.equal(r.code, 0);
    assert.ok(
      r.modules.some((m) => m.includes('/dist/validate/')),
      'the validator was recorded',
    );
    assert.deepEqual(heavyIn(r.modules), []);
  });

  it("bpa validate and bpa plan load neither ajv's schema compiler, the yaml package nor pino", async () => {
    // The schemas are compiled at development time (src/validate/compiled-schemas.ts), the
    // yaml package only writes reports and reads status, and neither command logs (its logger
    // is util/silent-logger.ts): none of them is a site's validation or plan.
    const state = join(dir, 'state');
    for (const args of [
      ['validate', 'sites/example'],
      ['plan', 'sites/example', '--state', state, '-o', 'json'],
    ]) {
      const r = await modulesOf([join(ROOT, 'bin', 'bpa'), ...args], dir);
      assert.ok([0, 2].includes(r.code), `bpa ${args[0]} exited ${r.code}`);
      assert.ok(
        r.modules.some((m) => m.includes('/dist/validate/compiled-schemas.js')),
        `bpa ${args[0]}: the compiled schemas were recorded`,
      );
      const compiler = r.modules.filter(
        (m) =>
          /\/node_modules\/ajv\/dist\/(core|ajv|compile\/)/.test(m) ||
          m.includes('/node_modules/yaml/') ||
          m.includes('/node_modules/pino/'),
      );
      assert.deepEqual(compiler, [], `bpa ${args[0]}`);
    }
  });
});
