/**
 * The test lab for a person: `up` starts a lab and leaves it running, `down` removes it,
 * `list` shows the labs on this machine. Run with tsx: `tsx test/lab/cli.ts up --hosts 3`.
 */
import { Command, InvalidArgumentError } from 'commander';
import {
  cleanupStaleLabs,
  listLabs,
  startLab,
  stopLabById,
  type Lab,
  type LabSummary,
} from './lab.js';
import { MAX_HOSTS } from './names.js';

function hostCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > MAX_HOSTS) {
    throw new InvalidArgumentError(`an integer from 0 to ${MAX_HOSTS}`);
  }
  return n;
}

function summary(lab: Lab, ms: number): Record<string, unknown> {
  const sshOpts = `-i ${lab.keyPath} -o UserKnownHostsFile=${lab.knownHostsPath}`;
  return {
    id: lab.id,
    startedInMs: ms,
    dir: lab.dir,
    bridge: lab.bridge,
    gatewayIp: lab.gatewayIp,
    isolatedPackages: lab.isolatedPackages,
    leaseFile: lab.leaseFile,
    keyPath: lab.keyPath,
    knownHostsPath: lab.knownHostsPath,
    user: lab.user,
    password: lab.password,
    warnings: lab.warnings,
    hosts: lab.hosts.map((h) => ({
      name: h.name,
      ip: h.ip,
      mac: h.mac,
      netns: h.netns,
      addressing: h.addressing,
      ssh: `ssh ${sshOpts} root@${h.ip}`,
    })),
  };
}

function printHuman(lab: Lab, ms: number): void {
  const s = summary(lab, ms) as { hosts: { name: string; ip: string; mac: string; ssh: string }[] };
  console.log(`lab ${lab.id} up in ${(ms / 1000).toFixed(1)} s: ${lab.hosts.length} hosts`);
  console.log(`  network   ${lab.bridge} ${lab.gatewayIp}/24, leases in ${lab.leaseFile}`);
  for (const h of s.hosts)
    console.log(`  ${h.name.padEnd(4)} ${h.ip.padEnd(15)} ${h.mac}  ${h.ssh}`);
  const first = lab.hosts[0];
  console.log(`  password  ${lab.user} / ${lab.password}`);
  if (first) {
    console.log(
      `            sshpass -p '${lab.password}' ssh -o UserKnownHostsFile=${lab.knownHostsPath} ${lab.user}@${first.ip}`,
    );
  }
  for (const w of lab.warnings) console.log(`  warning   ${w}`);
  console.log(`  stop with  tsx test/lab/cli.ts down --id ${lab.id}`);
}

function printList(labs: LabSummary[]): void {
  if (labs.length === 0) console.log('no labs');
  for (const l of labs) {
    const owner =
      l.ownerPid === null ? 'kept' : `owner pid ${l.ownerPid}${l.stale ? ' (dead)' : ''}`;
    console.log(
      `${l.id.padEnd(7)} ${String(l.hosts).padStart(3)} hosts  ${l.network.padEnd(17)} ${owner}`,
    );
  }
}

const program = new Command('lab').description('bpa SSH test lab (network namespaces)');

program
  .command('up')
  .description('start a lab and leave it running')
  .option('--hosts <n>', 'number of hosts', hostCount, 3)
  .option('--id <id>', 'lab id (1-6 of [a-z0-9]); random by default')
  .option('--no-dhcp', 'static addresses instead of dnsmasq leases')
  .option('--no-authorize-key', "do not pre-install bpa's key for root")
  .option('--isolated-packages', 'give each host its own /etc /usr /var /opt (overlays) for apt')
  .option('--json', 'print the summary as JSON')
  .action(
    async (opts: {
      hosts: number;
      id?: string;
      dhcp: boolean;
      authorizeKey: boolean;
      isolatedPackages?: boolean;
      json?: boolean;
    }) => {
      const t0 = Date.now();
      const lab = await startLab({
        hosts: opts.hosts,
        id: opts.id,
        withDhcp: opts.dhcp,
        authorizeKey: opts.authorizeKey,
        isolatedPackages: opts.isolatedPackages ?? false,
        keep: true,
      });
      const ms = Date.now() - t0;
      if (opts.json) console.log(JSON.stringify(summary(lab, ms), null, 2));
      else printHuman(lab, ms);
    },
  );

program
  .command('down')
  .description('tear down a lab (the only one, --id, or --all)')
  .option('--id <id>', 'the lab to remove')
  .option('--all', 'every lab not owned by a running process')
  .option('--force', 'with --all: also labs owned by a running process (e.g. a test)')
  .action(async (opts: { id?: string; all?: boolean; force?: boolean }) => {
    const t0 = Date.now();
    const stale = await cleanupStaleLabs();
    for (const id of stale) console.log(`removed stale lab ${id}`);
    let targets: string[];
    const labs = listLabs();
    if (opts.id !== undefined) {
      targets = [opts.id];
    } else if (opts.all) {
      const busy = labs.filter((l) => l.ownerPid !== null && !opts.force);
      for (const l of busy) console.log(`kept lab ${l.id}: owned by running process ${l.ownerPid}`);
      targets = labs.filter((l) => !busy.includes(l)).map((l) => l.id);
    } else {
      const kept = labs.filter((l) => l.ownerPid === null);
      if (kept.length > 1) {
        throw new Error(
          `several labs are up (${kept.map((l) => l.id).join(', ')}): use --id or --all`,
        );
      }
      targets = kept.map((l) => l.id);
    }
    for (const id of targets) {
      await stopLabById(id);
      console.log(`lab ${id} down`);
    }
    if (targets.length === 0 && stale.length === 0) console.log('no lab to remove');
    else console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

program
  .command('list')
  .description('list the labs on this machine')
  .option('--json', 'print as JSON')
  .action((opts: { json?: boolean }) => {
    const labs = listLabs();
    if (opts.json) console.log(JSON.stringify(labs, null, 2));
    else printList(labs);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`lab: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
