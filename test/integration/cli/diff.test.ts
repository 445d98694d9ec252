import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '../../../src/cli/io.js';
import { main } from '../../../src/cli/main.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { writeResourceSite } from '../../fakes/resource-site.js';
import { FakeSiteSource } from '../../fakes/site-source.js';
import { configWith } from '../../fakes/site.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');

async function bpa(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(
    args,
    { out: (s) => void (out += s), err: (s) => void (err += s), exit: () => undefined },
    {},
    () => NOW,
  );
  return { code, out, err };
}

/**
 * bpa diff over a real git repository: the base branch with the status/ a reconcile wrote
 * (in-memory nodes), a feature branch that adds a worker and bumps a package.
 */
describe('bpa diff BASE HEAD', function () {
  this.timeout(60_000);
  let tmp: string;
  let repo: string;
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', repo, ...args], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'P',
        GIT_AUTHOR_EMAIL: 'p@x',
        GIT_COMMITTER_NAME: 'P',
        GIT_COMMITTER_EMAIL: 'p@x',
      },
    }).toString();

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-diff-'));
    repo = join(tmp, 'repo');
    const site = join(repo, 'sites', 'edge');
    await writeResourceSite(site, { workers: 0, jq: '1.6-2.1ubuntu3' });
    // The controller reconciled the base: its reports are in the base branch.
    const source = new FakeSiteSource(site);
    const r = await new Reconciler({
      source,
      configFor: configWith({ stateDir: join(tmp, 'state') }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: 3_600_000,
      ports: fakePorts(new FakeNodes({ jq: ['1.6-2.1ubuntu3'], curl: ['7.88.1-10'] })),
      now: () => NOW - 7200_000,
    }).reconcile('startup');
    assert.equal(r.result, 'applied');
    await mkdir(join(site, 'status'), { recursive: true });
    for (const [path, text] of source.reports) await writeFile(join(site, path), text);
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    git('add', '-A');
    git('commit', '-qm', 'base');
    git('checkout', '-qb', 'feature');
    await writeResourceSite(site, { workers: 1, jq: '1.7.1-3' });
    git('commit', '-qam', 'a worker, jq 1.7.1');
    git('checkout', '-q', 'main');
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('two revisions: only what the head changes, against the base status/ (exit 2)', async () => {
    const r = await bpa([
      'diff',
      'main',
      'feature',
      '-C',
      repo,
      '--path',
      'sites/edge',
      '--state',
      join(tmp, 'none'),
    ]);
    assert.equal(r.code, 2, r.err + r.out);
    const lines = r.out.split('\n');
    assert.match(
      lines[0] ?? '',
      /^Both planned offline against the status\/ of main: .* observed 2026-03-01T10:00:00Z \(2 hours ago\)\.$/,
    );
    assert.match(
      r.out,
      /^bpa diff: base main \(plan [0-9a-f]{12}\) → head feature \(plan [0-9a-f]{12}\)$/m,
    );
    assert.match(
      r.out,
      /^ {2}\+ node {4}worker-2 \(worker\) add on metal3\/node-\d 198\.18\.9\.\d+$/m,
    );
    assert.match(r.out, /^ {2}\+ action {2}add-nodes worker-2$/m);
    assert.match(
      r.out,
      /^ {2}\+ package master-1: jq 1\.6-2\.1ubuntu3 → 1\.7\.1-3 \(upgrade-packages\)$/m,
    );
    assert.doesNotMatch(r.out, /^ {2}- /m, 'the base plans nothing: it is what was applied');
    assert.doesNotMatch(r.out, /master-1 \(master\) keep/, 'unchanged nodes are not listed');
    assert.match(
      r.out,
      /1 cluster differs: \d+ lines only in the head plan \(\+\), 0 only in the base plan/,
    );
  });

  it('the same revision twice: the same plan (exit 0); -o json', async () => {
    let r = await bpa([
      'diff',
      'main',
      'main',
      '-C',
      repo,
      '--path',
      'sites/edge',
      '--state',
      join(tmp, 'none'),
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /The plans are the same\./);
    r = await bpa([
      'diff',
      'feature',
      'main',
      '-C',
      repo,
      '--path',
      'sites/edge',
      '-o',
      'json',
      '--state',
      join(tmp, 'none'),
    ]);
    assert.equal(r.code, 2);
    const json = JSON.parse(r.out) as {
      same: boolean;
      clusters: Array<{ base: Array<{ text: string }>; head: unknown[] }>;
    };
    assert.equal(json.same, false);
    // Reversed: what the feature would do shows as base-only.
    assert.ok(json.clusters[0]?.base.some((i) => i.text === 'add-nodes worker-2'));
  });

  it('two directories work the same way', async () => {
    const a = join(tmp, 'dir-a');
    const b = join(tmp, 'dir-b');
    git('worktree', 'add', '-q', '--detach', a, 'main');
    git('worktree', 'add', '-q', '--detach', b, 'feature');
    // A site directory without status/ of its own is planned against the base's.
    await rm(join(b, 'sites', 'edge', 'status'), { recursive: true, force: true });
    const r = await bpa([
      'diff',
      join(a, 'sites/edge'),
      join(b, 'sites/edge'),
      '--state',
      join(tmp, 'none'),
    ]);
    assert.equal(r.code, 2, r.err + r.out);
    assert.match(r.out, /\+ action {2}add-nodes worker-2/);
  });

  it('a revision with errors: its problems name the file as git does (REV:path), exit 1', async () => {
    git('checkout', '-qb', 'broken', 'main');
    await writeFile(join(repo, 'sites', 'edge', 'extra.yaml'), 'kind: [\n');
    git('add', '-A');
    git('commit', '-qm', 'a broken file');
    git('checkout', '-q', 'main');
    const args = [
      'diff',
      'main',
      'broken',
      '-C',
      repo,
      '--path',
      'sites/edge',
      '--state',
      join(tmp, 'broken-state'),
    ];
    const r = await bpa(args);
    assert.equal(r.code, EXIT.failed, r.err + r.out);
    assert.match(r.out, /^head broken:\nbroken:sites\/edge\/extra\.yaml:\d+:\d+: error /m);
    assert.doesNotMatch(r.out, /bpa-diff-/);
    const json = await bpa([...args, '-o', 'json']);
    const problems = (JSON.parse(json.out) as { head: { problems: Array<{ file?: string }> } }).head
      .problems;
    assert.ok(
      problems.some((p) => p.file === 'broken:sites/edge/extra.yaml'),
      json.out,
    );
  });

  it('neither a directory nor a revision: a usage error that says so', async () => {
    const r = await bpa(['diff', 'main', 'no-such-branch', '-C', repo, '--path', 'sites/edge']);
    assert.equal(r.code, EXIT.usage);
    assert.match(
      r.err,
      /no-such-branch is neither a site directory nor a revision of the git repository/,
    );
  });
});
