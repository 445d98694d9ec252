/**
 * Peak memory of bpa against inputs far larger than a site, each as a whole process:
 *   (a) `bpa serve --repo` (its first reconcile) and `bpa reconcile --once --repo` on a site
 *       repository served by the test git server (real git http-backend), with a 160 MB random
 *       blob outside the site path, inside it (not YAML), as a 160 MB YAML file inside it, and
 *       without one; native `git clone --depth 1` of the same repository for reference;
 *   (b) `bpa plan` with a 166 MB dnsmasq lease file, and with one just under the 32 MiB limit.
 * Peak RSS: /usr/bin/time (%M) for commands that exit, VmHWM of /proc/<pid>/status for serve.
 * Run after `npm run build` (it runs bin/bpa): npx tsx bench/memory.ts [--only ab]
 * The site has no clusters, so nothing is applied; the bench runs itself in a network namespace
 * holding only lo all the same (test/netns/loopback-only.ts), so nothing could leave it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startGitServer, type GitServer } from '../test/fakes/git-server.js';
import { BPA, spawnBpa, waitFor } from '../test/integration/apply/harness.js';
import { ensureLoopbackOnly } from '../test/netns/loopback-only.js';
import { fmt, measure, type Measured } from './measure.js';

const BLOB_BYTES = 160_000_000;
const LEASE_BYTES = 166_000_000;
const LIMIT_LEASE_BYTES = 32 * 1024 * 1024 - 1024;
const run = promisify(execFile);
const only = process.argv.includes('--only')
  ? (process.argv[process.argv.indexOf('--only') + 1] ?? 'ab')
  : 'ab';

const SITE: Record<string, string> = {
  'site.yaml':
    'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: mem\nspec: {}\n',
  'inventory/hosts.yaml': Array.from(
    { length: 20 },
    (_, i) =>
      `apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: node-${i}\n  namespace: mem\nspec:\n  online: true\n  bootMACAddress: "52:54:00:00:01:${i.toString(16).padStart(2, '0')}"\n`,
  ).join('---\n'),
};

/** Writes `bytes` of random data (as base64 text when `text`) a megabyte at a time. */
async function bigFile(path: string, bytes: number, text: boolean): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const out = createWriteStream(path);
  if (text) out.write('# a very large YAML file: one comment\n');
  for (let left = bytes; left > 0; left -= 1 << 20) {
    const n = Math.min(left, 1 << 20);
    const chunk = text
      ? `# ${randomBytes((n * 3) / 4)
          .toString('base64')
          .slice(0, n - 3)}\n`
      : randomBytes(n);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

/** A bare repository on the server: the site under sites/mem, plus `big` if given. */
async function makeRepo(
  server: GitServer,
  name: string,
  big: { path: string; text: boolean } | undefined,
): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'bpa-bench-mem-'));
  try {
    const git = (args: string[]): Promise<unknown> =>
      run('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.org', ...args], {
        cwd: work,
        maxBuffer: 1 << 24,
      });
    await git(['init', '-q', '-b', 'main', '.']);
    for (const [path, text] of Object.entries(SITE)) {
      await mkdir(dirname(join(work, 'sites/mem', path)), { recursive: true });
      await writeFile(join(work, 'sites/mem', path), text);
    }
    await writeFile(join(work, 'README.md'), '# bench\n');
    if (big) await bigFile(join(work, big.path), BLOB_BYTES, big.text);
    await git(['add', '-A']);
    await git(['commit', '-q', '-m', 'site']);
    const bare = join(server.root, `${name}.git`);
    await run('git', ['clone', '-q', '--bare', work, bare]);
    await run('git', ['-C', bare, 'config', 'http.receivepack', 'true']);
    return server.repoUrl(name);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** `bpa serve` until its first reconcile ends; its peak RSS (VmHWM) then. */
async function servePeak(url: string, state: string): Promise<{ peakMiB: number; result: string }> {
  const child = spawnBpa([
    'serve',
    '--repo',
    url,
    '--path',
    'sites/mem',
    '--state',
    state,
    '--interval',
    '1h',
    '--listen',
    '127.0.0.1:0',
  ]);
  let log = '';
  child.stderr?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-200_000)));
  child.stdout?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-200_000)));
  try {
    const result = await waitFor(
      'the first reconcile',
      async () => /"msg":"reconcile (?!started|finished)(\w+)/.exec(log)?.[1],
      300_000,
      100,
    );
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const kb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN);
    return { peakMiB: kb / 1024, result };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

