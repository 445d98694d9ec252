import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionSettings } from '../../../src/config/execution.js';
import { resolveConfig, OPTIONS, type OptionName } from '../../../src/config/options.js';
import { planSite } from '../../../src/plan/index.js';
import { createRun, type RunContext } from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import { silentLogger } from '../../../src/util/log.js';
import { cluster, host, leasesFor, node } from './plan-fixture.js';

const EXAMPLE = fileURLToPath(new URL('../../../sites/example', import.meta.url));

const SETTINGS: ExecutionSettings = {
  installer: {
    mode: 'local',
    commands: {
      provision: 'installer --cluster {cluster} --plugins {plugins}',
      scale: 'ansible-playbook -i {inventory} scale.yml --limit {nodes}',
      addon: 'ansible-playbook -i {inventory} configure-{plugins}.yml',
      remove: 'ansible-playbook -i {inventory} remove-node.yml -e node={nodes}',
      reset: 'ansible-playbook -i {inventory} reset.yml -e reset_confirmation=yes',
      upgrade: 'ansible-playbook -i {inventory} upgrade-cluster.yml --limit {nodes}',
    },
  },
  ssh: { user: 'root', port: 22 },
};

function planWith(over: { settings?: ExecutionSettings; origin?: string; reason?: string } = {}) {
  const hosts = [host(1), host(2)];
  const leases = leasesFor(hosts);
  if (over.origin) for (const l of leases.values()) l.origin = over.origin;
  return planSite({
    model: {
      clusters: [cluster('c', [node('m', ['master']), node('w', ['worker'])])],
    } as never,
    hosts,
    leases,
    applied: { clusters: new Map() },
    prune: false,
    flavour: 'kud',
    settings: over.settings ?? SETTINGS,
  });
}

describe('plan hash', () => {
  it('leaves out where things were read from: lease file names and line numbers', () => {
    const a = planWith({ origin: '/srv/a/dnsmasq.leases:3' });
    const b = planWith({ origin: '/elsewhere/dnsmasq.leases:17' });
    assert.notEqual(a.clusters[0]?.nodes[0]?.ipSource, b.clusters[0]?.nodes[0]?.ipSource);
    assert.equal(a.hash, b.hash);
  });

  it('covers how bpa acts: installer command, mirror, SSH user and port', () => {
    const base = planWith().hash;
    const variants: ExecutionSettings[] = [
      {
        ...SETTINGS,
        installer: {
          ...SETTINGS.installer,
          commands: { ...SETTINGS.installer.commands, provision: '/opt/kud/installer {cluster}' },
        },
      },
      { ...SETTINGS, packageMirror: 'deb http://mirror.example/ubuntu jammy main' },
      { ...SETTINGS, ssh: { user: 'ubuntu', port: 22 } },
      { ...SETTINGS, ssh: { user: 'root', port: 2222 } },
      { ...SETTINGS, installer: { ...SETTINGS.installer, mode: 'job', image: 'kud:1' } },
    ];
    const hashes = variants.map((settings) => planWith({ settings }).hash);
    for (const h of hashes) assert.notEqual(h, base);
    assert.equal(new Set(hashes).size, hashes.length);
  });

  it('covers the nodes: a changed address changes it', () => {
    const hosts = [host(1), host(2)];
    const leases = leasesFor(hosts);
    const input = {
      model: { clusters: [cluster('c', [node('m', ['master']), node('w', ['worker'])])] } as never,
      hosts,
      applied: { clusters: new Map() },
      prune: false,
      flavour: 'kud' as const,
      settings: SETTINGS,
    };
    const a = planSite({ ...input, leases });
    const moved = new Map(
      [...leases].map(([k, l]) => [k, { ...l, ip: l.ip.replace(/\.1(\d)$/, '.2$1') }]),
    );
    const b = planSite({ ...input, leases: moved });
    assert.notEqual(a.hash, b.hash);
  });
});

describe('plan hash of a whole site (runPlan)', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-hash-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });
  const config = (stateDir: string) => (site: Record<string, unknown> | undefined) =>
    resolveConfig(Object.keys(OPTIONS) as OptionName[], { stateDir }, {}, site);

  it('is the same for the same site in another directory and with lease lines reordered', async () => {
    const one = join(tmp, 'one');
    const two = join(tmp, 'somewhere', 'else', 'two');
    await cp(EXAMPLE, one, { recursive: true });
    await cp(EXAMPLE, two, { recursive: true });
    const leases = join(two, 'leases', 'dnsmasq.leases');
    const lines = (await readFile(leases, 'utf8')).split('\n').filter(Boolean);
    await writeFile(leases, [...lines].reverse().join('\n') + '\n');
    const plan = async (path: string, stateDir: string): Promise<RunContext> => {
      const ctx = createRun({
        site: { kind: 'path', path },
        configFor: config(stateDir),
        env: {},
        log: silentLogger(),
        now: () => Date.parse('2026-01-01'),
      });
      await runSteps(ctx, 'plan');
      return ctx;
    };
    const a = await plan(one, join(tmp, 's1'));
    const b = await plan(two, join(tmp, 's2'));
    assert.ok(a.plan && b.plan);
    assert.equal(a.plan.hash, b.plan.hash);
    // …and the settings that say how bpa acts are in the plan: the Site's SSH user, the
    // flavour's installer command.
    assert.equal(a.plan.settings?.ssh.user, 'ubuntu');
    assert.match(a.plan.settings?.installer.commands.provision ?? '', /^installer --cluster/);
  });
});
