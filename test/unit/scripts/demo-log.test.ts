import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoLog } from '../../../scripts/demo-log.js';

describe('the demo shows status commits with one "bpa:"', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-demo-log-'));
    const git = (args: string[], env: Record<string, string> = {}): void => {
      execFileSync('git', ['-C', dir, ...args], { env: { ...process.env, ...env } });
    };
    git(['init', '-q']);
    const as = (name: string, email: string): Record<string, string> => ({
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
    });
    git(
      ['commit', '-q', '--allow-empty', '-m', 'cluster-east: add worker-3'],
      as('A Person', 'p@example.org'),
    );
    git(
      [
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'bpa: cluster-east add-nodes @ 1234567\n\nBpa-Source: 1234567890\nBpa-Plan: abc\n',
      ],
      as('bpa', 'bpa@bpa.akraino.org'),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints each subject once, without the author in front of it', async () => {
    const out = await demoLog(dir);
    assert.doesNotMatch(out, /bpa: bpa:/);
    assert.match(out, /^[0-9a-f]{7,} bpa: cluster-east add-nodes @ 1234567 {2}\(bpa\)$/m);
    assert.match(out, /^[0-9a-f]{7,} cluster-east: add worker-3 {2}\(A Person\)$/m);
    assert.match(out, /^ {8}Bpa-Source: 1234567890$/m);
  });
});
