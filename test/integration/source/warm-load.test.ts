import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS, SiteCache, loadSite } from '../../../src/load/index.js';
import { GitSource } from '../../../src/source/git-source.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

const host = (i: number): string =>
  [
    'apiVersion: metal3.io/v1alpha1',
    'kind: BareMetalHost',
    'metadata:',
    `  name: host-${i}`,
    'spec:',
    `  bootMACAddress: "52:54:00:00:00:${i.toString(16).padStart(2, '0')}"`,
    '',
  ].join('\n');

/**
 * A revision of a repository source that changes one file: with the blob ids of the checkout,
 * the load reads and parses that file only, and gives what a cold load of the same files gives.
 */
describe('git source: a new revision is loaded reading only the files it changed', function () {
  this.timeout(60_000);
  let git: GitServer;
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-warm-git-'));
    git = await startGitServer();
  });
  after(async () => {
    await git?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('reads one file of twenty after a one-file commit', async () => {
    const files: Record<string, string> = { 'README.md': 'not the site\n' };
    for (let i = 0; i < 20; i++) files[`site/hosts/host-${i}.yaml`] = host(i);
    const url = await git.createRepo('warm', { files });
    const source = new GitSource({ url, ref: 'main', path: 'site', stateDir: join(tmp, 'state') });
    const cache = new SiteCache();
    const load = async () => {
      const { siteDir } = await source.sync();
      const warm = await loadSite(siteDir, DEFAULT_LIMITS, cache, await source.checkedOut());
      const cold = await loadSite(siteDir);
      assert.deepEqual(
        [warm.files, warm.documents, warm.problems],
        [cold.files, cold.documents, cold.problems],
      );
      return warm;
    };
    await load();
    assert.deepEqual(cache.counts, { read: 20, reused: 0, parsed: 20 });

    await git.commitAs(
      'warm',
      { 'site/hosts/host-3.yaml': host(3).replace('host-3', 'host-3b') },
      'rename',
    );
    const second = await load();
    assert.deepEqual(cache.counts, { read: 1, reused: 19, parsed: 1 });
    assert.ok(second.documents.some((d) => JSON.stringify(d.value).includes('host-3b')));

    // A file removed and one added: the removed one is forgotten.
    await git.commitAs(
      'warm',
      { 'site/hosts/host-4.yaml': null, 'site/hosts/new.yaml': 'kind: [\n' },
      'remove, add a broken one',
    );
    const third = await load();
    assert.deepEqual(cache.counts, { read: 1, reused: 19, parsed: 1 });
    assert.equal(cache.size, 20);
    assert.ok(third.problems.some((p) => p.code === 'YAML_SYNTAX' && p.file === 'hosts/new.yaml'));
  });
});