async function git(server: GitServer): Promise<void> {
  console.log('(a) a site repository with a 160 MB file; site path sites/mem (2 small files)');
  const cases: Array<[string, { path: string; text: boolean } | undefined]> = [
    ['no large file', undefined],
    [
      '160 MB random blob outside the site path (assets/big.bin)',
      { path: 'assets/big.bin', text: false },
    ],
    [
      '160 MB random blob inside the site path (sites/mem/big.bin)',
      { path: 'sites/mem/big.bin', text: false },
    ],
    [
      '160 MB YAML file inside the site path (sites/mem/big.yaml)',
      { path: 'sites/mem/big.yaml', text: true },
    ],
  ];
  let n = 0;
  for (const [label, big] of cases) {
    const url = await makeRepo(server, `mem${n++}`, big);
    const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-mem-state-'));
    try {
      // serve first: it meets the repository as its author left it (reconcile --once then
      // meets serve's status commit, and syncs the same snapshot from an empty state).
      const serve = await servePeak(url, join(tmp, 'serve'));
      const once: Measured = await measure('node', [
        BPA,
        'reconcile',
        '--once',
        '--repo',
        url,
        '--path',
        'sites/mem',
        '--state',
        join(tmp, 'once'),
      ]);
      const native = await measure('git', [
        'clone',
        '-q',
        '--depth',
        '1',
        url,
        join(tmp, 'native'),
      ]);
      console.log(`  ${label}`);
      console.log(
        `    bpa serve, first reconcile (${serve.result}): peak ${serve.peakMiB.toFixed(0)} MiB`,
      );
      console.log(`    bpa reconcile --once: ${fmt(once)} (exit ${once.code})`);
      console.log(`    git clone --depth 1: ${fmt(native)}`);
      if (once.code !== 0) {
        const lines = once.stdout.split('\n').filter((l) => /FILE_TOO_LARGE|REJECTED/.test(l));
        for (const l of lines.slice(0, 3)) console.log(`    reported: ${l.trim().slice(0, 160)}`);
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

async function leases(): Promise<void> {
  console.log('(b) bpa plan with a large dnsmasq lease file (one distinct MAC per line)');
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-leases-'));
  try {
    const site = join(tmp, 'site');
    for (const [path, text] of Object.entries(SITE)) {
      await mkdir(dirname(join(site, path)), { recursive: true });
      await writeFile(join(site, path), text);
    }
    for (const [label, bytes] of [
      ['166 MB', LEASE_BYTES],
      ['just under 32 MiB', LIMIT_LEASE_BYTES],
    ] as const) {
      const file = join(tmp, 'dnsmasq.leases');
      await leaseFile(file, bytes);
      const m = await measure('node', [BPA, 'plan', site, '--leases', file, '-o', 'json']);
      console.log(`  ${label}: bpa plan ${fmt(m)} (exit ${m.code})`);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function leaseFile(path: string, bytes: number): Promise<void> {
  const end = Math.floor(Date.now() / 1000) + 36_000;
  const out = createWriteStream(path);
  let size = 0;
  let lines: string[] = [];
  for (let i = 0; ; i++) {
    const mac = ['52', '54', '00', (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff]
      .map((x) => (typeof x === 'number' ? x.toString(16).padStart(2, '0') : x))
      .join(':');
    const line = `${end} ${mac} 10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff} node-${i} 01:${mac}\n`;
    if (size + line.length > bytes) break;
    size += line.length;
    lines.push(line);
    if (lines.length === 10_000) {
      if (!out.write(lines.join(''))) await new Promise<void>((r) => out.once('drain', () => r()));
      lines = [];
    }
  }
  out.write(lines.join(''));
  await new Promise<void>((resolve) => out.end(resolve));
}

await ensureLoopbackOnly();
if (only.includes('a')) {
  const server = await startGitServer();
  try {
    await git(server);
  } finally {
    await server.stop();
  }
}
if (only.includes('b')) await leases();
