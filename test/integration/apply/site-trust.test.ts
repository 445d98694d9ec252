import assert from 'node:assert/strict';
import { access, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { bpa, labReady, marker } from './harness.js';
import { writeLabSite } from './lab-site.js';

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * A Site document that names a program to run on bpa's machine, through a whole reconcile
 * against a real host: refused with the file and line, nothing run, no host touched, unless
 * the operator started bpa with --allow-site-commands.
 */
describe('apply: a site cannot run its own commands on the controller', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let tmp = '';
  before(async function () {
    if (!labReady(canRunLab())) this.skip();
    lab = await startLab({ hosts: 1 });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-site-trust-'));
  });
  after(async () => {
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('installer.command from the Site: refused without the opt-in; run with it', async () => {
    if (!lab) return;
    const proof = join(tmp, 'site-command-ran');
    const site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'st',
        nodes: [{ name: 'master-1', roles: ['master', 'worker'], host: 0 }],
        extraSite: `apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: st\nspec:\n  installer:\n    command: /usr/bin/touch ${proof}\n`,
      },
      join(tmp, 'site'),
    );
    // No installer flags: the only installer command there is comes from the site.
    const args = (state: string, extra: string[] = []): string[] => [
      'reconcile',
      '--once',
      site,
      '--state',
      state,
      '--leases',
      lab!.leaseFile,
      '--ssh-key',
      lab!.keyPath,
      ...extra,
    ];
    const refused = await bpa(args(join(tmp, 'state-1')));
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(
      refused.stdout + refused.stderr,
      /cluster\.yaml:\d+:\d+: error SITE_COMMAND_NOT_ALLOWED: spec\.installer\.command would run on the machine bpa runs on/,
    );
    assert.equal(await exists(proof), false, 'the site command did not run');
    assert.doesNotMatch(await marker(lab, 'h1'), /./, 'the host was not touched');
    assert.deepEqual(
      await readdir(join(tmp, 'state-1', 'clusters')).catch(() => []),
      [],
      'nothing was applied',
    );

    // The operator opts in: the site's command is the installer (it writes no kubeconfig,
    // so the provision fails after it ran; what matters is that it ran).
    const allowed = await bpa(args(join(tmp, 'state-2'), ['--allow-site-commands']));
    assert.doesNotMatch(allowed.stdout + allowed.stderr, /SITE_COMMAND_NOT_ALLOWED/);
    assert.equal(await exists(proof), true, 'with --allow-site-commands the site command ran');
  });
});
