import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BPA = join(ROOT, 'bin', 'bpa');

function bpa(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      BPA,
      args,
      { cwd: ROOT, timeout: 30_000, env: { ...process.env, BPA_STATE_DIR: '' } },
      (err, stdout, stderr) => {
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
          out: stdout + stderr,
        });
      },
    );
  });
}

/** `bpa plan` on a copy of the example site that someone hostile edited. */
describe('bpa plan: lease files a site names', function () {
  this.timeout(60_000);
  let tmp = '';
  let site = '';
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-plan-trust-'));
    site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('a lease file that is a link to a file outside the site: an error, and not one line of that file printed', async () => {
    const secret = join(tmp, 'git-token');
    await writeFile(secret, 'ghp_BPATESTSECRETxxxxxxxxxxxxxxxxxxxxxxxxx\nsecond-secret-line\n', {
      mode: 0o600,
    });
    const leases = join(site, 'leases', 'dnsmasq.leases');
    await rm(leases);
    await symlink(secret, leases);
    const r = await bpa(['plan', site, '--state', join(tmp, 'state')]);
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.out,
      /leases\/dnsmasq\.leases: error LEASE_FILE_OUTSIDE_SITE: lease file .*leases\/dnsmasq\.leases leads outside the site directory; it is not read/,
    );
    assert.doesNotMatch(r.out, /ghp_BPATEST|second-secret-line/);
  });

  it('a lease path that climbs out of the site is invalid before anything is read', async () => {
    const siteYaml = join(site, 'site.yaml');
    await writeFile(
      siteYaml,
      (await readFile(siteYaml, 'utf8')).replace(
        '      - leases/dnsmasq.leases',
        '      - ../../etc/shadow',
      ),
    );
    const r = await bpa(['plan', site, '--state', join(tmp, 'state')]);
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.out,
      /site\.yaml:\d+:\d+: error INVALID_VALUE: spec\.leases\.files\.0: "\.\.\/\.\.\/etc\/shadow" is not valid/,
    );
    const v = await bpa(['validate', site]);
    assert.equal(v.code, 1);
    assert.match(v.out, /INVALID_VALUE: spec\.leases\.files\.0/);
  });
});
