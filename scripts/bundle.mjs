// Bundles the compiled CLI (dist/cli/main.js and the modules it imports) into dist/bundle/,
// which bin/bpa runs: one file to load instead of a hundred, a tenth of `bpa validate`'s time
// on a large site. Modules the CLI imports lazily (serve, apply, the Kubernetes and SSH
// layers) become chunks of their own, loaded as before only by the commands that need them.
// Small packages every command uses (the YAML reader, the argument parser, the schema
// runtime) are bundled too, which spares each start ~20 ms of module resolution; the large
// ones only some commands load stay in node_modules (EXTERNAL). Source maps chain to src/ through tsc's, for stack traces
// and coverage. Run by `npm run build` after tsc. Whitespace and syntax are minified (names
// are kept, for profiles and stack traces): less for V8 to parse at every start.
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Loaded only by commands that reach git, nodes or Kubernetes, or by `serve`. */
const EXTERNAL = [
  '@kubernetes/client-node',
  'isomorphic-git',
  'node-ssh',
  'chokidar',
  'pino',
  'prom-client',
];

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
  external: EXTERNAL.flatMap((p) => [p, `${p}/*`]),
  // Bundled CommonJS packages call require() for Node.js's own modules.
  banner: {
    js: "import { createRequire as __bpaRequire } from 'node:module'; const require = __bpaRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  logLevel: 'warning',
  minifyWhitespace: true,
  minifySyntax: true,
});
