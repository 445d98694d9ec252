import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveNodeIp } from '../../../src/observe/inventory/ip.js';
import { readLeaseFiles } from '../../../src/observe/leases/read-lease-files.js';
import { hostMac, writeSite } from '../../fakes/site.js';
import { canRunLab } from '../../lab/lab.js';
import { killAndWait, run, spawnDetached, waitFor } from '../../lab/exec.js';
import { host } from '../../unit/plan/plan-fixture.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLIENT6 = join(ROOT, 'test', 'lab', 'dhcpv6-client.mjs');

/** The DHCPv4 client's own MAC, and the MACs two DHCPv6 clients' link-layer DUIDs carry. */
const CLIENT_MAC = '52:54:00:66:00:01';
const LL_MAC = hostMac(1); // a host of the site below
const LLT_MAC = '52:54:00:66:00:03';
/** systemd-networkd's kind of client: a DUID-EN, also sent as its DHCPv4 client id (RFC 4361). */
const NETWORKD_DUID = '00:02:00:00:ab:11:11:22:33:44:55:66:77:88';
/** A DUID-EN nothing in the file ties to a MAC. */
const LONE_DUID = '00:02:00:00:ab:11:99:88:77:66:55:44';

/**
 * A real dnsmasq serving DHCPv4 and DHCPv6 on a veth pair between two network namespaces of
 * their own (nothing in the machine's namespace), and real requests: busybox udhcpc for DHCPv4
 * with an RFC 4361 client identifier, a small DHCPv6 client (test/lab/dhcpv6-client.mjs) for
 * several DUIDs. bpa reads the lease file dnsmasq wrote.
 */
