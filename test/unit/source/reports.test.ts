import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { parseReport, parseReports } from '../../../src/source/site-source.js';
import { buildInventoryReport } from '../../../src/report/inventory.js';
import type { Host } from '../../../src/observe/types.js';

/** The inventory report of `n` hosts, as bpa writes it (status/inventory.yaml). */
function inventoryReport(n: number): string {
  const hosts: Host[] = Array.from({ length: n }, (_, i) => {
    const mac = `52:54:00:${[(i >> 16) & 255, (i >> 8) & 255, i & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;
    return {
      name: `host-${i}`,
      namespace: 'metal3',
      key: `metal3/host-${i}`,
      bootMac: mac,
      nics: [
        { mac, ips: [`10.${(i >> 8) & 255}.${i & 255}.1`], name: 'eth0', model: '0x8086 0x1572' },
      ],
      macs: [mac],
      cpuCount: 32,
      ramMebibytes: 65536,
      sriov: true,
      qat: false,
      labels: { rack: `r${i % 20}`, 'bpa.akraino.org/sriov': 'true' },
      eligible: i % 7 !== 0,
      ineligibleReason: i % 7 === 0 ? "provisioning state 'ready' (needs provisioned)" : undefined,
      origin: `metal3/host-${i}`,
      hardware: {
        cpu: { arch: 'x86_64', model: 'Xeon Gold 6230', count: 32, clockMegahertz: 2100 },
        ramMebibytes: 65536,
        nics: [{ name: 'eth0', mac, model: '0x8086 0x1572', speedGbps: 10, pxe: true }],
        storage: [{ name: '/dev/sda', type: 'SSD', sizeBytes: 960197124096, rotational: false }],
        systemVendor: { manufacturer: 'Dell Inc.', productName: 'PowerEdge R640' },
      },
    };
  });
  return buildInventoryReport({
    site: 'edge',
    hosts,
    leases: new Map(),
    controller: { flavour: 'kud', prune: false, ipOrder: ['lease', 'inventory'] },
    inventory: `${n} BareMetalHosts from the Kubernetes API`,
    previous: undefined,
    now: '2026-11-28T04:00:00.000Z',
  });
}

describe('previous reports', () => {
  it('read as the YAML 1.2 core schema they are written in: the same data yaml gives', () => {
    const text = inventoryReport(50);
    assert.deepEqual(parseReport(text), parse(text));
    const texts = new Map([
      ['status/inventory.yaml', text],
      ['status/x.yaml', 'a: 2026-11-28T04:00:00Z\nb: yes\nc: 0o17\nd: ~\ne: "007"\n'],
      ['status/bad.yaml', 'a: [\n'],
    ]);
    const parsed = parseReports(texts);
    assert.deepEqual(parsed.get('status/x.yaml'), parse(texts.get('status/x.yaml') as string));
    assert.equal(parsed.has('status/bad.yaml'), false, 'a damaged report is left out');
  });

  it("the inventory of 10,000 hosts is read within a 96 MiB heap (yaml's syntax tree held over 350 MB)", function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'bpa-reports-'));
    const file = join(dir, 'inventory.yaml');
    writeFileSync(file, inventoryReport(10_000));
    // Its own process, with a small heap: the peak of one parse is what is tested.
    const child = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=96',
        '--import',
        'tsx',
        '-e',
        `import('${fileURLToPath(import.meta.url)}'.replace(/reports\\.test\\.ts$/, 'reports-peak.ts'))`,
      ],
      { encoding: 'utf8', env: { ...process.env, REPORT_FILE: file } },
    );
    rmSync(dir, { recursive: true, force: true });
    assert.equal(child.status, 0, child.stderr.slice(-2000));
    assert.match(child.stdout, /^10000 hosts\n$/);
  });
});
