import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SLOT_COUNT, dhcpRange, gatewayIp, slotPrefix, staticIp } from '../../lab/names.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const toInt = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
const inRange = (ip: string, cidr: string): boolean => {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
};

/** The lab's addresses: one /24 per slot, all inside the benchmarking range. */
const LAB = '198.18.0.0/15';
/** RFC 5737: documentation only, routed nowhere. */
const DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * The example site and the test lab never share an address: a `serve` or `reconcile` of
 * sites/example cannot reach a lab's hosts (another engineer's, or this run's), and the lab
 * never hands out an address the example names.
 */
describe('address ranges: the example site and the test lab', () => {
  // Network prefixes (a cluster's PodSubnet) are not addresses bpa contacts.
  it('every IPv4 address of sites/example is a documentation address, none in the lab range', () => {
    const found: Array<[string, string]> = [];
    for (const file of filesUnder(join(ROOT, 'sites', 'example'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d./])/g))
        found.push([file.slice(ROOT.length), m[1] ?? '']);
    }
    assert.ok(found.length >= 30, 'the example names its hosts, BMCs and image server');
    for (const [file, ip] of found) {
      assert.ok(!inRange(ip, LAB), `${file}: ${ip} is in the lab's ${LAB}`);
      assert.ok(
        DOCUMENTATION.some((r) => inRange(ip, r)),
        `${file}: ${ip} is not a documentation address (${DOCUMENTATION.join(', ')})`,
      );
    }
  });

  it('every lab address (gateway, static, DHCP) of every slot is inside 198.18.0.0/15', () => {
    for (let slot = 0; slot < SLOT_COUNT; slot++) {
      const [first, last] = dhcpRange(slot);
      for (const ip of [gatewayIp(slot), staticIp(slot, 1), staticIp(slot, 120), first, last]) {
        assert.ok(inRange(ip, LAB), `slot ${slot}: ${ip}`);
        assert.ok(!DOCUMENTATION.some((r) => inRange(ip, r)), `slot ${slot}: ${ip}`);
      }
    }
    assert.equal(slotPrefix(SLOT_COUNT - 1), '198.19.255');
  });
});
