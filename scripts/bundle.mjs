// Bundles the compiled CLI (dist/cli/main.js and the modules it imports) into dist/bundle/,
// which bin/bpa runs: one file to load instead of a hundred, a tenth of `bpa validate`'s time
// on a large site. Modules the CLI imports lazily (serve, apply, the Kubernetes and SSH
// layers) become chunks of their own, loaded as before only by the commands that need them;
// packages stay in node_modules. Source maps chain to src/ through tsc's, for stack traces
// and coverage. Run by `npm run build` after tsc. Whitespace and syntax are minified (names
// are kept, for profiles and stack traces): less for V8 to parse at every start.
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
