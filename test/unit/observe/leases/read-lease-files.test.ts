import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLeaseFiles } from '../../../../src/observe/leases/read-lease-files.js';
import { NOW } from './cases.js';

const HEADER =
  'address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id';
/** One Kea lease4 row; expire 22:00 or 23:00 on the test day, state 0 unless given. */
const row = (
  ip: string,
  mac: string,
  o: { expire?: number; lifetime?: number; state?: number } = {},
): string =>
  `${ip},${mac},,${o.lifetime ?? 43200},${o.expire ?? 1795125600},1,0,0,,${o.state ?? 0},,0`;
const kea = (...rows: string[]): string => [HEADER, ...rows, ''].join('\n');
const LATER = 1795129200;

describe('observe/leases readLeaseFiles', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-leases-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const origins = (leases: Map<string, { origin: string }>): Record<string, string> =>
    Object.fromEntries([...leases].map(([mac, l]) => [mac, l.origin.slice(dir.length + 1)]));

  it("replays Kea's .2 and .1 companions before the live file, as Kea does", async () => {
    const base = join(dir, 'kea-leases4.csv');
    await writeFile(
      `${base}.2`,
      kea(
        row('10.0.8.1', '52:54:00:08:00:01'), // line 2: renewed in the live file
        row('10.0.8.2', '52:54:00:08:00:02'), // line 3: released in .1
        row('10.0.8.5', '52:54:00:08:00:05'), // line 4: deleted in the live file
        row('10.0.8.6', '52:54:00:08:00:06'), // line 5: only here
      ),
    );
    await writeFile(
      `${base}.1`,
      kea(
        row('10.0.8.2', '52:54:00:08:00:02', { state: 3 }), // line 2
        row('10.0.8.3', '52:54:00:08:00:03'), // line 3
      ),
    );
    await writeFile(
      base,
      kea(
        row('10.0.8.1', '52:54:00:08:00:01', { expire: LATER }), // line 2
        row('10.0.8.5', '52:54:00:08:00:05', { lifetime: 0 }), // line 3
        row('10.0.8.4', '52:54:00:08:00:04'), // line 4
      ),
    );
    const { leases, problems } = await readLeaseFiles([base], NOW);
    assert.deepStrictEqual(problems, []);
    assert.deepStrictEqual(origins(leases), {
      '52:54:00:08:00:01': 'kea-leases4.csv:2',
      '52:54:00:08:00:03': 'kea-leases4.csv.1:3',
      '52:54:00:08:00:04': 'kea-leases4.csv:4',
      '52:54:00:08:00:06': 'kea-leases4.csv.2:5',
    });
    assert.equal(leases.get('52:54:00:08:00:01')?.expires, LATER * 1000);
  });

  it('reads a finished cleanup (.completed) instead of .2 and .1', async () => {
    const base = join(dir, 'kea-leases4.csv');
    await writeFile(`${base}.completed`, kea(row('10.0.8.1', '52:54:00:08:00:01')));
    await writeFile(`${base}.1`, kea(row('10.0.8.9', '52:54:00:08:00:09')));
    await writeFile(base, kea());
    const { leases, problems } = await readLeaseFiles([base], NOW);
    assert.deepStrictEqual(problems, []);
    assert.deepStrictEqual(origins(leases), { '52:54:00:08:00:01': 'kea-leases4.csv.completed:2' });
  });

  it('does not read a listed companion on its own, where it would revive an ended lease', async () => {
    const base = join(dir, 'kea-leases4.csv');
    await writeFile(`${base}.1`, kea(row('10.0.8.1', '52:54:00:08:00:01')));
    await writeFile(base, kea(row('10.0.8.1', '52:54:00:08:00:01', { state: 3 })));
    const { leases, problems } = await readLeaseFiles([`${base}.1`, base, base], NOW);
    assert.deepStrictEqual(problems, []);
    assert.equal(leases.size, 0);
  });

  it('reports a missing or unreadable file and still reads the others', async () => {
    const dnsmasq = join(dir, 'dnsmasq.leases');
    await writeFile(dnsmasq, '1795125600 52:54:00:08:00:07 10.0.8.7 * *\n');
    await mkdir(join(dir, 'a-directory'));
    const missing = join(dir, 'gone', 'dhcpd.leases');
    const { leases, problems } = await readLeaseFiles(
      [missing, dnsmasq, join(dir, 'a-directory')],
      NOW,
    );
    assert.deepStrictEqual(origins(leases), { '52:54:00:08:00:07': 'dnsmasq.leases:1' });
    assert.deepStrictEqual(
      problems.map((p) => [p.code, p.severity, p.file]),
      [
        ['LEASE_FILE_UNREADABLE', 'warning', missing],
        ['LEASE_FILE_UNREADABLE', 'warning', join(dir, 'a-directory')],
      ],
    );
    assert.match(problems[0]?.message ?? '', /no such file/);
  });

  it('refuses a lease file over the size limit without reading it, and still reads the others', async () => {
    const dnsmasq = join(dir, 'dnsmasq.leases');
    await writeFile(dnsmasq, '1795125600 52:54:00:08:00:07 10.0.8.7 * *\n');
    const huge = join(dir, 'huge.leases');
    // Sparse: one byte over the documented 32 MiB costs no disk.
    await writeFile(huge, '');
    await truncate(huge, 32 * 1024 * 1024 + 1);
    const { leases, problems } = await readLeaseFiles([huge, dnsmasq], NOW);
    assert.deepStrictEqual(origins(leases), { '52:54:00:08:00:07': 'dnsmasq.leases:1' });
    assert.deepStrictEqual(
      problems.map((p) => [p.code, p.severity, p.file]),
      [['LEASE_FILE_UNREADABLE', 'warning', huge]],
    );
    assert.match(
      problems[0]?.message ?? '',
      /is 32\.0 MiB, over the 32\.0 MiB bpa reads; it was not read/,
    );
  });

  it('merges files of different formats, newest lease per MAC, and passes on their problems', async () => {
    const isc = join(dir, 'dhcpd.leases');
    const dnsmasq = join(dir, 'dnsmasq.leases');
    await writeFile(
      isc,
      [
        'lease 10.0.8.1 { ends epoch 1795129200; binding state active; hardware ethernet 52:54:00:08:00:01; }',
        'lease 10.0.8.2 { ends epoch 1795125600; binding state active; hardware ethernet 52:54:00:08:00:02; }',
      ].join('\n'),
    );
    await writeFile(
      dnsmasq,
      [
        '1795125600 52:54:00:08:00:01 10.0.9.1 * *',
        '1795129200 52:54:00:08:00:02 10.0.9.2 * *',
        'junk',
      ].join('\n'),
    );
    const { leases, problems } = await readLeaseFiles([isc, dnsmasq], NOW);
    assert.deepStrictEqual(origins(leases), {
      '52:54:00:08:00:01': 'dhcpd.leases:1',
      '52:54:00:08:00:02': 'dnsmasq.leases:2',
    });
    assert.deepStrictEqual(
      problems.map((p) => [p.code, p.file, p.line]),
      [['LEASE_MALFORMED', dnsmasq, 3]],
    );
  });
});
