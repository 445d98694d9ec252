import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAptRepo, type AptRepo } from '../../lab/apt-repo.js';
import { startLab, type Lab } from '../../lab/lab.js';
import { bpa, labArgs, packageLabReady } from './harness.js';
import { writeLabSite } from './lab-site.js';

/**
 * Node facts come from dpkg-query's whole output. With many packages and one missing,
 * dpkg-query exits 1 and prints far more than the 20-line tail an error keeps for display:
 * every line of it counts, or installed packages look missing and are "repaired".
 */
describe('apply: 60 packages on a lab host, one removed by hand', function () {
  this.timeout(600_000);
  const COUNT = 60;
  const names = Array.from({ length: COUNT }, (_, i) => `bpa-many-${String(i).padStart(2, '0')}`);
  const missing = 'bpa-many-42';
  let lab: Lab | undefined;
  let repo: AptRepo | undefined;
  let tmp: string;
  let site: string;
  let state: string;

  const reconcile = (): ReturnType<typeof bpa> =>
    // The lab's apt repository is unsigned: the site may name it only with the operator's opt-in.
    bpa(['reconcile', '--once', site, ...labArgs(lab!, state, ['--allow-site-commands'])]);
  /** dpkg's own log on the host: one line per package it touched (its /var is the host's own). */
  const dpkgLog = async (): Promise<string[]> =>
    (await lab!.exec('h1', ['cat', '/var/log/dpkg.log'])).stdout.split('\n').filter(Boolean);
  const installedCount = async (): Promise<number> => {
    // dpkg-query exits 1 when one is missing; its output still lists the others.
    const script = 'dpkg-query -W -f=\'${db:Status-Abbrev}\\n\' -- "$@" || true';
    const r = await lab!.exec('h1', ['sh', '-c', script, 'sh', ...names]);
    return r.stdout.split('\n').filter((l) => l.startsWith('ii')).length;
  };

  before(async function () {
    if (!(await packageLabReady())) this.skip();
    lab = await startLab({ hosts: 1, isolatedPackages: true });
    repo = await startAptRepo(
      lab,
      names.map((name) => ({ name, version: '1.0-1' })),
    );
    tmp = await mkdtemp(join(tmpdir(), 'bpa-many-packages-'));
    state = join(tmp, 'state');
    site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'many',
        nodes: [{ name: 'master-1', roles: ['master'], host: 0 }],
        masterSoftware: names,
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

  it('installs all 60, then reports exactly the one missing and repairs only it', async () => {
    const first = await reconcile();
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.equal(await installedCount(), COUNT);

    await lab!.exec('h1', ['dpkg', '-r', missing]);
    assert.equal(await installedCount(), COUNT - 1);
    const before = (await dpkgLog()).length;

    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const drift = /fix-drift +nodes differ from what was applied: (.*)/.exec(r.stdout);
    assert.ok(drift, r.stdout);
    assert.equal(drift[1]!.trim(), `master-1 has ${missing} not installed`);
    assert.match(r.stdout, /✓ fix-drift master-1/);
    assert.equal(await installedCount(), COUNT);
    const touched = new Set(
      (await dpkgLog())
        .slice(before)
        .map((line) => / (?:install|upgrade|remove|configure|trigproc) (\S+?):/.exec(line)?.[1])
        .filter((name): name is string => name !== undefined),
    );
    assert.deepEqual([...touched], [missing], 'dpkg touched only the missing package');

    const again = await reconcile();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /No changes/);
  });
});
