import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { readTree } from '../../fakes/tree.js';
import { bpa } from '../apply/harness.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';

const EXAMPLE = fileURLToPath(new URL('../../../sites/example', import.meta.url));

/** --verify-signatures end to end: an unsigned revision is rejected and reported, nothing applied. */
describe('reconcile --once --repo --verify-signatures', function () {
  this.timeout(60_000);
  // Reconciles the example site: its hosts' addresses must be unreachable.
  requireLoopbackOnly();
  let git: GitServer;
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-signatures-'));
    git = await startGitServer();
    await git.createRepo('site', { files: await readTree(EXAMPLE, 'site') });
    await writeFile(join(tmp, 'allowed_signers'), '');
  });
  after(async () => {
    await git?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('rejects an unsigned commit, reports it once in status/site.yaml, and applies nothing', async () => {
    const args = [
      'reconcile',
      '--once',
      '--repo',
      git.repoUrl('site'),
      '--path',
      'site',
      '--state',
      join(tmp, 'state'),
      '--verify-signatures',
      '--allowed-signers',
      join(tmp, 'allowed_signers'),
    ];
    const head = (await git.log('site', 'main'))[0]?.sha ?? '';
    const r = await bpa(args);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^rejected [0-9a-f]{12}: COMMIT_UNSIGNED: /m);
    const site = (await git.readFile('site', 'main', 'site/status/site.yaml')) ?? '';
    assert.match(site, /phase: Rejected/);
    assert.match(site, /code: COMMIT_UNSIGNED/);
    assert.match(site, new RegExp(`revision: ${head}`));
    assert.deepEqual(
      await readdir(join(tmp, 'state', 'clusters')).catch(() => []),
      [],
      'nothing applied',
    );
    const again = await bpa(args);
    assert.match(again.stdout, /^skipped /m, 'reported once');
  });
});
