import assert from 'node:assert/strict';
import { readLeaseFiles } from '../../../src/observe/leases/read-lease-files.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';

/** A lease file written by a real dnsmasq, for real DHCP clients in network namespaces. */
describe('leases from a real dnsmasq', function () {
  this.timeout(60_000);
  let lab: Lab | undefined;
  before(async function () {
    const can = canRunLab();
    if (!can.ok) {
      console.log(`    skipped: ${can.reason}`);
      this.skip();
    }
    lab = await startLab({ hosts: 3 });
  });
  after(async () => {
    await lab?.stop();
  });

  it('parses every lease dnsmasq granted: each host MAC maps to the address the host has', async () => {
    if (!lab) return;
    const { leases, problems } = await readLeaseFiles([lab.leaseFile], Date.now());
    assert.deepEqual(problems, []);
    const dhcpHosts = lab.hosts.filter((h) => h.addressing === 'dhcp');
    assert.ok(dhcpHosts.length >= 1, 'at least one host got its address by DHCP');
    for (const h of dhcpHosts) {
      const lease = leases.get(h.mac);
      assert.ok(lease, `a lease for ${h.name} (${h.mac})`);
      assert.equal(lease.ip, h.ip);
      assert.ok((lease.expires ?? Infinity) > Date.now(), 'unexpired');
      assert.match(lease.origin, /dnsmasq\.leases:\d+$/);
    }
  });
});
