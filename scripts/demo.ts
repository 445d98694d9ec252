/**
 * npm run demo: bpa following a site repository, end to end, on this machine.
 *
 * As root it starts test hosts (network namespaces with sshd and real DHCP leases), a local
 * apt repository, and a git server holding sites/example (its hosts' MACs replaced by the
 * test hosts'); runs `bpa serve` against the repository; pushes a change as a person would
 * (a worker added, a package version bumped, a signed webhook); and shows the status commits
 * with `git log`. Everything it started is stopped at the end. Without root it shows
 * `bpa plan sites/example` instead, and says why.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGitServer } from '../test/fakes/git-server.js';
import { startAptRepo } from '../test/lab/apt-repo.js';
import { canRunLab, startLab } from '../test/lab/lab.js';
import { readTree } from '../test/fakes/tree.js';
import { sendPush } from '../test/fakes/webhook.js';
import { demoLog } from './demo-log.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BPA = join(ROOT, 'bin', 'bpa');
const REFERENCE = join(ROOT, 'installer', 'reference', 'run.sh');
const SECRET = 'demo-webhook-secret';
const say = (text: string): void => console.log(`\n\x1b[1m== ${text}\x1b[0m`);

if (process.getuid?.() !== 0) {
  console.log(
    'The demo starts test hosts in network namespaces, which needs root; showing `bpa plan sites/example` instead.\n',
  );
  const r = spawn(BPA, ['plan', 'sites/example'], { cwd: ROOT, stdio: 'inherit' });
  r.on('exit', (code) => process.exit(code === 2 ? 0 : (code ?? 1)));
} else {
  await demo();
}

async function demo(): Promise<void> {
  execFileSync('bash', [join(ROOT, 'scripts', 'install-system-deps.sh')], { stdio: 'inherit' });
  const can = canRunLab({ isolatedPackages: true });
  if (!can.ok) throw new Error(`cannot start the test hosts: ${can.reason}`);
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-demo-'));
  const cleanup: Array<() => Promise<unknown>> = [
    async () => rm(tmp, { recursive: true, force: true }),
  ];
  try {
    say('Starting 10 test hosts (sshd, DHCP lease, own package state)');
    const lab = await startLab({ hosts: 10, isolatedPackages: true });
    cleanup.unshift(() => lab.stop());
    for (const h of lab.hosts) console.log(`  ${h.name}  ${h.mac}  ${h.ip}`);

    say('A local apt repository for the nodes (they have no internet)');
    const debs = [
      ['curl', '1.0-demo1'],
      ['htop', '1.0-demo1'],
      ['ethtool', '1.0-demo1'],
      ['tmux', '1.0-demo1'],
      ['jq', '1.6-2.1ubuntu3'],
      ['jq', '1.7.1-3'],
    ].map(([name, version]) => ({ name: name!, version: version! }));
    const repo = await startAptRepo(lab, debs);
    cleanup.unshift(() => repo.stop());
    console.log(`  ${repo.sourceLine}`);

    say('A git server holding sites/example, with the test hosts in its inventory');
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example'), site, { recursive: true });
    await rewriteSite(
      site,
      lab.hosts.map((h) => h.mac),
      repo.sourceLine,
    );
    const git = await startGitServer();
    cleanup.unshift(() => git.stop());
    const url = await git.createRepo('edge-site', { files: await readTree(site, 'site') });
    console.log(`  ${url}`);

    say('bpa serve, following the repository');
    await writeFile(join(tmp, 'webhook-secret'), SECRET, { mode: 0o600 });
    const serve = spawn(
      BPA,
      [
        'serve',
        '--repo',
        url,
        '--path',
        'site',
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1m',
        '--webhook-secret-file',
        join(tmp, 'webhook-secret'),
        '--state',
        join(tmp, 'state'),
        '--leases',
        lab.leaseFile,
        '--ssh-key',
        lab.keyPath,
        '--ssh-user',
        'root',
        '--installer-command',
        `${REFERENCE} cluster {clusterDir} {inventory}`,
        '--scale-command',
        `${REFERENCE} scale {clusterDir} {inventory} {nodes}`,
        '--addon-command',
        `${REFERENCE} addon {clusterDir} {inventory} {plugins}`,
        '--remove-command',
        `${REFERENCE} remove {clusterDir} {inventory} {nodes}`,
        // The demo's local apt repository is unsigned ([trusted=yes]): only the operator may
        // let a site use such a mirror.
        '--allow-site-commands',
      ],
      { stdio: ['ignore', 'inherit', 'pipe'] },
    );
    cleanup.unshift(async () => {
      if (serve.exitCode === null) {
        serve.kill('SIGTERM');
        await new Promise((r) => serve.once('exit', r));
      }
    });
    let log = '';
    serve.stderr?.on('data', (d: Buffer) => {
      log += d.toString();
      for (const line of d.toString().split('\n')) if (line) console.log(`  ${summarizeLog(line)}`);
    });
    const api = await until(async () => /"url":"(http:\/\/[^"]+)"/.exec(log)?.[1], 30_000);
    await until(
      async () => ((await fetch(`${api}/readyz`)).status === 200 ? true : undefined),
      600_000,
    );
    await showLog(git, 'after the first reconcile');

    say('A person pushes a change: a worker added to cluster-east, jq bumped to 1.7.1-3');
    const prov = join(site, 'clusters', 'cluster-east', 'provisioning.yaml');
    const soft = join(site, 'clusters', 'cluster-east', 'software.yaml');
    const provText = await readFile(prov, 'utf8');
    const withWorker = provText.replace(
      /( {2}workers:\n)/,
      '$1    - worker-3:\n        cpu: 8\n        memory: 16Gi\n',
    );
    await writeFile(prov, withWorker);
    await writeFile(soft, (await readFile(soft, 'utf8')).replace('"1.6-2.1ubuntu3"', '"1.7.1-3"'));
    await git.commitAs(
      'edge-site',
      {
        'site/clusters/cluster-east/provisioning.yaml': withWorker,
        'site/clusters/cluster-east/software.yaml': await readFile(soft, 'utf8'),
      },
      'cluster-east: add worker-3, jq 1.7.1-3',
    );
    const hook = await sendPush(api, SECRET);
    console.log(`  webhook: HTTP ${hook.status}`);
    await until(
      async () =>
        (await git.log('edge-site', 'main'))[0]?.subject.includes('add-nodes') ? true : undefined,
      600_000,
    );
    await showLog(git, 'after the change');
    const status = await git.readFile('edge-site', 'main', 'site/status/cluster-east.yaml');
    say('site/status/cluster-east.yaml');
    console.log(status);
  } finally {
    say('Cleaning up');
    for (const step of cleanup)
      await step().catch((err: unknown) => console.error(`  cleanup: ${String(err)}`));
    console.log('  done');
  }
}

/** Replaces each eligible example host's boot MAC with a test host's MAC, and points apt at the local repository. */
async function rewriteSite(site: string, macs: string[], sourceLine: string): Promise<void> {
  const inventory = join(site, 'inventory', 'hosts.yaml');
  const text = await readFile(inventory, 'utf8');
  const boot = [...text.matchAll(/bootMACAddress: "([0-9a-f:]+)"/g)].map((m) => m[1]!);
  const mapping = new Map(boot.map((mac, i) => [mac, macs[i]!]));
  for (const file of await listYaml(site)) {
    let t = await readFile(file, 'utf8');
    for (const [from, to] of mapping) t = t.split(from).join(to);
    if (file.endsWith('site.yaml'))
      t = t
        .replace(/# packageMirror: .*/, `packageMirror: "${sourceLine}"`)
        // The example's windows are evenings and weekends: the demo's is open all day, so that
        // the change it pushes is applied now rather than deferred to the next opening.
        .replace(
          /^( {2})maintenanceWindows:\n(?:\1 {2}.*\n)+/m,
          '$1maintenanceWindows:\n$1  - days: [mon, tue, wed, thu, fri, sat, sun]\n$1    start: "00:00"\n$1    end: "24:00"\n$1    timezone: UTC\n',
        );
    await writeFile(file, t);
  }
}

async function listYaml(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true, recursive: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.yaml'))
    .map((e) => join(e.parentPath, e.name));
}

async function showLog(
  git: Awaited<ReturnType<typeof startGitServer>>,
  when: string,
): Promise<void> {
  say(`git log ${when}`);
  const clone = await mkdtemp(join(tmpdir(), 'bpa-demo-clone-'));
  try {
    await run('git', ['clone', '-q', git.repoUrl('edge-site'), clone]);
    console.log(await demoLog(clone));
  } finally {
    await rm(clone, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
}

function summarizeLog(line: string): string {
  try {
    const rec = JSON.parse(line) as Record<string, unknown>;
    const ctx = [rec['cluster'], rec['action'], rec['step']].filter(Boolean).join(' ');
    return `bpa: ${ctx ? `[${ctx}] ` : ''}${String(rec['msg'] ?? '')}`;
  } catch {
    return line;
  }
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('the demo timed out waiting for bpa');
    await new Promise((r) => setTimeout(r, 250));
  }
}
