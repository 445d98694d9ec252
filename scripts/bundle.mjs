// Bundles the compiled CLI (dist/cli/main.js and the modules it imports) into dist/bundle/,
// which bin/bpa runs: one file to load instead of a hundred, a tenth of `bpa validate`'s time
// on a large site. Modules the CLI imports lazily (serve, apply, the Kubernetes and SSH
// layers) become chunks of their own, loaded as before only by the commands that need them.
// Small packages every command uses (the YAML reader, the argument parser, the schema
// runtime) are bundled too, which spares each start ~20 ms of module resolution; the large
// ones only some commands load stay in node_modules (EXTERNAL). Source maps chain to src/ through tsc's, for stack traces
// and coverage. Run by `npm run build` after tsc. Whitespace and syntax are minified (names
// are kept, for profiles and stack traces): less for V8 to parse at every start.
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Loaded only by commands that reach git, nodes or Kubernetes, or by `serve`. */
const EXTERNAL = ['isomorphic-git', 'node-ssh', 'chokidar', 'pino', 'prom-client'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// The Kubernetes client is bundled (into the chunks of the commands that use it, loaded as
// lazily as before) for its tree-shaking: its generated API is two modules of 6 MiB each
// holding every API group, whose source V8 keeps while the module is loaded. bpa uses a few
// of them: the bundle holds those, −17 MiB of heap for `bpa serve`, a third of the load time.
// Its own dependencies stay in node_modules.
const kubeDeps = Object.keys(
  JSON.parse(
    await readFile(
      join(root, 'node_modules', '@kubernetes', 'client-node', 'package.json'),
      'utf8',
    ),
  ).dependencies ?? {},
);
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
  external: [...EXTERNAL, ...kubeDeps].flatMap((p) => [p, `${p}/*`]),
  // Bundled CommonJS packages call require() for Node.js's own modules.
  banner: {
    js: "import { createRequire as __bpaRequire } from 'node:module'; const require = __bpaRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  logLevel: 'warning',
  minifyWhitespace: true,
  minifySyntax: true,
});
