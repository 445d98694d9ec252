/**
 * The entry of the CLI's start-up snapshot (built by scripts/bundle.mjs, used by bin/bpa for
 * `bpa validate`, `bpa plan` and `bpa diff`). Node.js runs this file once, at build time, with
 * every module of the CLI loaded and compiled, and writes its heap to dist/snapshot/bpa.blob;
 * `node --snapshot-blob bpa.blob bin/bpa ARGS…` then starts from that heap and calls the
 * function below, instead of loading and compiling the CLI again (docs/PERFORMANCE.md).
 *
 * Nothing the snapshot keeps may depend on where or when it was built: the bundle reads
 * `import.meta.url` and loads the packages it does not hold through `__bpaSnapshotRuntime`,
 * which is set here, at start, from where bin/bpa is.
 */
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startupSnapshot } from 'node:v8';
import { main } from './main.js';

/** What the snapshot's bundle asks of the installation it runs from (scripts/bundle.mjs). */
export interface SnapshotRuntime {
  /** Stands for `import.meta.url` of the CLI's modules: dist/cli/main.js. */
  url: string;
  /** Loads the packages the snapshot does not hold, from the installation's node_modules. */
  require: NodeJS.Require;
}

declare global {
  var __bpaSnapshotRuntime: SnapshotRuntime | undefined;
}

startupSnapshot.setDeserializeMainFunction(() => {
  // argv[1] is bin/bpa as it was run, perhaps through a link (node_modules/.bin/bpa).
  const root = dirname(dirname(realpathSync(process.argv[1] ?? '.')));
  const mainModule = join(root, 'dist', 'cli', 'main.js');
  globalThis.__bpaSnapshotRuntime = {
    url: pathToFileURL(mainModule).href,
    require: createRequire(mainModule),
  };
  // As the bundle's launcher ends when its top-level await never settles (a bug): not 0.
  process.exitCode = 13;
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
});
