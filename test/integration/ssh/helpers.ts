import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import type { SshTarget } from '../../../src/ssh/index.js';
import { BpaError } from '../../../src/util/errors.js';
import type { LabHost } from '../../lab/lab.js';

export function targetOf(host: LabHost, user = 'root'): SshTarget {
  return { node: host.name, address: host.ip, port: host.port, user };
}

/** Awaits a promise that must reject with a BpaError, and returns that error. */
export async function rejection(promise: Promise<unknown>): Promise<BpaError> {
  try {
    await promise;
  } catch (err: unknown) {
    assert.ok(err instanceof BpaError, `expected a BpaError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

/** PIDs of live processes whose argv is exactly `argv` (read from /proc; the lab shares our PID namespace). */
export function pidsRunning(argv: string[]): number[] {
  const wanted = `${argv.join('\0')}\0`;
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1') !== wanted) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z') pids.push(Number(name));
    } catch {
      // Ended while we looked.
    }
  }
  return pids;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Nasty arguments: each must reach the remote command as exactly these bytes. */
export const NASTY_ARGS: readonly string[] = [
  "a'b;$(id)",
  '`x`',
  '$(touch /tmp/bpa-injected)',
  'line1\nline2\n',
  '',
  '  lead and trail  ',
  '*',
  '~',
  '~root',
  '$HOME',
  '${HOME}',
  'a\\b\\',
  'ünïcødé ✓ 日本語 🚀',
  '-n',
  '--',
  '#not a comment',
  '{a,b}',
  '!!',
  '\t tab',
  'x=y',
  "'",
  "''",
  '"',
  '&& echo pwned',
  '; echo pwned',
  '| cat /etc/shadow',
  '> /tmp/bpa-redirected',
  '< /etc/passwd',
  '(sub)',
  '\r\n',
  '%s %d %%',
];
