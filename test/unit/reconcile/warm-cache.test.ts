import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPTIONS, resolveConfig, type OptionName } from '../../../src/config/options.js';
import { SiteCache } from '../../../src/load/index.js';
import { createRun, type RunContext, type WarmCache } from '../../../src/reconcile/context.js';
import { runSteps } from '../../../src/reconcile/steps.js';
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

  const run = async (cache: WarmCache | undefined, state: string): Promise<RunContext> => {
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
    ];
    let i = 0;
    const seenCodes = new Set<string>();
    let plans = 0;
    for (const [what, change] of changes) {
      await change();
      const warm = await run(cache, `warm-${i}`);
      const cold = await run(undefined, `cold-${i++}`);
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
