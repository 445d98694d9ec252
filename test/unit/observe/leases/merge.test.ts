import { strict as assert } from 'node:assert';
import { mergeLeases, parseLeases } from '../../../../src/observe/leases/index.js';
import type { Lease } from '../../../../src/observe/types.js';
import { NOW, T22, T23 } from './cases.js';

const lease = (mac: string, ip: string, origin: string, expires?: number): Lease =>
  expires === undefined ? { mac, ip, origin } : { mac, ip, origin, expires };

describe('observe/leases mergeLeases', () => {
  const cases: Array<{ name: string; files: Lease[][]; expect: Record<string, string> }> = [
    {
      name: 'the later expiry wins, whichever file holds it',
      files: [
        [lease('52:54:00:00:00:01', '10.0.0.1', 'a:1', T23)],
        [lease('52:54:00:00:00:01', '10.0.0.2', 'b:1', T22)],
      ],
      expect: { '52:54:00:00:00:01': 'a:1' },
    },
    {
      name: 'equal expiry: the later file wins',
      files: [
        [lease('52:54:00:00:00:01', '10.0.0.1', 'a:1', T22)],
        [lease('52:54:00:00:00:01', '10.0.0.2', 'b:1', T22)],
      ],
      expect: { '52:54:00:00:00:01': 'b:1' },
    },
    {
      name: 'an infinite lease beats any finite one',
      files: [
        [lease('52:54:00:00:00:01', '10.0.0.1', 'a:1')],
        [lease('52:54:00:00:00:01', '10.0.0.2', 'b:1', T23)],
      ],
      expect: { '52:54:00:00:00:01': 'a:1' },
    },
    {
      name: 'MACs are compared case-insensitively and keyed normalized',
      files: [
        [lease('52:54:00:AA:00:01', '10.0.0.1', 'a:1', T22)],
        [lease('52-54-00-aa-00-01', '10.0.0.2', 'b:1', T23)],
      ],
      expect: { '52:54:00:aa:00:01': 'b:1' },
    },
    {
      name: 'distinct MACs are all kept; unusable MACs are dropped',
      files: [
        [
          lease('52:54:00:00:00:01', '10.0.0.1', 'a:1', T22),
          lease('nonsense', '10.0.0.9', 'a:2', T22),
        ],
        [lease('52:54:00:00:00:02', '10.0.0.2', 'b:1', T22)],
      ],
      expect: { '52:54:00:00:00:01': 'a:1', '52:54:00:00:00:02': 'b:1' },
    },
    { name: 'no files', files: [], expect: {} },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const merged = mergeLeases(c.files);
      assert.deepStrictEqual(
        Object.fromEntries([...merged].map(([mac, l]) => [mac, l.origin])),
        c.expect,
      );
      for (const [mac, l] of merged) assert.equal(l.mac, mac);
    });
  }

  it('merges parsed files of different formats', () => {
    const isc = parseLeases(
      'lease 10.0.0.1 { ends epoch 1795125600; binding state active; hardware ethernet 52:54:00:00:00:01; }\n',
      { file: 'dhcpd.leases', now: NOW },
    );
    const dnsmasq = parseLeases(
      [
        '1795129200 52:54:00:00:00:01 10.0.0.7 * *',
        '1795129200 52:54:00:00:00:02 10.0.0.8 * *',
      ].join('\n'),
      { file: 'dnsmasq.leases', now: NOW },
    );
    const merged = mergeLeases([isc.leases, dnsmasq.leases]);
    assert.deepStrictEqual(
      [...merged.values()].map((l) => [l.mac, l.ip, l.origin]),
      [
        ['52:54:00:00:00:01', '10.0.0.7', 'dnsmasq.leases:1'],
        ['52:54:00:00:00:02', '10.0.0.8', 'dnsmasq.leases:2'],
      ],
    );
  });
});
