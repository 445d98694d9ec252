import assert from 'node:assert/strict';
import {
  cp,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPTIONS, resolveConfig, type OptionName } from '../../../src/config/options.js';
import {
  createRun,
  warmCache,
  type RunContext,
  type WarmCache,
} from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import type { AppliedCluster } from '../../../src/state/applied.js';
import { writeSuspensions, type Suspensions } from '../../../src/state/suspensions.js';
import { silentLogger } from '../../../src/util/log.js';

const EXAMPLE = fileURLToPath(new URL('../../../sites/example', import.meta.url));

/**
 * The warm path of `bpa serve` (parsed files and per-document checks kept between runs) must
 * be invisible: after every change, the same problems with the same file:line and the same
 * plan as a run that starts from nothing.
 */
describe('reconcile steps with the warm cache: the same results as a cold run', () => {
  let tmp: string;
  let site: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-warm-'));
    site = join(tmp, 'site');
    await cp(EXAMPLE, site, { recursive: true });
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** What the state directory of every run holds as applied (the same for warm and cold). */
  let applied: AppliedCluster | undefined;
  /** Clusters suspended through serve's API, in the state directory of every run. */
  let suspended: Suspensions | undefined;
  /** The clock of every run: Thursday 01:00 in Berlin, outside the example's windows. */
  let clock = Date.parse('2026-01-01');
  const run = async (cache: WarmCache | undefined, state: string): Promise<RunContext> => {
    if (applied) {
      const dir = join(tmp, state, 'clusters', applied.cluster);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'applied.json'), JSON.stringify(applied));
    }
    if (suspended) await writeSuspensions(join(tmp, state), suspended);
    const ctx = createRun({
      site: { kind: 'path', path: site },
      configFor: (s) =>
        resolveConfig(Object.keys(OPTIONS) as OptionName[], { stateDir: join(tmp, state) }, {}, s),
      env: {},
      log: silentLogger(),
      now: () => clock,
      cache,
    });
    await runSteps(ctx, 'plan');
    return ctx;
  };
  const edit = async (path: string, from: string, to: string): Promise<void> => {
    const p = join(site, path);
    const text = await readFile(p, 'utf8');
    assert.ok(text.includes(from), `${path} holds ${from}`);
    await writeFile(p, text.replace(from, to));
  };

  /** cluster-east as running, on the nodes, hosts and addresses of `ctx`'s plan. */
  const appliedFrom = (ctx: RunContext): AppliedCluster => {
    const east = ctx.plan?.clusters.find((c) => c.cluster === 'cluster-east');
    assert.ok(east && east.nodes.length, 'cluster-east is planned');
    return {
      cluster: 'cluster-east',
      appliedAt: '2026-01-01T00:00:00Z',
      flavour: east.flavour,
      podSubnet: east.podSubnet ?? null,
      nodes: east.nodes.map((n) => ({
        name: n.name,
        roles: [...n.roles],
        host: n.host,
        mac: n.mac,
        ip: n.ip,
      })),
      plugins: ['onap4k8s'],
      packages: { master: [], worker: [] },
    };
  };

  it('over a series of changes: problems, positions and the plan hash as a cold run', async () => {
    const cache = warmCache();
    /** The address of a node placed from a lease in the last plan, and its lease line. */
    const leased = async (): Promise<{ ip: string; line: string }> => {
      const node = last?.plan?.clusters
        .flatMap((c) => c.nodes)
        .find((n) => n.ipSource.startsWith('lease'));
      assert.ok(node, 'a node addressed by its lease');
      const text = await readFile(join(site, 'leases/dnsmasq.leases'), 'utf8');
      const line = text.split('\n').find((l) => l.includes(` ${node.ip} `));
      assert.ok(line, `a lease line for ${node.ip}`);
      return { ip: node.ip, line };
    };
    const changes: Array<[string, () => Promise<void>]> = [
      ['nothing', async () => {}],
      [
        'a duplicate MAC',
        () => edit('inventory/hosts.yaml', '52:54:00:10:00:02', '52:54:00:10:00:01'),
      ],
      [
        'the MAC back',
        () => cp(join(EXAMPLE, 'inventory/hosts.yaml'), join(site, 'inventory/hosts.yaml')),
      ],
      ['a schema error', () => edit('clusters/cluster-west/software.yaml', '- tmux', '- {a: 1}')],
      ['fixed', () => edit('clusters/cluster-west/software.yaml', '- {a: 1}', '- tmux')],
      [
        'a requirement',
        () => edit('clusters/cluster-east/provisioning.yaml', 'cpu: 24', 'cpu: 20'),
      ],
      ['a cluster removed', () => rm(join(site, 'clusters/cluster-west'), { recursive: true })],
      ['a YAML error', () => writeFile(join(site, 'clusters/broken.yaml'), 'kind: [\n')],
      [
        'restored',
        async () => {
          await rm(join(site, 'clusters/broken.yaml'));
          await cp(join(EXAMPLE, 'clusters'), join(site, 'clusters'), { recursive: true });
        },
      ],
      [
        'one cluster changed',
        () => edit('clusters/cluster-west/software.yaml', '- curl', '- curl\n    - jq'),
      ],
      ["a host's hardware", () => edit('inventory/hosts.yaml', 'count: 32', 'count: 4')],
      [
        'the hardware back',
        () => cp(join(EXAMPLE, 'inventory/hosts.yaml'), join(site, 'inventory/hosts.yaml')),
      ],
      [
        'a lease',
        async () => {
          // The address of a placed node, from its lease.
          const node = last?.plan?.clusters
            .flatMap((c) => c.nodes)
            .find((n) => n.ipSource.startsWith('lease'));
          assert.ok(node, 'a node addressed by its lease');
          await edit(
            'leases/dnsmasq.leases',
            ` ${node.ip} `,
            ` ${node.ip.replace(/\d+$/, '250')} `,
          );
        },
      ],
      [
        'the applied state',
        async () => {
          applied = appliedFrom(last as RunContext);
        },
      ],
      [
        'the applied state changed',
        async () => {
          applied = { ...(applied as AppliedCluster), plugins: [], podSubnet: '10.244.0.0/18' };
        },
      ],
      [
        'a lease file replaced by one of the same size and time',
        async () => {
          const file = join(site, 'leases/dnsmasq.leases');
          const { ip } = await leased();
          const last = ip.at(-1) === '7' ? '8' : '7';
          const text = await readFile(file, 'utf8');
          const before = await stat(file);
          await writeFile(`${file}.new`, text.replace(` ${ip} `, ` ${ip.slice(0, -1)}${last} `));
          await utimes(`${file}.new`, before.atime, before.mtime);
          await rename(`${file}.new`, file);
        },
      ],
      ['the Site settings', () => edit('site.yaml', 'user: ubuntu', 'user: admin')],
      [
        'the clock into a maintenance window',
        async () => {
          clock = Date.parse('2026-01-03T12:00:00Z');
        },
      ],
      [
        'a suspension',
        async () => {
          suspended = { 'cluster-east': { since: '2026-01-03T11:00:00Z', reason: 'test' } };
        },
      ],
      [
        'resumed',
        async () => {
          suspended = {};
        },
      ],
      [
        'a lease that ends in an hour',
        async () => {
          const { line } = await leased();
          const ends = String(Math.floor(clock / 1000) + 3600);
          await edit('leases/dnsmasq.leases', line, line.replace(/^\d+/, ends));
        },
      ],
      [
        'the clock past its end',
        async () => {
          clock += 2 * 3_600_000;
        },
      ],
    ];
    let i = 0;
    const seenCodes = new Set<string>();
    let plans = 0;
    let last: RunContext | undefined;
    // Each of these changes the plan: a cache that kept a cluster's old result would show.
    const changesPlan = new Set([
      'one cluster changed',
      "a host's hardware",
      'the hardware back',
      'a lease',
      'the applied state',
      'the applied state changed',
      'a lease file replaced by one of the same size and time',
      'the Site settings',
    ]);
    // The lease ended: the node's address now comes from the inventory (the same address).
    const changesSource = new Set(['the clock past its end']);
    // These change only how the plan is gated (never hashed): kept clusters, gated anew.
    const changesGate = new Set(['the clock into a maintenance window', 'a suspension', 'resumed']);
    let reused = 0;
    for (const [what, change] of changes) {
      await change();
      const warm = await run(cache, `warm-${i}`);
      const cold = await run(undefined, `cold-${i++}`);
      if (changesPlan.has(what)) assert.notEqual(cold.plan?.hash, last?.plan?.hash, what);
      if (changesSource.has(what))
        assert.notDeepEqual(
          cold.plan?.clusters.map((c) => c.nodes.map((n) => n.ipSource)),
          last?.plan?.clusters.map((c) => c.nodes.map((n) => n.ipSource)),
          what,
        );
      if (changesGate.has(what)) {
        assert.equal(cold.plan?.hash, last?.plan?.hash, what);
        assert.notDeepEqual(
          cold.plan?.clusters.map((c) => c.gate),
          last?.plan?.clusters.map((c) => c.gate),
          what,
        );
        assert.equal(cache.plan.reused, cold.plan?.clusters.length, `${what}: clusters kept`);
      }
      reused += cache.plan.reused;
      last = cold;
      assert.deepEqual(warm.validation, cold.validation, what);
      assert.deepEqual(warm.problems, cold.problems, what);
      assert.equal(warm.plan?.hash, cold.plan?.hash, what);
      assert.deepEqual(
        JSON.parse(JSON.stringify(warm.plan ?? null)),
        JSON.parse(JSON.stringify(cold.plan ?? null)),
        what,
      );
      for (const p of warm.validation) seenCodes.add(p.code);
      if (warm.plan) plans++;
      // Only what changed was parsed (a first run parses everything).
      if (what === 'a requirement') assert.equal(cache.files.counts.parsed, 1);
      if (what === 'nothing') assert.equal(cache.files.counts.parsed, 8);
    }
    // The changes did produce problems with positions, and plans.
    for (const code of ['DUPLICATE_HOST_MAC', 'WRONG_TYPE', 'YAML_SYNTAX'])
      assert.ok(seenCodes.has(code), `${code} in ${[...seenCodes].join()}`);
    assert.ok(plans >= 5, `${plans} plans`);
    assert.ok(reused > 10, `${reused} cluster plans kept`);
    assert.ok(cache.leases.parses < plans, `${cache.leases.parses} lease parses`);
  });
});
