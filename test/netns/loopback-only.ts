/**
 * Tests and benchmarks that reconcile, apply or serve a site without lab hosts run in a network
 * namespace that has nothing but `lo`: whatever addresses such a site names (the example's
 * 192.0.2.x, an inventory copied from elsewhere), bpa's SSH, installers and HTTP can reach only
 * the servers the test itself started on 127.0.0.1. A bug that makes bpa act on such a site
 * then fails with "Network is unreachable" instead of sending traffic to someone's host.
 *
 * - A test file opts in with `requireLoopbackOnly()` inside its top-level describe; `npm test`
 *   (test/run-tests.ts) runs those files in a second mocha process under `unshare -n`.
 * - Run alone outside such a namespace, their tests are skipped with the reason printed.
 * - A script (a benchmark) calls `ensureLoopbackOnly()` first: it re-runs itself in a new
 *   namespace, or refuses with the reason.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export type Check = { ok: true } | { ok: false; reason: string };

/** The interfaces of this process's network namespace (/proc/net follows the namespace). */
export function interfaces(): string[] {
  const text = readFileSync('/proc/self/net/dev', 'utf8');
  return text
    .split('\n')
    .slice(2)
    .map((l) => l.split(':')[0]?.trim() ?? '')
    .filter(Boolean);
}

/** Whether this process runs in a network namespace with `lo` alone. */
export function loopbackOnly(): Check {
  const names = interfaces();
  if (names.length === 1 && names[0] === 'lo') return { ok: true };
  return {
    ok: false,
    reason: `this network namespace has ${names.length} interfaces (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}), not lo alone; npm test runs it in one, or \`npx tsx test/run-tests.ts FILE\``,
  };
}

/** Inside a describe: its tests run only in a loopback-only namespace, else skip saying why. */
export function requireLoopbackOnly(): void {
  before(function () {
    const check = loopbackOnly();
    if (!check.ok) {
      console.log(
        `    skipped (sends traffic only in a loopback-only network namespace): ${check.reason}`,
      );
      this.skip();
    }
  });
}

/**
 * How to start a command in a new loopback-only namespace here: as root `unshare --net`; else
 * `unshare --user --map-root-user --net` where user namespaces are allowed. Undefined (with the
 * reason) when neither works.
 */
export function unsharePrefix(): { prefix: string[] } | { reason: string } {
  const candidates =
    process.getuid?.() === 0
      ? [['--net'], ['--user', '--map-root-user', '--net']]
      : [['--user', '--map-root-user', '--net']];
  let why = '';
  for (const flags of candidates) {
    const probe = spawnSync('unshare', [...flags, '--', 'ip', 'link', 'set', 'lo', 'up'], {
      encoding: 'utf8',
    });
    if (probe.status === 0) return { prefix: ['unshare', ...flags, '--'] };
    why = (probe.error?.message ?? probe.stderr ?? '').trim() || `exit ${String(probe.status)}`;
  }
  return {
    reason: `cannot create a network namespace (unshare: ${why}); needs root or user namespaces`,
  };
}

/** argv that runs `argv` in a new namespace with `lo` up, or the reason it cannot. */
export function isolatedArgv(argv: string[]): { argv: string[] } | { reason: string } {
  const how = unsharePrefix();
  if ('reason' in how) return how;
  return {
    argv: [...how.prefix, 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...argv],
  };
}

/**
 * For scripts: returns when this process already runs loopback-only; otherwise runs the same
 * command again in a new namespace and exits with its status, or exits 1 saying why not.
 */
export async function ensureLoopbackOnly(): Promise<void> {
  if (loopbackOnly().ok) return;
  const how = isolatedArgv([process.execPath, ...process.execArgv, ...process.argv.slice(1)]);
  if ('reason' in how) {
    console.error(`refusing to run outside a loopback-only network namespace: ${how.reason}`);
    process.exit(1);
  }
  const [cmd = 'unshare', ...args] = how.argv;
  const child = spawn(cmd, args, { stdio: 'inherit' });
  const code = await new Promise<number>((resolve) =>
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
  );
  process.exit(code);
}
