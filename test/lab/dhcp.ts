import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LabCommandError, run, spawnDetached, tail, waitFor } from './exec.js';
import { dhcpRange } from './names.js';
import type { HostState, LabState } from './state.js';

export const leaseFile = (state: LabState): string => join(state.dir, 'dnsmasq.leases');
const dnsmasqLog = (state: LabState): string => join(state.dir, 'dnsmasq.log');

/** The dnsmasq command line: DHCP only, on the lab bridge only, no system configuration read. */
export function dnsmasqArgs(state: LabState): string[] {
  const [first, last] = dhcpRange(state.slot);
  return [
    '--conf-file=/dev/null',
    '--keep-in-foreground',
    `--interface=${state.bridge}`,
    '--bind-interfaces',
    '--except-interface=lo',
    '--port=0',
    '--no-hosts',
    '--no-resolv',
    `--dhcp-range=${first},${last},255.255.255.0,12h`,
    '--dhcp-authoritative',
    // dnsmasq would otherwise ping each address before offering it, stalling every client ~3 s.
    '--no-ping',
    // No router, no DNS server: lab hosts reach only the lab network.
    '--dhcp-option=3',
    '--dhcp-option=6',
    `--dhcp-leasefile=${leaseFile(state)}`,
    `--pid-file=${join(state.dir, 'dnsmasq.pid')}`,
    `--log-facility=${dnsmasqLog(state)}`,
    '--log-dhcp',
  ];
}

/** Starts dnsmasq on the lab bridge and waits until its DHCP socket is bound. */
export async function startDnsmasq(state: LabState): Promise<number> {
  await writeFile(leaseFile(state), '');
  const proc = spawnDetached('dnsmasq', dnsmasqArgs(state), join(state.dir, 'dnsmasq.err'));
  await waitFor('dnsmasq to bind its DHCP socket', 10_000, () => {
    const exited = proc.exited();
    if (exited !== undefined) {
      const err = readFileSync(join(state.dir, 'dnsmasq.err'), 'utf8');
      throw new Error(`dnsmasq ended (${exited}): ${tail(err)}`);
    }
    const log = existsSync(dnsmasqLog(state)) ? readFileSync(dnsmasqLog(state), 'utf8') : '';
    return log.includes('DHCP, sockets bound') || log.includes('DHCP, IP range') ? true : undefined;
  });
  return proc.pid;
}

/** Script busybox udhcpc runs on lease events: it configures eth0 and records the address. */
export const UDHCPC_SCRIPT = `#!/bin/sh
# Called by busybox udhcpc inside a lab host's network namespace.
case "$1" in
  deconfig)
    ip -4 addr flush dev "$interface" scope global
    ;;
  bound|renew)
    ip -4 addr flush dev "$interface" scope global
    ip addr add "$ip/$mask" dev "$interface"
    echo "$ip" > "$BPA_LAB_IP_FILE"
    ;;
esac
exit 0
`;

export async function writeUdhcpcScript(state: LabState): Promise<string> {
  const path = join(state.dir, 'udhcpc.sh');
  await writeFile(path, UDHCPC_SCRIPT, { mode: 0o755 });
  return path;
}

/**
 * Asks the lab's dnsmasq for a lease from inside the host's namespace. Returns the address,
 * or undefined when no lease came (the caller then falls back to a static address).
 */
export async function acquireLease(state: LabState, host: HostState): Promise<string | undefined> {
  const ipFile = join(host.dir, 'dhcp-ip');
  await rm(ipFile, { force: true });
  const args = ['netns', 'exec', host.netns, 'busybox', 'udhcpc', '-i', 'eth0', '-B', '-q', '-n'];
  args.push(
    '-t',
    '8',
    '-T',
    '1',
    '-s',
    join(state.dir, 'udhcpc.sh'),
    '-x',
    `hostname:${host.name}`,
  );
  try {
    const { stderr } = await run('ip', args, {
      env: { ...process.env, BPA_LAB_IP_FILE: ipFile },
      timeoutMs: 20_000,
    });
    await writeFile(join(host.dir, 'udhcpc.log'), stderr);
  } catch (err) {
    if (err instanceof LabCommandError) {
      await writeFile(join(host.dir, 'udhcpc.log'), err.message);
      return undefined;
    }
    throw err;
  }
  return existsSync(ipFile) ? readFileSync(ipFile, 'utf8').trim() || undefined : undefined;
}
