/**
 * The test run of `npm test`: mocha over every test file, then the files that reconcile, apply
 * or serve a site without lab hosts (those calling `requireLoopbackOnly()`) in a second mocha
 * inside a new network namespace holding only `lo` (test/netns/loopback-only.ts). Where no
 * namespace can be made, that second run happens outside one and its tests skip, saying why.
 *
 *   npx tsx test/run-tests.ts [FILE|DIR...]    (default: test/unit test/integration)
 *
 * Exits non-zero when either run fails.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isolatedArgv } from './netns/loopback-only.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MOCHA = join(ROOT, 'node_modules', '.bin', 'mocha');
const MARKER = 'requireLoopbackOnly()';

function testFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) =>
      e.isDirectory()
        ? testFiles(join(path, e.name))
        : e.name.endsWith('.test.ts')
          ? [join(path, e.name)]
          : [],
    );
}

function run(argv: string[]): Promise<number> {
  const [cmd = MOCHA, ...args] = argv;
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd: ROOT });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const given = process.argv.slice(2);
const files = (given.length ? given : ['test/unit', 'test/integration']).flatMap(testFiles);
const isolated = files.filter((f) => readFileSync(f, 'utf8').includes(MARKER));
const plain = files.filter((f) => !isolated.includes(f));

/**
 * The reference installer's marker directory: lab hosts must write it into their own /etc
 * overlay. Found in this machine's /etc after the run, a test ran the installer on hosts that
 * share the machine's /etc, and every later lab test would see its markers.
 */
const MACHINE_MARKERS = '/etc/bpa-reference';
const markersBefore = existsSync(MACHINE_MARKERS);

let failed = false;
if (plain.length) failed = (await run([MOCHA, ...plain])) !== 0 || failed;
if (isolated.length) {
  const how = isolatedArgv([MOCHA, ...isolated]);
  if ('reason' in how) console.log(`\nNot isolated (${how.reason}): these tests skip.`);
  else console.log(`\nIn a loopback-only network namespace: ${isolated.join(' ')}`);
  failed = (await run('reason' in how ? [MOCHA, ...isolated] : how.argv)) !== 0 || failed;
}
if (!markersBefore && existsSync(MACHINE_MARKERS)) {
  console.log(
    `\n${MACHINE_MARKERS} appeared on this machine during the run: a test ran the reference installer on lab hosts without their own /etc (startLab({ isolatedPackages: true })).`,
  );
  failed = true;
}
process.exit(failed ? 1 : 0);
