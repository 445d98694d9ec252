import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPTIONS, resolveConfig, type OptionName } from '../../../src/config/options.js';
import { SiteCache } from '../../../src/load/index.js';
import { createRun, type RunContext, type WarmCache } from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
import type { AppliedCluster } from '../../../src/state/applied.js';
import { silentLogger } from '../../../src/util/log.js';
import { DocumentCache } from '../../../src/validate/index.js';

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
  const run = async (cache: WarmCache | undefined, state: string): Promise<RunContext> => {
    if (applied) {
      const dir = join(tmp, state, 'clusters', applied.cluster);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'applied.json'), JSON.stringify(applied));
    }
    const ctx = createRun({
      site: { kind: 'path', path: site },
      configFor: (s) =>
        resolveConfig(Object.keys(OPTIONS) as OptionName[], { stateDir: join(tmp, state) }, {}, s),
      env: {},
      log: silentLogger(),
      now: () => Date.parse('2026-01-01'),
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
    const cache: WarmCache = { files: new SiteCache(), documents: new DocumentCache() };
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
    ]);
    for (const [what, change] of changes) {
      await change();
      const warm = await run(cache, `warm-${i}`);
      const cold = await run(undefined, `cold-${i++}`);
      if (changesPlan.has(what)) assert.notEqual(cold.plan?.hash, last?.plan?.hash, what);
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
  });
});
