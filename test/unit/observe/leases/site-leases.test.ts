import { strict as assert } from 'node:assert';
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLeaseFiles } from '../../../../src/observe/leases/read-lease-files.js';
import { NOW } from './cases.js';

/** A private key made for this run: its lines must never appear in a message. */
const KEY_LINES = generateKeyPairSync('ed25519')
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString()
  .trim()
  .split('\n');
/** Text that must never appear in a message: a private key, a token, lease fields. */
const SECRET_LINES = [
  ...KEY_LINES.slice(0, -1),
  'ghp_TESTTOKENxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
  'lease 10.9.9.9 { hardware ethernet SECRET-ID-42; }',
  '1795125600 52:54:00:00:00:01 SECRET-ADDRESS-43 host *',
  'SECRET-44,52:54:00:00:00:02,,3600,1795125600,1,0,0,,0,,0',
  ...KEY_LINES.slice(-1),
];
const SECRETS = [
  'PRIVATE KEY',
  (KEY_LINES[1] as string).slice(0, 16),
  'ghp_TEST',
  'SECRET-ID-42',
  'SECRET-ADDRESS-43',
  'SECRET-44',
];
const KEA_HEADER =
  'address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id';

describe('observe/leases: lease files named by a site', () => {
  let dir: string;
  let site: string;
  let outside: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-site-leases-'));
    site = join(dir, 'site');
    outside = join(dir, 'outside');
    await mkdir(join(site, 'leases'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(outside, 'id_ed25519'), SECRET_LINES.join('\n') + '\n');
    await writeFile(
      join(outside, 'dnsmasq.leases'),
      '1795125600 52:54:00:00:00:09 10.0.0.9 outside *\n',
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const messages = (problems: Array<{ message: string }>): string =>
    problems.map((p) => p.message).join('\n');

  const escapes: Array<[string, () => Promise<string>]> = [
    [
      'a symbolic link to a file outside (a private key)',
      async () => {
        await symlink(join(outside, 'id_ed25519'), join(site, 'leases', 'dnsmasq.leases'));
        return join(site, 'leases', 'dnsmasq.leases');
      },
    ],
    [
      'a lease file in a directory that is a link outside',
      async () => {
        await symlink(outside, join(site, 'ext'));
        return join(site, 'ext', 'dnsmasq.leases');
      },
    ],
    [
      'a relative link that climbs out',
      async () => {
        await symlink('../../outside/id_ed25519', join(site, 'leases', 'up.leases'));
        return join(site, 'leases', 'up.leases');
      },
    ],
    ['a path that climbs out with ..', async () => join(site, '..', 'outside', 'dnsmasq.leases')],
  ];
  for (const [what, make] of escapes) {
    it(`${what}: refused with an error, nothing of it read or shown`, async () => {
      const path = await make();
      const { leases, problems } = await readLeaseFiles([path], NOW, { confineTo: site });
      assert.equal(leases.size, 0);
      assert.deepEqual(
        problems.map((p) => `${p.severity} ${p.code}`),
        ['error LEASE_FILE_OUTSIDE_SITE'],
      );
      assert.match(messages(problems), /leads outside the site directory; it is not read/);
      for (const s of SECRETS) assert.ok(!messages(problems).includes(s), s);
    });
  }

  it('a link that stays inside the site is read', async () => {
    await writeFile(
      join(site, 'leases', 'real.leases'),
      '1795125600 52:54:00:00:00:07 10.0.0.7 inside *\n',
    );
    await symlink('real.leases', join(site, 'leases', 'dnsmasq.leases'));
    const { leases, problems } = await readLeaseFiles(
      [join(site, 'leases', 'dnsmasq.leases')],
      NOW,
      { confineTo: site },
    );
    assert.deepEqual(problems, []);
    assert.equal(leases.get('52:54:00:00:00:07')?.ip, '10.0.0.7');
  });

  it('a Kea companion that links outside is refused; the live file is still read', async () => {
    const live = join(site, 'leases', 'kea-leases4.csv');
    await writeFile(
      live,
      `${KEA_HEADER}\n10.0.0.5,52:54:00:00:00:05,,3600,1795125600,1,0,0,,0,,0\n`,
    );
    await symlink(join(outside, 'id_ed25519'), `${live}.2`);
    const { leases, problems } = await readLeaseFiles([live], NOW, { confineTo: site });
    assert.equal(leases.get('52:54:00:00:00:05')?.ip, '10.0.0.5');
    assert.deepEqual(
      problems.map((p) => `${p.code} ${p.file ?? ''}`),
      [`LEASE_FILE_OUTSIDE_SITE ${live}.2`],
    );
  });

  it("the operator's own lease files (--leases) are read wherever they are", async () => {
    const { leases, problems } = await readLeaseFiles([join(outside, 'dnsmasq.leases')], NOW);
    assert.deepEqual(problems, []);
    assert.equal(leases.get('52:54:00:00:00:09')?.ip, '10.0.0.9');
  });

  describe('unreadable lines are counted, never shown', () => {
    const formats: Array<[string, string]> = [
      ['dnsmasq.leases', SECRET_LINES.join('\n')],
      ['dhcpd.leases', `lease 10.0.0.1 {\n  starts SECRET-ID-42;\n}\n${SECRET_LINES.join('\n')}`],
      ['kea-leases4.csv', `${KEA_HEADER}\n${SECRET_LINES.join('\n')}`],
      ['kea-bad-header.csv', `address,SECRET-44,expire\n${SECRET_LINES.join('\n')}`],
    ];
    for (const [name, text] of formats) {
      it(name, async () => {
        await writeFile(join(site, 'leases', name), text + '\n');
        const { problems } = await readLeaseFiles([join(site, 'leases', name)], NOW, {
          confineTo: site,
        });
        assert.ok(problems.length > 0, 'the bad lines are reported');
        for (const p of problems) {
          assert.ok(typeof p.line === 'number' && p.line >= 1, 'each names its line');
          for (const s of SECRETS) assert.ok(!p.message.includes(s), `${p.message} shows ${s}`);
        }
      });
    }
  });
});
