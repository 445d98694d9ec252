import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BpaError } from '../../../src/util/errors.js';
import { inputDigest, syncRepo } from '../../../src/source/git.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';

describe('inputDigest: the site tree without status/', function () {
  this.timeout(60_000);
  let server: GitServer;
  let tmp: string;
  let url: string;
  let dir: string;

  /** Syncs to the branch head and digests the site there. */
  async function digestAtHead(sitePath = 'sites/edge'): Promise<string> {
    const { revision } = await syncRepo({ url, ref: 'main', dir });
    return inputDigest(dir, revision.commit, sitePath);
  }

  before(async () => {
    server = await startGitServer();
    tmp = await mkdtemp(join(tmpdir(), 'bpa-digest-'));
    dir = join(tmp, 'wc');
    url = await server.createRepo('site', {
      files: {
        'sites/edge/site.yaml': 'kind: Site\n',
        'sites/edge/clusters/east.yaml': 'kind: Cluster\nname: east\n',
        'sites/edge/status/site.yaml': 'phase: Ready\n',
        'sites/other/site.yaml': 'kind: Site\n',
        'README.md': 'readme\n',
      },
    });
  });
  after(async () => {
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('is unchanged by commits that touch only status/ or paths outside the site', async () => {
    const d0 = await digestAtHead();
    assert.match(d0, /^[0-9a-f]{64}$/);
    await server.commitAs(
      'site',
      {
        'sites/edge/status/site.yaml': 'phase: Provisioning\n',
        'sites/edge/status/east.yaml': 'x: 1\n',
      },
      'bpa: status',
    );
    assert.equal(await digestAtHead(), d0, 'status-only commit');
    await server.commitAs(
      'site',
      { 'sites/other/site.yaml': 'kind: Site\nname: other\n', 'README.md': 'new\n' },
      'elsewhere',
    );
    assert.equal(await digestAtHead(), d0, 'commit outside the site path');
    await server.commitAs('site', { 'sites/edge/status/east.yaml': null }, 'drop a report');
    assert.equal(await digestAtHead(), d0, 'status deletion');
  });

  it('changes with any edit inside the site, and returns when the edit is reverted', async () => {
    const before = await digestAtHead();
    await server.commitAs(
      'site',
      { 'sites/edge/clusters/east.yaml': 'kind: Cluster\nname: east\nx: 1\n' },
      'edit nested',
    );
    const edited = await digestAtHead();
    assert.notEqual(edited, before);
    await server.commitAs('site', { 'sites/edge/clusters/west.yaml': 'kind: Cluster\n' }, 'add');
    const added = await digestAtHead();
    assert.notEqual(added, edited);
    await server.commitAs(
      'site',
      {
        'sites/edge/clusters/west.yaml': null,
        'sites/edge/clusters/east.yaml': 'kind: Cluster\nname: east\n',
      },
      'revert',
    );
    assert.equal(await digestAtHead(), before, 'same content, same digest, whatever the commit');
    // a file named like the status dir deeper down is input like any other
    await server.commitAs(
      'site',
      { 'sites/edge/clusters/status/x.yaml': 'a: 1\n' },
      'nested status dir',
    );
    assert.notEqual(await digestAtHead(), before);
  });

  it('accepts ./path/ spellings and the repository root; a missing path is GIT_PATH_NOT_FOUND', async () => {
    assert.equal(await digestAtHead('./sites/edge/'), await digestAtHead('sites/edge'));
    assert.match(await digestAtHead('.'), /^[0-9a-f]{64}$/);
    assert.notEqual(await digestAtHead('.'), await digestAtHead('sites/edge'));
    await assert.rejects(
      digestAtHead('sites/none'),
      (err: unknown) => err instanceof BpaError && err.code === 'GIT_PATH_NOT_FOUND',
    );
    await assert.rejects(
      digestAtHead('README.md'),
      (err: unknown) => err instanceof BpaError && err.code === 'GIT_PATH_NOT_FOUND',
    );
  });
});
