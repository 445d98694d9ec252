import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAptRepo, type AptRepo } from '../../lab/apt-repo.js';
import { startLab, type Lab } from '../../lab/lab.js';
import { bpa, labArgs, packageLabReady } from './harness.js';
import { writeLabSite } from './lab-site.js';

/**
 * `bpa plan` sees what `bpa apply` sees: with bpa's SSH key it reads the nodes' packages as
 * apply does before planning, so a reviewed plan hash is the one apply computes, drift
 * included.
 */
describe('plan and apply compute the same plan from the same inputs (lab)', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let repo: AptRepo | undefined;
  let tmp: string;
  let site: string;
  let state: string;

  before(async function () {
    if (!(await packageLabReady())) this.skip();
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    repo = await startAptRepo(lab, [{ name: 'bpa-test-a', version: '1.0-1' }]);
    tmp = await mkdtemp(join(tmpdir(), 'bpa-plan-apply-'));
    state = join(tmp, 'state');
    site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'pa',
        nodes: [
          { name: 'master-1', roles: ['master'], host: 0 },
          { name: 'worker-1', roles: ['worker'], host: 1 },
        ],
        workerSoftware: ['bpa-test-a'],
        extraSite: `apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: lab\nspec:\n  packageMirror: "${repo.sourceLine}"\n`,
      },
      join(tmp, 'site'),
    );
  });
  after(async () => {
    await repo?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  // The same settings for both commands (they are part of the plan hash); plan does not log.
  // The lab's apt repository is unsigned: the site may name it only with the operator's opt-in.
  const args = (extra: string[] = []): string[] => [
    ...labArgs(lab!, state, extra).filter((a) => a !== '--log-level' && a !== 'info'),
    '--allow-site-commands',
  ];

  it('a package removed by hand: plan shows fix-drift with the hash apply accepts', async () => {
    const first = await bpa(['apply', site, ...args()]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    await lab!.exec('h2', ['dpkg', '-r', 'bpa-test-a']);

    const plan = await bpa(['plan', site, '-o', 'json', ...args()]);
    assert.equal(plan.code, 2, plan.stdout + plan.stderr);
    const reviewed = JSON.parse(plan.stdout) as {
      hash: string;
      clusters: Array<{ actions: Array<{ kind: string; nodes: string[] }> }>;
    };
    assert.deepEqual(
      reviewed.clusters[0]?.actions.map((a) => [a.kind, a.nodes]),
      [['fix-drift', ['worker-1']]],
    );

    const apply = await bpa(['apply', site, ...args(['--plan-hash', reviewed.hash])]);
    assert.equal(apply.code, 0, apply.stdout + apply.stderr);
    assert.match(apply.stdout, /✓ fix-drift worker-1/);
    assert.doesNotMatch(apply.stderr, /PLAN_HASH_MISMATCH/);
  });
});
