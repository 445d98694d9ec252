import assert from 'node:assert/strict';
import { BlockList, isIP } from 'node:net';
import { resolveNodeIp, unusableAddress } from '../../../src/observe/inventory/ip.js';
import { host } from '../plan/plan-fixture.js';
import { withDerivedKept } from '../util/derived-kept.js';

/** The ranges as node:net's BlockList reads them: what unusableAddress read before it was fast. */
function reference(ip: string): string | undefined {
  const list = (...subnets: Array<[string, number, 'ipv4' | 'ipv6']>): BlockList => {
    const l = new BlockList();
    for (const [net, prefix, type] of subnets) l.addSubnet(net, prefix, type);
    return l;
  };
  const never: Array<[RegExp, BlockList]> = [
    [/^unspecified$/, list(['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6'])],
    [/^loopback$/, list(['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6'])],
    [/^multicast$/, list(['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6'])],
    [/^broadcast$/, list(['255.255.255.255', 32, 'ipv4'])],
    [/^link-local without a zone/, list(['fe80::', 10, 'ipv6'])],
    [/^IPv4 link-local/, list(['169.254.0.0', 16, 'ipv4'])],
  ];
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  for (const [why, l] of never) if (l.check(ip, family === 4 ? 'ipv4' : 'ipv6')) return why.source;
  return undefined;
}

describe('unusableAddress: the IPv4 fast path reads the ranges as BlockList does', () => {
  it('every first octet, second octets at the range edges, and odd forms', () => {
    const ips: string[] = [
      '255.255.255.255',
      '255.255.255.254',
      '1.2.3',
      '01.2.3.4',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'fe80::1',
      '::',
      '::1',
      'ff02::1',
      '2001:db8::1',
    ];
    for (let a = 0; a < 256; a++)
      for (const b of [0, 1, 168, 253, 254, 255]) ips.push(`${a}.${b}.0.1`, `${a}.${b}.255.255`);
    let unusable = 0;
    for (const ip of ips) {
      const got = unusableAddress(ip);
      const want = reference(ip);
      if (want === undefined || want === 'not an IP address') assert.equal(got, want, ip);
      else {
        assert.ok(got !== undefined && new RegExp(want).test(got), `${ip}: ${got} for ${want}`);
        unusable++;
      }
    }
    assert.ok(unusable > 100, `${unusable} unusable addresses checked`);
  });
});

describe('resolveNodeIp: kept per host, lease map and order', () => {
  withDerivedKept();
  const mac = '52:54:00:00:00:01';
  const h = host(1, { nics: [{ mac, ips: ['198.18.1.1'] }] });
  const leases = new Map([[mac, { mac, ip: '198.18.0.1', origin: 'leases:1' }]]);

  it('the same host, map and order: the same resolution object', () => {
    const a = resolveNodeIp(h, leases, ['lease', 'inventory']);
    assert.equal(resolveNodeIp(h, leases, ['lease', 'inventory']), a);
    assert.equal(a.resolved?.ip, '198.18.0.1');
  });

  it('another map, order or host object: resolved again', () => {
    const a = resolveNodeIp(h, leases);
    const moved = new Map([[mac, { mac, ip: '198.18.0.7', origin: 'leases:1' }]]);
    assert.equal(resolveNodeIp(h, moved).resolved?.ip, '198.18.0.7');
    assert.equal(resolveNodeIp(h, moved, ['inventory', 'lease']).resolved?.ip, '198.18.1.1');
    const copy = { ...h, nics: [{ mac, ips: ['198.18.1.2'] }] };
    assert.equal(resolveNodeIp(copy, new Map(), ['inventory']).resolved?.ip, '198.18.1.2');
    assert.equal(resolveNodeIp(h, leases), a, 'kept per map');
    const inventoryFirst = resolveNodeIp(h, leases, ['inventory', 'lease']);
    assert.equal(inventoryFirst.resolved?.ip, '198.18.1.1');
    assert.notEqual(resolveNodeIp(h, leases), a, 'the order changed in between');
    assert.deepEqual(resolveNodeIp(h, leases), a);
  });
});
