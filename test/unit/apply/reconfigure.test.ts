import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatPlan } from '../../../src/cli/output/plan.js';
import { createRun, type RunContext } from '../../../src/reconcile/context.js';
import { formatPlanMarkdown } from '../../../src/report/markdown.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import { StateStore } from '../../../src/state/store.js';
import { silentLogger } from '../../../src/util/log.js';
import { FakeNodes, fakePorts } from '../../fakes/ports.js';
import { configWith, writeSite } from '../../fakes/site.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt, type AgeKey } from '../../fakes/sops.js';

/**
 * Installer variables (Site installer.variables, a SOPS-encrypted Secret) changed on a running
 * cluster: the whole pipeline (decrypt, HMAC, plan, journaled apply, record) over in-memory
 * ports plans reconfigure-cluster, runs the installer's cluster path, and then plans nothing;
 * a re-encryption of the same values plans nothing; a failed run is planned again.
 */
describe('reconfigure-cluster: a changed installer variable re-runs the cluster path', function () {
  let tmp: string;
  let siteDir: string;
  let stateDir: string;
  let keyFile: string;
  let key: AgeKey;
  let ports: ReturnType<typeof fakePorts>;

  before(function () {
    const why = ageMissing();
    if (why) this.skip();
    key = ageKeygen();
  });
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-reconfigure-'));
    siteDir = join(tmp, 'site');
    stateDir = join(tmp, 'state');
    keyFile = join(tmp, 'bpa.agekey');
    await writeFile(keyFile, `${key.identity}\n`, { mode: 0o600 });
    await writeSite(siteDir, {
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
      ],
      siteSpec: ['  installer:', '    variables: {secret: installer-vars}'],
    });
    await mkdir(join(siteDir, 'secrets'));
    ports = fakePorts(new FakeNodes({}));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const vars = async (values: Record<string, string>, dataKey?: Buffer): Promise<Buffer> => {
    const out = sopsEncrypt(secretDoc('installer-vars', values), [key.recipient], {
      encryptedRegex: '^(data|stringData)$',
      ...(dataKey ? { dataKey } : {}),
    });
    await writeFile(join(siteDir, 'secrets', 'installer-vars.yaml'), out.text);
    return out.dataKey;
  };
  const run = async (mode: 'plan' | 'apply'): Promise<RunContext> => {
    const ctx = createRun({
      site: { kind: 'path', path: siteDir },
      configFor: configWith({ stateDir, sopsAgeKeyFile: keyFile }),
      env: {},
      log: silentLogger(),
      ports,
    });
    await runSteps(ctx, mode);
    return ctx;
  };
  const kinds = (ctx: RunContext): string[] =>
    ctx.plan?.clusters.flatMap((c) => c.actions.map((a) => a.kind)) ?? [];

  it('plans and runs it once for a changed value, never for a re-encryption', async () => {
    await vars({ vault_password: 'one' });
    const first = await run('apply');
    assert.deepEqual(kinds(first), ['provision-cluster']);
    assert.equal(first.result?.ok, true);
    assert.equal(
      (await new StateStore(stateDir).readCluster('east'))?.installerVariables,
      'installer-vars',
    );
    assert.deepEqual(kinds(await run('plan')), [], 'provisioned with the variables');

    // A new ciphertext (a new data key), the same values: with the keys (apply), nothing to
    // do; without them (`bpa plan`) the ciphertext alone says it changed.
    await vars({ vault_password: 'one' });
    assert.deepEqual(kinds(await run('plan')), ['reconfigure-cluster']);
    const runs = ports.installer.runs.length;
    const rotated = await run('apply');
    assert.deepEqual(kinds(rotated), []);
    assert.equal(ports.installer.runs.length, runs, 'no installer run');
    // … and its new ciphertext is recorded, so `bpa plan` (no keys, ciphertexts) agrees.
    assert.deepEqual(kinds(await run('plan')), []);

    // A changed value: the cluster path again, over every node.
    await vars({ vault_password: 'two' });
    const planned = await run('plan');
    assert.deepEqual(kinds(planned), ['reconfigure-cluster']);
    const action = planned.plan?.clusters[0]?.actions[0];
    assert.deepEqual(action?.nodes, ['master-1', 'worker-1']);
    assert.match(action?.reason ?? '', /installer variables changed \(Secret installer-vars\)/);
    assert.doesNotMatch(JSON.stringify(planned.plan), /two/);
    const text = formatPlan(planned.plan!);
    assert.match(text, /^~ secret installer-vars \(changed\)$/m);
    assert.match(text, /^ {4}1\. reconfigure-cluster installer variables changed/m);
    assert.match(text, /: 1 cluster; 0 to provision, 1 to reconfigure, 0 nodes to add/);
    assert.match(formatPlanMarkdown(planned.plan!), /0 to provision, 1 to reconfigure, 0 nodes/);
    const before = ports.installer.runs.length;
    const applied = await run('apply');
    assert.equal(applied.result?.ok, true);
    assert.deepEqual(
      applied.result?.clusters[0]?.actions[0]?.steps.map((s) => s.name),
      ['inventory', 'ssh-access', 'installer', 'record'],
    );
    assert.deepEqual(
      ports.installer.runs.slice(before).map((r) => [r.path, r.req.nodes]),
      [['provision', ['master-1', 'worker-1']]],
    );
    assert.deepEqual(kinds(await run('apply')), [], 'applied: nothing left');
    assert.deepEqual(kinds(await run('plan')), [], 'nor by the ciphertext');
  });

  it('a failed run is planned again; other actions do not count the variables as applied', async () => {
    await vars({ vault_password: 'one' });
    assert.equal((await run('apply')).result?.ok, true);
    await vars({ vault_password: 'two' });
    // Another change in the same revision, applied before it: a node added (scale.yml).
    await writeSite(siteDir, {
      nodes: [
        { name: 'master-1', roles: ['master'], host: 0 },
        { name: 'worker-1', roles: ['worker'], host: 1 },
        { name: 'worker-2', roles: ['worker'], host: 2 },
      ],
      siteSpec: ['  installer:', '    variables: {secret: installer-vars}'],
    });
    ports.installer.next({ kind: 'succeed' }, { kind: 'fail', output: 'TASK [x] failed' });
    const failed = await run('apply');
    assert.equal(failed.result?.ok, false);
    assert.deepEqual(
      failed.result?.clusters[0]?.actions.map((a) => [a.kind, a.result]),
      [
        ['add-nodes', 'done'],
        ['reconfigure-cluster', 'failed'],
      ],
    );
    const again = await run('apply');
    assert.deepEqual(kinds(again), ['reconfigure-cluster'], 'planned again');
    assert.deepEqual(again.plan?.clusters[0]?.actions[0]?.nodes, [
      'master-1',
      'worker-1',
      'worker-2',
    ]);
    assert.equal(again.result?.ok, true);
    assert.deepEqual(kinds(await run('apply')), []);
  });
});
