import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Plan } from '../../../src/plan/index.js';
import { createRun } from '../../../src/reconcile/context.js';
import { Reconciler } from '../../../src/reconcile/reconciler.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import type { SiteStatusDoc } from '../../../src/report/status.js';
import { GitSource } from '../../../src/source/git-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { resourceHostIp, writeResourceSite, type ResourceSite } from '../../fakes/resource-site.js';
import { configWith } from '../../fakes/site.js';
import { readTree } from '../../fakes/tree.js';

/**
 * serve --require-approved-plan against a real git server (http-backend): the plan a person
 * approves in a commit trailer, computed offline from the status/ the controller committed,
 * is the plan the controller applies; anything else is Blocked with the right reason. The
 * nodes are in-memory ports.
 */
describe('--require-approved-plan: only the reviewed plan is applied', function () {
  this.timeout(120_000);
  let git: GitServer;
  let tmp: string;
  let nodes: FakeNodes;
  let ports: ReturnType<typeof fakePorts>;
  let source: GitSource;
  let stateDir: string;

  before(async () => {
    git = await startGitServer();
  });
  after(async () => {
    await git?.stop();
  });
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-approved-'));
    stateDir = join(tmp, 'state');
    const name = `site-${Math.random().toString(16).slice(2)}`;
    await writeResourceSite(join(tmp, 'v1'), { workers: 0, jq: '1.6-2.1ubuntu3' });
    const url = await git.createRepo(name, { files: await readTree(join(tmp, 'v1'), 'site') });
    source = new GitSource({ url, ref: 'main', path: 'site', stateDir });
    nodes = new FakeNodes({ jq: ['1.6-2.1ubuntu3', '1.7.1-3'], curl: ['7.88.1-10'] });
    ports = fakePorts(nodes);
    repo = name;
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });
  let repo: string;

  const reconcile = (trigger: 'startup' | 'interval' | 'webhook' = 'webhook', flags = {}) =>
    new Reconciler({
      source,
      configFor: configWith({ stateDir, requireApprovedPlan: true, ...flags }),
      env: {},
      log: silentLogger(),
      resyncIntervalMs: trigger === 'interval' ? 0 : 3_600_000,
      ports,
    }).reconcile(trigger);

  async function siteStatus(): Promise<SiteStatusDoc> {
    return parse(
      (await git.readFile(repo, 'main', 'site/status/site.yaml')) ?? '',
    ) as SiteStatusDoc;
  }

  /** A pull request job: the branch's site as `spec` says, planned offline against its status/. */
  async function reviewedPlan(spec: ResourceSite): Promise<Plan> {
    const dir = join(tmp, `pr-${Math.random().toString(16).slice(2)}`);
    await writeResourceSite(dir, spec);
    for (const file of ['inventory.yaml', 'east.yaml', 'site.yaml']) {
      const text = await git.readFile(repo, 'main', `site/status/${file}`);
      if (text === undefined) continue;
      await mkdir(join(dir, 'status'), { recursive: true });
      await writeFile(join(dir, 'status', file), text);
    }
    const run = createRun({
      site: { kind: 'path', path: dir },
      configFor: configWith({ stateDir: join(tmp, 'pr-state') }),
      env: {},
      log: silentLogger(),
    });
    await runSteps(run, 'plan');
    assert.ok(run.fromStatus, 'planned against status/');
    return run.plan as Plan;
  }

  const siteFiles = async (spec: ResourceSite): Promise<Record<string, string>> => {
    const dir = join(tmp, `files-${Math.random().toString(16).slice(2)}`);
    await writeResourceSite(dir, spec);
    return readTree(dir, 'site');
  };

  it('blocks an unapproved revision (PlanNotApproved), applies it once the reviewed plan is approved', async () => {
    const first = await reconcile('startup');
    assert.equal(first.result, 'blocked');
    assert.equal(first.error?.code, 'PLAN_NOT_APPROVED');
    assert.equal(ports.installer.runs.length, 0, 'nothing applied');
    assert.equal(nodes.installed.size, 0);
    let status = await siteStatus();
    assert.equal(status.status.phase, 'Blocked');
    assert.equal(status.status.conditions[0]?.reason, 'PlanNotApproved');
    const blockedHash = status.status.approval?.planHash ?? '';
    assert.match(blockedHash, /^[0-9a-f]{64}$/);
    assert.equal(status.status.approval?.trailer, `Bpa-Approved-Plan: ${blockedHash}`);
    assert.deepEqual(
      status.status.approval?.pending.map((p) => p.action),
      ['provision-cluster', 'install-packages'],
    );
    const cluster = parse((await git.readFile(repo, 'main', 'site/status/east.yaml')) ?? '') as {
      status: { phase: string; conditions: Array<{ reason: string }> };
    };
    assert.equal(cluster.status.phase, 'Blocked');
    assert.equal(cluster.status.conditions[0]?.reason, 'PlanNotApproved');

    // The reviewer's plan, offline from the status/ just committed, is the controller's.
    const reviewed = await reviewedPlan({ workers: 0, jq: '1.6-2.1ubuntu3' });
    assert.equal(reviewed.hash, blockedHash);
    await git.commitAs(repo, {}, `Approve the first plan\n\nBpa-Approved-Plan: ${reviewed.hash}\n`);
    const second = await reconcile();
    assert.equal(second.result, 'applied', JSON.stringify(second.error));
    assert.equal(nodes.packagesOf(resourceHostIp(3)).get('jq'), '1.6-2.1ubuntu3');
    status = await siteStatus();
    assert.equal(status.status.phase, 'Ready');
    assert.equal(status.status.approval, undefined);

    // bpa's own status commits (status/ only) need no approval: nothing to apply, not blocked.
    const again = await reconcile('interval');
    assert.ok(['unchanged', 'skipped'].includes(again.result), again.result);
    assert.equal((await siteStatus()).status.phase, 'Ready');
  });

  it('the trailer approves only as a git trailer: not as the subject, nor in a paragraph above the last', async () => {
    const first = await reconcile('startup');
    assert.equal(first.result, 'blocked');
    const hash = (await siteStatus()).status.approval?.planHash ?? '';
    assert.match(hash, /^[0-9a-f]{64}$/);
    await git.commitAs(repo, {}, `Bpa-Approved-Plan: ${hash}\n`);
    let r = await reconcile();
    assert.equal(r.error?.code, 'PLAN_NOT_APPROVED', 'the subject is no trailer');
    await git.commitAs(repo, {}, `Looks good\n\nBpa-Approved-Plan: ${hash}\n\nMerged by hand.\n`);
    r = await reconcile();
    assert.equal(r.error?.code, 'PLAN_NOT_APPROVED', 'a middle paragraph is no trailer');
    assert.equal(ports.installer.runs.length, 0, 'nothing applied');
    await git.commitAs(repo, {}, `Looks good\n\nMerged by hand.\n\nBpa-Approved-Plan: ${hash}\n`);
    r = await reconcile();
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
  });

  it('an approval below a status-only commit bpa never fetched is found (the shallow cache is deepened)', async () => {
    const first = await reconcile('startup');
    assert.equal(first.result, 'blocked');
    const reviewed = await reviewedPlan({ workers: 0, jq: '1.6-2.1ubuntu3' });
    // Between two polls: the approval, then a commit that touches only status/.
    const approval = await git.commitAs(
      repo,
      {},
      `Approve\n\nBpa-Approved-Plan: ${reviewed.hash}\n`,
    );
    await git.commitAs(repo, { 'site/status/note.yaml': 'by: a person\n' }, 'a status-only commit');
    const r = await reconcile();
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.ok(approval);
  });

  it('a stale trailer (the plan changed since review) and a forged one block as PlanChanged; a malformed one as PlanNotApproved', async () => {
    // Approve and apply v1 first.
    await reconcile('startup');
    const v1 = await reviewedPlan({ workers: 0, jq: '1.6-2.1ubuntu3' });
    await git.commitAs(repo, {}, `Approve\n\nBpa-Approved-Plan: ${v1.hash}\n`);
    assert.equal((await reconcile()).result, 'applied');

    // A pull request adds a worker and bumps jq; the reviewer approved its plan...
    const v2 = { workers: 1, jq: '1.7.1-3' };
    const reviewed = await reviewedPlan(v2);
    assert.deepEqual(
      reviewed.clusters[0]?.actions.map((a) => a.kind),
      ['add-nodes', 'install-packages', 'upgrade-packages'],
    );
    // ...but meanwhile the world changed: the host it would take is gone from the inventory.
    const addHost = reviewed.clusters[0]?.nodes.find((n) => n.change === 'add')?.host ?? '';
    const files = await siteFiles(v2);
    const inventory = files['site/inventory/hosts.yaml'] ?? '';
    const docs = inventory
      .split('---\n')
      .filter((d) => !d.includes(`name: ${addHost.split('/')[1]}\n`));
    await git.commitAs(
      repo,
      { ...files, 'site/inventory/hosts.yaml': docs.join('---\n') },
      `Add worker-2, jq 1.7.1\n\nBpa-Approved-Plan: ${reviewed.hash}\n`,
    );
    let r = await reconcile();
    assert.equal(r.result, 'blocked');
    assert.equal(r.error?.code, 'PLAN_CHANGED');
    let status = await siteStatus();
    assert.equal(status.status.conditions[0]?.reason, 'PlanChanged');
    assert.equal(status.status.approval?.approvedPlanHash, reviewed.hash);
    assert.notEqual(status.status.approval?.planHash, reviewed.hash);
    assert.match(
      status.status.conditions[0]?.message ?? '',
      new RegExp(reviewed.hash.slice(0, 12)),
    );
    assert.equal(
      nodes.packagesOf(resourceHostIp(3)).get('jq'),
      '1.6-2.1ubuntu3',
      'nothing applied',
    );

    // A forged trailer: a hash nobody computed.
    await git.commitAs(repo, {}, `Trust me\n\nBpa-Approved-Plan: ${'f'.repeat(64)}\n`);
    r = await reconcile();
    assert.equal(r.error?.code, 'PLAN_CHANGED');
    // A malformed one.
    await git.commitAs(repo, {}, 'Approve\n\nBpa-Approved-Plan: yes\n');
    r = await reconcile();
    assert.equal(r.error?.code, 'PLAN_NOT_APPROVED');
    status = await siteStatus();
    assert.match(
      status.status.conditions[0]?.message ?? '',
      /malformed trailer \(Bpa-Approved-Plan: yes\)/,
    );

    // The current plan, approved: applied.
    const current = status.status.approval?.planHash ?? '';
    await git.commitAs(repo, {}, `Re-reviewed\n\nBpa-Approved-Plan: ${current}\n`);
    r = await reconcile();
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.equal(nodes.packagesOf(resourceHostIp(3)).get('jq'), '1.7.1-3');
  });

  it('fix-drift needs no approval (configurable)', async () => {
    await reconcile('startup');
    const v1 = await reviewedPlan({ workers: 0, jq: '1.6-2.1ubuntu3' });
    await git.commitAs(repo, {}, `Approve\n\nBpa-Approved-Plan: ${v1.hash}\n`);
    assert.equal((await reconcile()).result, 'applied');
    // Someone changed jq on the master by hand.
    nodes.packagesOf(resourceHostIp(3)).set('jq', '1.7.1-3');
    let r = await reconcile('interval', { approvalExempt: [] });
    assert.equal(r.result, 'blocked', 'with no exemption, drift repair waits too');
    assert.equal(nodes.packagesOf(resourceHostIp(3)).get('jq'), '1.7.1-3');
    r = await reconcile('interval');
    assert.equal(r.result, 'applied', JSON.stringify(r.error));
    assert.equal(nodes.packagesOf(resourceHostIp(3)).get('jq'), '1.6-2.1ubuntu3');
  });
});
