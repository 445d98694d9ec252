import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BPA = join(ROOT, 'bin', 'bpa');
const EXAMPLE = join(ROOT, 'sites', 'example');

interface Outcome {
  code: number | null;
  stderr: string;
}

/**
 * Runs bpa with its standard output going to `stdout`: 'closed' is a pipe whose reading end
 * is closed before bpa writes (`bpa plan | head` once head has what it wants).
 */
async function run(args: string[], stdout: 'closed' | number): Promise<Outcome> {
  const child = spawn(BPA, args, {
    cwd: ROOT,
    stdio: ['ignore', stdout === 'closed' ? 'pipe' : stdout, 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: '/nonexistent' },
  });
  if (stdout === 'closed') child.stdout?.destroy();
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stderr };
}

describe('standard output that goes away or fails', function () {
  this.timeout(30_000);

  it('bpa plan -o json into a closed pipe: the exit code of the plan, no stack trace', async () => {
    const r = await run(['plan', EXAMPLE, '-o', 'json'], 'closed');
    assert.equal(r.code, 2, r.stderr); // the example site has changes to make
    assert.equal(r.stderr, '');
  });

  it('bpa validate into a closed pipe: exit 0, nothing on stderr', async () => {
    const r = await run(['validate', EXAMPLE], 'closed');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  it('a full disk (/dev/full): one line naming the failure, exit 1', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const full = await open('/dev/full', 'w');
    const out = await mkdtemp(join(tmpdir(), 'bpa-closed-output-'));
    try {
      // With --out the command goes on writing files after its output failed: still exit 1.
      for (const extra of [[], ['--out', out]]) {
        const r = await run(['plan', EXAMPLE, '-o', 'json', ...extra], full.fd);
        assert.equal(r.code, 1, extra.join(' '));
        assert.equal(r.stderr, 'bpa: cannot write to standard output: ENOSPC\n');
      }
    } finally {
      await full.close();
      await rm(out, { recursive: true, force: true });
    }
  });
});
