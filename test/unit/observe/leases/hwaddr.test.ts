import { strict as assert } from 'node:assert';
import { classifyHwAddr, type HwAddr } from '../../../../src/observe/leases/hwaddr.js';

describe('observe/leases classifyHwAddr', () => {
  const mac = (m: string): HwAddr => ({ kind: 'mac', mac: m });
  const cases: Array<[string, HwAddr]> = [
    ['52:54:00:aa:bb:cc', mac('52:54:00:aa:bb:cc')],
    ['52:54:00:AA:BB:CC', mac('52:54:00:aa:bb:cc')],
    ['52-54-00-aa-bb-cc', mac('52:54:00:aa:bb:cc')],
    ['525400aabbcc', mac('52:54:00:aa:bb:cc')],
    ['52:54:0:aa:b:cc', mac('52:54:00:aa:0b:cc')], // dhcpd accepts single-digit octets
    ['06-52:54:00:aa:bb', { kind: 'other' }], // dnsmasq type prefix, not a MAC starting 06
    ['20:00:55:04:01:fe:80:00:00:00:00:00:00:00:02:c9:02:00:23:13:92', { kind: 'other' }], // InfiniBand
    ['01-', { kind: 'other' }], // dnsmasq: type only, no address
    ['00112233', { kind: 'other' }],
    ['52:54:00:zz:bb:cc', { kind: 'invalid' }],
    ['52:54:00:aaa:bb:cc', { kind: 'invalid' }],
    ['not-a-mac', { kind: 'invalid' }],
    ['', { kind: 'invalid' }],
  ];
  for (const [raw, expected] of cases) {
    it(JSON.stringify(raw), () => assert.deepStrictEqual(classifyHwAddr(raw), expected));
  }
});