describe('DHCPv6 leases from a real dnsmasq', function () {
  this.timeout(60_000);
  const id = randomBytes(3).toString('hex');
  const server = `bpa6-${id}-s`;
  const client = `bpa6-${id}-c`;
  let dir = '';
  let dnsmasqPid: number | undefined;
  const namespaces: string[] = [];
  const granted = new Map<string, string>();
  let v4 = '';

  before(async function () {
    const can = canRunLab();
    if (!can.ok) {
      console.log(`    skipped: ${can.reason}`);
      this.skip();
    }
    dir = await mkdtemp(join(tmpdir(), 'bpa-dhcpv6-'));
    const ip = (...args: string[]) => run('ip', args);
    const inNs = (ns: string, cmd: string, ...args: string[]) =>
      run('ip', ['netns', 'exec', ns, cmd, ...args], { timeoutMs: 30_000 });
    for (const ns of [server, client]) {
      await ip('netns', 'add', ns);
      namespaces.push(ns);
    }
    await ip('link', 'add', `b6${id}s`, 'type', 'veth', 'peer', 'name', `b6${id}c`);
    for (const [ns, end] of [
      [server, `b6${id}s`],
      [client, `b6${id}c`],
    ] as const) {
      await ip('link', 'set', end, 'netns', ns);
      await ip('-n', ns, 'link', 'set', end, 'name', 'eth0');
      // No duplicate address detection: the link-local address is usable at once.
      await inNs(ns, 'sysctl', '-qw', 'net.ipv6.conf.eth0.accept_dad=0');
    }
    await ip('-n', client, 'link', 'set', 'eth0', 'address', CLIENT_MAC);
    await ip('-n', server, 'addr', 'add', 'fd00:b6a::1/64', 'dev', 'eth0', 'nodad');
    await ip('-n', server, 'addr', 'add', '198.18.254.1/24', 'dev', 'eth0');
    for (const ns of [server, client]) await ip('-n', ns, 'link', 'set', 'eth0', 'up');

    const log = join(dir, 'dnsmasq.log');
    const proc = spawnDetached(
      'ip',
      [
        ...['netns', 'exec', server, 'dnsmasq', '--conf-file=/dev/null', '--keep-in-foreground'],
        ...['--interface=eth0', '--bind-interfaces', '--port=0', '--no-hosts', '--no-resolv'],
        '--dhcp-range=198.18.254.100,198.18.254.200,255.255.255.0,12h',
        '--dhcp-range=fd00:b6a::100,fd00:b6a::1ff,64,12h',
        ...['--dhcp-authoritative', '--no-ping'],
        `--dhcp-leasefile=${join(dir, 'dnsmasq.leases')}`,
        `--log-facility=${log}`,
        '--log-dhcp',
      ],
      join(dir, 'dnsmasq.err'),
    );
    dnsmasqPid = proc.pid;
    await waitFor('dnsmasq to bind its DHCP sockets', 10_000, () => {
      const exited = proc.exited();
      if (exited) throw new Error(`dnsmasq ended (${exited})`);
      const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
      return text.includes('DHCPv6') ? true : undefined;
    });

    const script = join(dir, 'udhcpc.sh');
    await writeFile(
      script,
      '#!/bin/sh\n[ "$1" = bound ] && echo "$ip" > "$BPA_V4_FILE"\nexit 0\n',
      {
        mode: 0o755,
      },
    );
    await run(
      'ip',
      [
        ...['netns', 'exec', client, 'busybox', 'udhcpc', '-i', 'eth0', '-q', '-n'],
        ...['-t', '8', '-T', '1', '-s', script, '-x', 'hostname:networkd'],
        // RFC 4361: type 255, IAID 1, then the DUID.
        ...['-x', `0x3d:ff00000001${NETWORKD_DUID.replace(/:/g, '')}`],
      ],
      { env: { ...process.env, BPA_V4_FILE: join(dir, 'v4') }, timeoutMs: 20_000 },
    );
    v4 = readFileSync(join(dir, 'v4'), 'utf8').trim();
    const out = await inNs(
      client,
      process.execPath,
      CLIENT6,
      'eth0',
      `1=00:03:00:01:${LL_MAC}`,
      `2=${NETWORKD_DUID}`,
      `3=${LONE_DUID}`,
      `4=00:01:00:01:2d:95:ca:34:${LLT_MAC}`,
    );
    for (const line of out.stdout.trim().split('\n')) {
      const [iaid, address] = line.split(' ');
      granted.set(iaid ?? '', address ?? '');
    }
    const leases = join(dir, 'dnsmasq.leases');
    await waitFor('dnsmasq to write every lease', 10_000, () => {
      const text = readFileSync(leases, 'utf8');
      return [...granted.values()].every((a) => text.includes(` ${a} `)) ? true : undefined;
    });
  });

  after(async () => {
    if (dnsmasqPid !== undefined) await killAndWait([dnsmasqPid]);
    for (const ns of namespaces) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('ties each DHCPv6 lease to a MAC by its DUID, and says why the one it cannot tie is not used', async () => {
    const file = join(dir, 'dnsmasq.leases');
    const text = readFileSync(file, 'utf8');
    assert.match(text, /^duid [0-9a-f:]+$/m, `dnsmasq wrote both sections:\n${text}`);
    const { leases, problems } = await readLeaseFiles([file], Date.now());
    // The DHCPv4 client's MAC keeps its IPv4 lease, its DHCPv6 one (DUID-EN, tied through
    // its client id) being the second choice; the link-layer DUIDs' MACs get their address.
    assert.equal(leases.get(CLIENT_MAC)?.ip, v4);
    assert.equal(leases.get(LL_MAC)?.ip, granted.get('1'));
    assert.equal(leases.get(LLT_MAC)?.ip, granted.get('4'));
    assert.equal(leases.size, 3, JSON.stringify([...leases.values()]));
    const lone = granted.get('3') ?? '?';
    const line = text.split('\n').findIndex((l) => l.includes(` ${lone} `)) + 1;
    assert.deepEqual(
      problems.map((p) => [p.code, p.file, p.line]),
      [['LEASE_IPV6_UNUSED', file, line]],
    );
    assert.match(
      problems[0]?.message ?? '',
      new RegExp(`^DHCPv6 lease of ${lone} not used: its DUID is DUID-EN \\(type 2\\)`),
    );
    // A host whose only address is that DHCPv6 lease is reached there.
    const h = host(2, { bootMac: LL_MAC, nics: [{ mac: LL_MAC, ips: [] }] });
    assert.equal(resolveNodeIp(h, leases).resolved?.ip, granted.get('1'));
  });

  it('bpa plan shows the warning beside the plan, naming the lease file and line', async function () {
    if (!existsSync(join(ROOT, 'dist'))) this.skip();
    const site = join(dir, 'site');
    await writeSite(site, { nodes: [{ name: 'master-1', roles: ['master'], host: 1 }] });
    const leases = join(dir, 'dnsmasq.leases');
    const r = await new Promise<{ stdout: string; stderr: string }>((resolve) =>
      execFile(
        join(ROOT, 'bin', 'bpa'),
        ['plan', site, '--leases', leases, '--state', join(dir, 'state')],
        { timeout: 30_000, env: { ...process.env, BPA_STATE_DIR: '' } },
        (_err, stdout, stderr) => resolve({ stdout, stderr }),
      ),
    );
    const lone = granted.get('3') ?? '?';
    const out = r.stdout + r.stderr;
    assert.match(out, /LEASE_IPV6_UNUSED/, out);
    assert.match(out, new RegExp(`DHCPv6 lease of ${lone} not used`), out);
    assert.match(out, /dnsmasq\.leases:\d+/, out);
  });
});
