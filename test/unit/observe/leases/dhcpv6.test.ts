import { strict as assert } from 'node:assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveNodeIp } from '../../../../src/observe/inventory/ip.js';
import { mergeLeases, parseLeases } from '../../../../src/observe/leases/index.js';
import { LeaseCache } from '../../../../src/observe/leases/lease-cache.js';
import { readLeaseFiles } from '../../../../src/observe/leases/read-lease-files.js';
import { host } from '../../plan/plan-fixture.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const HOUR = 3_600_000;
const sec = (ms: number): number => Math.floor(ms / 1000);
const SERVER = 'duid 00:01:00:01:2f:1a:3c:7e:52:54:00:12:34:56';
const MAC1 = '52:54:00:00:00:01';
const MAC2 = '52:54:00:00:00:02';

describe('observe/leases: DHCPv6 leases of a dnsmasq file', () => {
  it('says, at its line, why each DHCPv6 lease in force was not used', () => {
    const end = sec(NOW + HOUR);
    const text = [
      `${end} ${MAC1} 10.0.0.1 a ff:00:00:00:01:00:02:00:00:ab:11:01:02`,
      SERVER,
      `${end} 1 fd00::1 en 00:02:00:00:ab:11:09:09`,
      `${end} 2 fd00::2 uuid 00:04:5c:a1:0f:33:7e:2b:4d:6a:9e:01:22:33:44:55:66:77`,
      `${end} T3 fd00::3 tmp 00:03:00:01:${MAC2}`,
      `${end} 4 fd00::4 anon *`,
      `${end} 5 fd00::5 ib 00:03:00:20:00:02:c9:02:00:23:13:92`,
      `${end} 6 fd00::6 odd 00:09:01:02`,
      `${sec(NOW - HOUR)} 7 fd00::7 gone 00:02:00:00:ab:11:09:09`,
      `${end} 8 fd00::8 networkd 00:02:00:00:ab:11:01:02`,
    ].join('\n');
    const r = parseLeases(text, { file: 'dnsmasq.leases', now: NOW });
    const said = r.problems.map((p) => [p.code, p.severity, p.line, p.message]);
    const why = (line: number, ip: string, text: RegExp): void => {
      const p = said.find((s) => s[2] === line);
      assert.ok(p, `a problem for line ${line}: ${JSON.stringify(said)}`);
      assert.equal(p[0], 'LEASE_IPV6_UNUSED');
      assert.equal(p[1], 'warning');
      assert.match(String(p[3]), new RegExp(`^DHCPv6 lease of ${ip} not used: ${text.source}`));
    };
    why(
      3,
      'fd00::1',
      /its DUID is DUID-EN \(type 2\), which holds no MAC, and no DHCPv4 lease .*RFC 4361/,
    );
    why(4, 'fd00::2', /its DUID is DUID-UUID \(type 4\), which holds no MAC/);
    why(5, 'fd00::3', /it is a temporary address \(IA_TA\)/);
    why(6, 'fd00::4', /dnsmasq recorded no client DUID/);
    why(
      7,
      'fd00::5',
      /its DUID is DUID-LL \(type 3\) with a link-layer address of hardware type 32, not an Ethernet MAC/,
    );
    why(8, 'fd00::6', /its DUID is of unknown type 9/);
    assert.equal(said.length, 6, 'an ended lease is not reported; a tied one is used');
    // The DUID-EN client whose DHCPv4 client id carries its DUID: its lease is its MAC's,
    // after the DHCPv4 lease of that MAC.
    assert.deepEqual(
      r.leases.map((l) => [l.mac, l.ip, l.origin]),
      [[MAC1, '10.0.0.1', 'dnsmasq.leases:1']],
    );
    const later = parseLeases(
      text.replace(/^.*10\.0\.0\.1.*$/m, (l) => l.replace(String(end), String(sec(NOW - 1)))),
      {
        file: 'dnsmasq.leases',
        now: NOW,
      },
    );
    assert.deepEqual(
      later.leases.map((l) => [l.mac, l.ip, l.origin]),
      [[MAC1, 'fd00::8', 'dnsmasq.leases:10']],
      'the DUID ties the DHCPv6 lease to the MAC even once the DHCPv4 lease has ended',
    );
  });

  it('a DHCPv4 lease is a MAC lease before a DHCPv6 one, whatever their ends, in a file and across files', () => {
    const v4 = `${sec(NOW + HOUR)} ${MAC1} 10.0.0.1 a *`;
    const v6 = `${sec(NOW + 9 * HOUR)} 1 fd00::1 a 00:03:00:01:${MAC1}`;
    const one = parseLeases([v4, SERVER, v6].join('\n'), { file: 'f', now: NOW });
    assert.deepEqual(
      one.leases.map((l) => l.ip),
      ['10.0.0.1'],
    );
    const v6only = parseLeases([SERVER, v6].join('\n'), { file: 'g', now: NOW });
    assert.deepEqual(
      v6only.leases.map((l) => l.ip),
      ['fd00::1'],
    );
    for (const files of [
      [one.leases, v6only.leases],
      [v6only.leases, one.leases],
    ])
      assert.equal(mergeLeases(files).get(MAC1)?.ip, '10.0.0.1');
  });

  it("a host's address: IPv4 first from any source; a DHCPv6 lease when there is none", () => {
    const v6lease = { mac: MAC1, ip: 'fd00::1', origin: 'dnsmasq.leases:3' };
    const v4lease = { mac: MAC2, ip: '10.0.0.2', origin: 'dnsmasq.leases:1' };
    const twoNics = host(1, {
      nics: [
        { mac: MAC1, ips: [] },
        { mac: MAC2, ips: [] },
      ],
    });
    // The boot NIC's DHCPv6 lease does not win over another NIC's DHCPv4 lease …
    const both = new Map([
      [MAC1, v6lease],
      [MAC2, v4lease],
    ]);
    assert.equal(resolveNodeIp(twoNics, both).resolved?.ip, '10.0.0.2');
    // … nor over an IPv4 address the inventory reports …
    const withInventory = host(1, { nics: [{ mac: MAC1, ips: ['198.18.0.1', 'fd99::1'] }] });
    const v6map = new Map([[MAC1, v6lease]]);
    assert.deepEqual(resolveNodeIp(withInventory, v6map).resolved, {
      ip: '198.18.0.1',
      source: 'inventory',
      mac: MAC1,
      origin: 'hosts.yaml',
    });
    // … and with no IPv4 address anywhere, the lease comes before the inventory's IPv6 one.
    const v6inventory = host(1, { nics: [{ mac: MAC1, ips: ['fd99::1'] }] });
    assert.deepEqual(resolveNodeIp(v6inventory, v6map).resolved, {
      ip: 'fd00::1',
      source: 'lease',
      mac: MAC1,
      origin: 'dnsmasq.leases:3',
    });
    assert.equal(resolveNodeIp(v6inventory, v6map, ['inventory', 'lease']).resolved?.ip, 'fd99::1');
  });

  it('a warning about a lease ends with the lease, also when the file is not parsed again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bpa-dhcpv6-'));
    try {
      const file = join(dir, 'dnsmasq.leases');
      await writeFile(
        file,
        [
          `${sec(NOW + 5 * HOUR)} ${MAC2} 10.0.0.2 b *`,
          SERVER,
          `${sec(NOW + HOUR)} 1 fd00::1 en 00:02:00:00:ab:11:09:09`,
        ].join('\n') + '\n',
      );
      const cache = new LeaseCache();
      const first = await readLeaseFiles([file], NOW, { cache });
      assert.deepEqual(
        first.problems.map((p) => p.code),
        ['LEASE_IPV6_UNUSED'],
      );
      assert.deepEqual(
        (await readLeaseFiles([file], NOW + 2 * HOUR, { cache })).problems,
        [],
        'the lease it was about has ended',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
