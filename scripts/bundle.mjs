// Bundles the compiled CLI (dist/cli/main.js and the modules it imports) into dist/bundle/,
// which bin/bpa runs: one file to load instead of a hundred, a tenth of `bpa validate`'s time
// on a large site. Modules the CLI imports lazily (serve, apply, the Kubernetes and SSH
// layers) become chunks of their own, loaded as before only by the commands that need them;
// packages stay in node_modules. Source maps chain to src/ through tsc's, for stack traces
// and coverage. Run by `npm run build` after tsc. Whitespace and syntax are minified (names
// are kept, for profiles and stack traces): less for V8 to parse at every start.
//
// Then the start-up snapshot of `bpa validate`, `bpa plan` and `bpa diff` (dist/snapshot/):
// the whole CLI as one CommonJS script (dist/snapshot/bpa.cjs, from src/cli/snapshot.ts),
// which Node.js runs once here and keeps as a heap image (bpa.blob). bin/bpa starts those
// commands from it, without loading or compiling a module (docs/PERFORMANCE.md). The
// packages those commands load at every run are in the script; the others are loaded from
// node_modules when used, through a require made at start from where bin/bpa is.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'bundle');
await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, 'dist', 'cli', 'main.js')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  minifyWhitespace: true,
  minifySyntax: true,
});

const snapshotDir = join(root, 'dist', 'snapshot');
await rm(snapshotDir, { recursive: true, force: true });

/** Packages the snapshot holds: those `bpa validate` and `bpa plan` load at every run. */
const HELD = new Set(['commander', '@commander-js/extra-typings', 'p-limit', 'ignore']);
const dependencies = Object.keys(
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).dependencies,
);
const packageOf = (path) =>
  path
    .split('/')
    .slice(0, path.startsWith('@') ? 2 : 1)
    .join('/');
// ajv's runtime helpers (the compiled schemas' imports) are held; ajv itself is not.
const loadedAtRun = (path) =>
  !path.startsWith('ajv/dist/runtime/') &&
  dependencies.includes(packageOf(path)) &&
  !HELD.has(packageOf(path));

if (!process.features.require_module) {
  // A package that is only an ES module (the Kubernetes client) is loaded with require():
  // Node.js 20.19 and later. bin/bpa runs the bundle when there is no snapshot.
  console.log(
    `bundle: no start-up snapshot: Node.js ${process.version} cannot require() an ES module`,
  );
} else {
  const script = join(snapshotDir, 'bpa.cjs');
  await build({
    entryPoints: [join(root, 'dist', 'cli', 'snapshot.js')],
    outfile: script,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    minifyWhitespace: true,
    minifySyntax: true,
    define: { 'import.meta.url': '__bpaSnapshotRuntime.url' },
    plugins: [
      {
        name: 'loaded-at-run',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            loadedAtRun(args.path) ? { path: args.path, namespace: 'loaded-at-run' } : undefined,
          );
          b.onLoad({ filter: /.*/, namespace: 'loaded-at-run' }, (args) => ({
            contents: `module.exports = __bpaSnapshotRuntime.require(${JSON.stringify(args.path)});`,
            loader: 'js',
          }));
        },
      },
    ],
  });
  const blob = join(snapshotDir, 'bpa.blob');
  // Node.js warns that some built-in modules are not verified in a snapshot: those modules
  // are loaded, not used, while it is built (nothing runs but the modules' top levels).
  execFileSync(
    process.execPath,
    ['--no-warnings', '--snapshot-blob', blob, '--build-snapshot', script],
    {
      cwd: snapshotDir,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, NODE_OPTIONS: '' },
    },
  );
  // The Node.js that built it: its path (the first line), its version, and its modification
  // time as the stamp's own. bin/bpa uses the snapshot only with that same file, unchanged
  // since (another build of Node.js cannot read it).
  const stamp = join(snapshotDir, 'node.stamp');
  writeFileSync(stamp, `${process.execPath}\n${process.version}\n`);
  execFileSync('touch', ['-r', process.execPath, stamp]); // to the nanosecond
}
