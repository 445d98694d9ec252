import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { sourceFor } from '../../../src/reconcile/from-config.js';
import { SshGitSource } from '../../../src/source/ssh-git-source.js';
import { parseSshUrl } from '../../../src/source/ssh-url.js';
import { BpaError } from '../../../src/util/errors.js';
import { silentLogger } from '../../../src/util/log.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { cannotRunGitSshd, startGitSshd, type GitSshd } from '../../fakes/git-sshd.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { writeResourceSite } from '../../fakes/resource-site.js';
import { configWith } from '../../fakes/site.js';
import { readTree } from '../../fakes/tree.js';

async function rejection(p: Promise<unknown>): Promise<BpaError> {
  try {
    await p;
  } catch (err: unknown) {
    assert.ok(err instanceof BpaError, `a BpaError, not ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

describe('repository URLs over SSH', () => {
  it('ssh:// and scp-like forms, as git reads them', () => {
    assert.deepEqual(parseSshUrl('ssh://git@git.example:2222/org/site.git'), {
      user: 'git',
      host: 'git.example',
      port: 2222,
      path: '/org/site.git',
      knownHostsName: '[git.example]:2222',
    });
    assert.deepEqual(parseSshUrl('git@github.com:org/site.git'), {
      user: 'git',
      host: 'github.com',
      path: 'org/site.git',
      knownHostsName: 'github.com',
    });
    assert.equal(parseSshUrl('ssh://[::1]:22/x.git')?.host, '::1');
    for (const notSsh of ['https://git.example/site.git', './a:b', '/srv/site.git', 'http://h:1/x'])
      assert.equal(parseSshUrl(notSsh), undefined, notSsh);
  });

  it('an SSH repository needs a deploy key and known hosts: a clear error, nothing guessed', async () => {
    const cfg = configWith({ repoUrl: 'git@git.example:org/site.git', gitSshKey: '/k' })(undefined);
    const err = await rejection(sourceFor(cfg, {}, undefined));
    assert.equal(err.code, 'CONFIG_INVALID');
    assert.match(err.message, /--git-known-hosts/);
    const ok = await sourceFor(
      configWith({ repoUrl: 'git@git.example:org/site.git', gitSshKey: '/k', gitKnownHosts: '/h' })(
        undefined,
      ),
      {},
      undefined,
    );
    assert.ok(ok instanceof SshGitSource);
  });
});

/** The system git over ssh against a real sshd serving the repository through git-shell. */
describe('a site repository over SSH (real sshd, git-shell)', function () {
  this.timeout(120_000);
  let tmp: string;
  let git: GitServer;
  let sshd: GitSshd;
  let repo: string;
  let bare: string;

  before(async function () {
    const why = cannotRunGitSshd();
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
    tmp = await mkdtemp(join(tmpdir(), 'bpa-ssh-source-'));
    git = await startGitServer();
    sshd = await startGitSshd(tmp);
  });
  after(async () => {
    await sshd?.stop();
    await git?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });
  let state: string;
  beforeEach(async () => {
    repo = `site-${Math.random().toString(16).slice(2)}`;
    await writeResourceSite(join(tmp, repo), { workers: 0, jq: '1.6-2.1ubuntu3' });
    await git.createRepo(repo, { files: await readTree(join(tmp, repo), 'site') });
    bare = (await git.git(repo, ['rev-parse', '--absolute-git-dir'])).trim();
    state = await mkdtemp(join(tmp, 'state-'));
  });

  const source = (url: string, over: Partial<ConstructorParameters<typeof SshGitSource>[0]> = {}) =>
    new SshGitSource({
      url,
      ref: 'main',
      path: 'site',
      stateDir: state,
      access: { key: sshd.clientKey, knownHosts: sshd.knownHosts },
      ...over,
    });

  it('clones and fetches (ssh://): the revision is the branch head, the site checked out', async () => {
    const src = source(sshd.url(bare));
    const first = await src.sync();
    const [head] = await git.log(repo, 'main');
    assert.equal(first.revision, head?.sha);
    assert.match(await readFile(join(first.siteDir, 'cluster.yaml'), 'utf8'), /kind: Provisioning/);
    // A no-op poll: same revision, same digest.
    const again = await src.sync();
    assert.deepEqual(again, first);
    // A new commit inside the site: a new revision and digest; outside it: a new revision only.
    const sha = await git.commitAs(repo, { 'site/extra.yaml': '# nothing\n' }, 'add a file');
    const next = await src.sync();
    assert.equal(next.revision, sha);
    assert.notEqual(next.digest, first.digest);
    const out = await git.commitAs(repo, { 'README.md': 'hi\n' }, 'outside');
    const outside = await src.sync();
    assert.equal(outside.revision, out);
    assert.equal(outside.digest, next.digest);
  });

  it('the scp-like form (git@host:path) works the same', async function () {
    if (!sshd.scpHost) {
      console.log('      skipped: port 22 of a second loopback address could not be bound');
      this.skip();
    }
    const got = await source(sshd.scpUrl(bare)).sync();
    assert.equal(got.revision, (await git.log(repo, 'main'))[0]?.sha);
  });

  it('pushes status commits over SSH, and makes none when nothing changed', async () => {
    const src = source(sshd.url(bare));
    const { siteDir } = await src.sync();
    const files = new Map([['status/site.yaml', 'kind: SiteStatus\n']]);
    const commit = await src.publish(siteDir, files, 'bpa: status @ 1234567\n\nBpa-Source: x\n');
    assert.ok(commit);
    const [head] = await git.log(repo, 'main');
    assert.equal(head?.sha, commit);
    assert.equal(head?.author.name, 'bpa');
    assert.equal(await git.readFile(repo, 'main', 'site/status/site.yaml'), 'kind: SiteStatus\n');
    await src.sync();
    assert.equal(await src.publish(siteDir, files, 'again'), undefined);
    // Someone pushed meanwhile: the status commit goes on top of their commit, never over it.
    const theirs = await git.commitAs(repo, { 'site/other.yaml': '# x\n' }, 'theirs');
    const second = await src.publish(
      siteDir,
      new Map([['status/site.yaml', 'kind: SiteStatus\nx: 1\n']]),
      'bpa: two',
    );
    const log = await git.log(repo, 'main');
    assert.equal(log[0]?.sha, second);
    assert.deepEqual(log[0]?.parents, [theirs]);
  });

  it("removes a report that is not bpa's (null), and makes no commit for one already absent", async () => {
    const src = source(sshd.url(bare));
    const { siteDir } = await src.sync();
    const forged = 'kind: ClusterStatus\nmetadata: { name: west }\n';
    await git.commitAs(repo, { 'site/status/west.yaml': forged }, 'someone');
    await src.sync();
    assert.deepEqual(
      [...(await src.reportTexts(siteDir))].find(([p]) => p === 'status/west.yaml'),
      ['status/west.yaml', forged],
    );
    const commit = await src.publish(
      siteDir,
      new Map([['status/west.yaml', null]]),
      'bpa: status/ edited by someone else, restored',
    );
    assert.ok(commit);
    assert.equal(await git.readFile(repo, 'main', 'site/status/west.yaml'), undefined);
    await src.sync();
    assert.equal(await src.publish(siteDir, new Map([['status/west.yaml', null]]), 'm'), undefined);
  });

  it('a push that loses a race is re-created on the new head, keeping the other commit', async () => {
    const src = source(sshd.url(bare));
    const { siteDir } = await src.sync();
    // Once, while bpa's push is being received, someone else's commit lands on main first.
    const marker = join(tmp, `raced-${repo}`);
    const hook = join(bare, 'hooks', 'pre-receive');
    await writeFile(
      hook,
      `#!/bin/sh
[ -e ${marker} ] && exit 0
touch ${marker}
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
export GIT_AUTHOR_NAME=P GIT_AUTHOR_EMAIL=p@x GIT_COMMITTER_NAME=P GIT_COMMITTER_EMAIL=p@x
parent=$(git rev-parse refs/heads/main)
c=$(echo theirs | git commit-tree "$parent^{tree}" -p "$parent")
git update-ref refs/heads/main "$c" "$parent"
`,
      { mode: 0o755 },
    );
    const commit = await src.publish(
      siteDir,
      new Map([['status/site.yaml', 'kind: SiteStatus\n']]),
      'bpa: raced',
    );
    const log = await git.log(repo, 'main');
    assert.equal(log[0]?.sha, commit);
    assert.equal(log[1]?.subject, 'theirs', "the other commit is kept, under bpa's");
    assert.equal(await git.readFile(repo, 'main', 'site/status/site.yaml'), 'kind: SiteStatus\n');
  });

  it('a status branch: created as an orphan holding only the reports, read back from it', async () => {
    const src = source(sshd.url(bare), { statusBranch: 'bpa-status' });
    const { siteDir } = await src.sync();
    await src.publish(
      siteDir,
      new Map([['status/site.yaml', 'kind: SiteStatus\n']]),
      'bpa: status',
    );
    const log = await git.log(repo, 'bpa-status');
    assert.equal(log.length, 1);
    assert.deepEqual(log[0]?.parents, []);
    const reports = await src.previousReports(siteDir);
    assert.deepEqual([...reports.keys()], ['status/site.yaml']);
  });

  it('signatures are verified over SSH as over HTTP (--verify-signatures, allowed signers)', async () => {
    const signer = join(tmp, `signer-${repo}`);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ops', '-f', signer]);
    const [type, key] = readFileSync(`${signer}.pub`, 'utf8').trim().split(' ');
    const allowed = join(tmp, `allowed-${repo}`);
    await writeFile(allowed, `ops@example.org ${type} ${key}\n`);
    // A person's signed commit, pushed straight into the bare repository.
    const work = join(tmp, `work-${repo}`);
    const who = {
      GIT_AUTHOR_NAME: 'Ops',
      GIT_AUTHOR_EMAIL: 'ops@example.org',
      GIT_COMMITTER_NAME: 'Ops',
      GIT_COMMITTER_EMAIL: 'ops@example.org',
    };
    const run = (...args: string[]): string =>
      execFileSync('git', args, { cwd: work, env: { ...process.env, ...who } }).toString();
    execFileSync('git', ['clone', '-q', bare, work]);
    await writeFile(join(work, 'site', 'signed.yaml'), '# signed\n');
    run('add', '-A');
    run(
      '-c',
      'gpg.format=ssh',
      '-c',
      `user.signingkey=${signer}.pub`,
      'commit',
      '-q',
      '-S',
      '-m',
      'signed',
    );
    run('push', '-q', 'origin', 'HEAD:main');
    const src = source(sshd.url(bare), { trust: { allowedSigners: allowed } });
    const signed = await src.sync();
    assert.equal(await src.signed(signed.revision), true);
    await src.verify(signed.revision);
    const unsigned = await git.commitAs(repo, { 'site/unsigned.yaml': '# no\n' }, 'unsigned');
    await src.sync();
    const err = await rejection(src.verify(unsigned));
    assert.equal(err.retry, 'stalled');
    // Approval trailers are read the same way: a commit of status/ only passes to the one below.
    const approving = await git.commitAs(
      repo,
      {},
      'approve\n\nBpa-Approved-Plan: ' + 'a'.repeat(64) + '\n',
    );
    const status = await git.commitAs(
      repo,
      { 'site/status/site.yaml': 'kind: SiteStatus\n' },
      'bpa: status',
    );
    await src.sync();
    const found = await src.inputCommit(status);
    assert.equal(found?.commit, approving);
    assert.match(found?.message ?? '', /^Bpa-Approved-Plan: a{64}$/m);
  });

  it('a full reconcile over SSH commits its reports (status/inventory.yaml included)', async () => {
    const nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3'], curl: ['7.88.1-10'] });
    const summary = await new Reconciler({
      source: source(sshd.url(bare)),
      configFor: configWith({ stateDir: state }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports: fakePorts(nodes),
    }).reconcile('startup');
    assert.equal(summary.result, 'applied', JSON.stringify(summary.error));
    const [head] = await git.log(repo, 'main');
    assert.match(head?.message ?? '', /^bpa: east provision-cluster\+install-packages @ /);
    assert.ok(await git.readFile(repo, 'main', 'site/status/inventory.yaml'));
  });

  it('refuses an unknown host key and a changed one, never accepting either', async () => {
    const empty = join(tmp, 'empty_known_hosts');
    await writeFile(empty, '');
    let err = await rejection(
      source(sshd.url(bare), { access: { key: sshd.clientKey, knownHosts: empty } }).sync(),
    );
    assert.equal(err.code, 'GIT_HOST_KEY');
    assert.equal(err.retry, 'stalled');
    assert.equal(await readFile(empty, 'utf8'), '', 'nothing was added to known_hosts');

    const src = source(sshd.url(bare));
    await src.sync();
    const before = await readFile(sshd.knownHosts, 'utf8');
    await sshd.changeHostKey();
    err = await rejection(src.sync());
    assert.equal(err.code, 'GIT_HOST_KEY');
    assert.match(err.message, /not the one in/);
    assert.equal(await readFile(sshd.knownHosts, 'utf8'), before);
    // And the status push is refused the same way.
    err = await rejection(
      src.publish(join(tmp, 'nowhere'), new Map([['status/a.yaml', 'a\n']]), 'm'),
    );
    assert.equal(err.code, 'GIT_HOST_KEY');
  });

  it('refuses a wrong deploy key (GIT_AUTH) and an unprotected one (GIT_SSH_KEY)', async () => {
    // The host key changed in the test before: a known_hosts for the current one.
    const pub = (await readFile(join(tmp, 'ssh_host_ed25519_key.pub'), 'utf8'))
      .trim()
      .split(/\s+/)
      .slice(0, 2)
      .join(' ');
    const known = join(tmp, 'known_hosts_now');
    await writeFile(known, `[${sshd.host}]:${sshd.port} ${pub}\n`);
    let err = await rejection(
      source(sshd.url(bare), { access: { key: sshd.otherKey, knownHosts: known } }).sync(),
    );
    assert.equal(err.code, 'GIT_AUTH');
    const open = join(tmp, 'open_key');
    await writeFile(open, await readFile(sshd.clientKey, 'utf8'), { mode: 0o644 });
    err = await rejection(
      source(sshd.url(bare), { access: { key: open, knownHosts: known } }).sync(),
    );
    assert.equal(err.code, 'GIT_SSH_KEY');
    assert.match(err.message, /chmod 600/);
    const good = await source(sshd.url(bare), {
      access: { key: sshd.clientKey, knownHosts: known },
    }).sync();
    assert.match(good.revision, /^[0-9a-f]{40}$/);
  });
});
