import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BPA = join(ROOT, 'bin', 'bpa');
const PRELOAD = fileURLToPath(new URL('./fixtures/record-modules.mjs', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  modules: string[];
}

/**
 * bin/bpa as a process, through the bundle (no NODE_V8_COVERAGE) or through the modules tsc
 * wrote (NODE_V8_COVERAGE set, as under c8), with the modules it resolved.
 */
async function bpa(args: string[], dir: string, bundled: boolean): Promise<Run> {
  const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  const env: NodeJS.ProcessEnv = { ...process.env, BPA_TEST_MODULE_LOG: log };
  // Empty, not deleted: Node.js gives a child of a process under coverage its NODE_V8_COVERAGE
  // unless the child's environment names the variable itself.
  env['NODE_V8_COVERAGE'] = '';
  if (!bundled) env['NODE_V8_COVERAGE'] = join(dir, 'coverage');
  const r = await new Promise<Omit<Run, 'modules'>>((resolve) => {
    execFile(
      process.execPath,
      ['--import', PRELOAD, BPA, ...args],
      { cwd: dir, env, timeout: 60_000, maxBuffer: 1 << 26 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
  const text = await readFile(log, 'utf8').catch(() => '');
  return { ...r, modules: text.split('\n').filter(Boolean) };
}

/** bpa's own compiled files a process loaded, relative to the repository (no packages). */
const ours = (modules: string[]): string[] =>
  modules
    .map((m) => m.replace(/^file:\/\//, ''))
    .filter((m) => m.startsWith(`${ROOT}dist/`))
    .map((m) => m.slice(ROOT.length));

/**
 * `bin/bpa` runs the bundle scripts/bundle.mjs builds (dist/bundle/), and the modules tsc
 * wrote only under coverage: the same commands give the same output and exit code either
 * way, including commands whose modules the CLI loads lazily (chunks of the bundle).
 */
describe('the bundled CLI (dist/bundle) behaves as the modules it is built from', function () {
  this.timeout(180_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-bundle-'));
    await cp(join(ROOT, 'sites', 'example'), join(dir, 'site'), { recursive: true });
    await cp(join(ROOT, 'sites', 'example'), join(dir, 'broken'), { recursive: true });
    await writeFile(
      join(dir, 'broken', 'extra.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\nmetadata:\n  name: [x\n',
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const commands: Array<{ args: (d: string) => string[]; code: number }> = [
    { args: () => ['--version'], code: 0 },
    { args: () => ['validate', 'site'], code: 0 },
    { args: () => ['validate', 'broken', '-o', 'json'], code: 1 },
    { args: (d) => ['plan', 'site', '--state', join(d, 'state-plan'), '-o', 'json'], code: 2 },
    { args: (d) => ['diff', 'site', 'broken', '--state', join(d, 'state-diff')], code: 1 },
    // apply and serve load the logging library and the controller lazily: chunks of the
    // bundle. Both stop at a usage or validation error, before touching anything.
    { args: (d) => ['apply', 'broken', '--state', join(d, 'state-apply')], code: 1 },
    { args: () => ['serve'], code: 64 },
    { args: () => ['completion', 'bash'], code: 0 },
  ];
  for (const { args, code } of commands) {
    it(`bpa ${args('STATE').join(' ')}`, async () => {
      const bundled = await bpa(args(dir), dir, true);
      const modules = await bpa(args(dir), dir, false);
      assert.equal(bundled.code, code, bundled.stderr);
      assert.equal(modules.code, code, modules.stderr);
      assert.equal(bundled.stdout, modules.stdout);
      assert.equal(bundled.stderr, modules.stderr);
      const fromBundle = ours(bundled.modules);
      assert.ok(fromBundle.includes('dist/bundle/main.js'), fromBundle.join(', '));
      assert.deepEqual(
        fromBundle.filter((m) => !m.startsWith('dist/bundle/')),
        [],
        'the bundle loads none of the separate modules',
      );
      assert.ok(ours(modules.modules).includes('dist/cli/main.js'));
    });
  }

  it('loads a third as many files for bpa validate as the modules do', async () => {
    const bundled = new Set(ours((await bpa(['validate', 'site'], dir, true)).modules));
    const modules = new Set(ours((await bpa(['validate', 'site'], dir, false)).modules));
    assert.ok(bundled.size * 3 < modules.size, `${bundled.size} files against ${modules.size}`);
  });

  it('says what to run when nothing was built, instead of a stack trace', async () => {
    const bin = join(dir, 'unbuilt', 'bin');
    await mkdir(bin, { recursive: true });
    await cp(BPA, join(bin, 'bpa'));
    const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(process.execPath, [join(bin, 'bpa'), '--version'], (err, _out, stderr) =>
        resolve({ code: err && typeof err.code === 'number' ? err.code : 0, stderr }),
      );
    });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^bpa: \S+dist\/cli\/main\.js is missing; run "npm ci" or "npm run build" first\n$/,
    );
  });
});
