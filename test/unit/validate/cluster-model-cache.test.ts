import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_LIMITS, SiteCache, loadSite, locateProblems } from '../../../src/load/index.js';
import type { ClusterModel, InventoryDocument } from '../../../src/validate/model.js';
import { DocumentCache, validateSite } from '../../../src/validate/index.js';
import { withDerivedKept } from '../util/derived-kept.js';

const EXAMPLE = fileURLToPath(new URL('../../../sites/example', import.meta.url));

/**
 * Under `bpa serve` a cluster whose documents are the same objects keeps its model object
 * (validate/rules.ts), which lets planning keep what it derived from it.
 */
describe('cluster models: the same object while the cluster documents are the same', () => {
  withDerivedKept();
  let tmp: string;
  let site: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-model-cache-'));
    site = join(tmp, 'site');
    await cp(EXAMPLE, site, { recursive: true });
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });
  const files = new SiteCache();
  const documents = new DocumentCache();
  /** The models and located problems, warm (through the caches) and cold; they must agree. */
  const validate = async (): Promise<{
    clusters: ClusterModel[];
    problems: string[];
    inventory: InventoryDocument[];
  }> => {
    const run = async (warm: boolean) => {
      const loaded = await loadSite(site, DEFAULT_LIMITS, warm ? files : undefined);
      const r = validateSite(loaded, undefined, warm ? documents : undefined);
      const problems = locateProblems(loaded.files, r.problems).map(
        (p) => `${p.code} ${p.file}:${p.line}:${p.column} ${p.message}`,
      );
      return {
        clusters: r.model?.clusters ?? [],
        problems,
        inventory: r.model?.inventory ?? [],
      };
    };
    const warm = await run(true);
    const cold = await run(false);
    assert.deepEqual(warm, cold);
    return warm;
  };
  const edit = async (path: string, from: string, to: string): Promise<void> => {
    const p = join(site, path);
    const text = await readFile(p, 'utf8');
    assert.ok(text.includes(from), `${path} holds ${from}`);
    await writeFile(p, text.replace(from, to));
  };
  const byName = (cs: ClusterModel[], name: string): ClusterModel | undefined =>
    cs.find((c) => c.name === name);

  it('kept, rebuilt when one of its documents or the Site document changes, problems every time', async () => {
    const a = await validate();
    assert.equal(a.clusters.length, 2);
    const b = await validate();
    for (const c of a.clusters) assert.equal(byName(b.clusters, c.name), c, c.name);

    // A 2019 ICN field in cluster-west's Provisioning: its model is new, with a warning.
    await edit('clusters/cluster-west/provisioning.yaml', '\nspec:\n', '\nspec:\n  hostfile: x\n');
    const c = await validate();
    assert.equal(byName(c.clusters, 'cluster-east'), byName(a.clusters, 'cluster-east'));
    assert.notEqual(byName(c.clusters, 'cluster-west'), byName(a.clusters, 'cluster-west'));
    assert.ok(
      c.problems.some((p) => p.startsWith('DEPRECATED_FIELD')),
      c.problems.join('\n'),
    );
    // Kept: the same problem, with its line, again.
    const d = await validate();
    assert.equal(byName(d.clusters, 'cluster-west'), byName(c.clusters, 'cluster-west'));
    assert.deepEqual(d.problems, c.problems);

    // The Site document carries the day-2 settings every cluster's model holds.
    await edit('site.yaml', 'start: "22:00"', 'start: "21:00"');
    const e = await validate();
    for (const m of e.clusters) assert.notEqual(byName(d.clusters, m.name), m, m.name);
    assert.equal(byName(e.clusters, 'cluster-east')?.day2?.windows[0]?.start, '21:00');
  });

  it('the inventory: kept for unchanged hosts, rebuilt with its checks when a MAC changes', async () => {
    await cp(EXAMPLE, site, { recursive: true });
    const a = await validate();
    const node2 = (v: { inventory: InventoryDocument[] }): InventoryDocument | undefined =>
      v.inventory.find((d) => d.kind === 'BareMetalHost' && d.name === 'node-02');
    // A label on node-02 (the whole file is parsed again: every host a new document).
    await edit(
      'inventory/hosts.yaml',
      '    bpa.akraino.org/sriov: "true"\nspec:\n  online: true\n  bootMACAddress: "52:54:00:10:00:02"',
      '    bpa.akraino.org/sriov: "true"\n    rack: r2\nspec:\n  online: true\n  bootMACAddress: "52:54:00:10:00:02"',
    );
    const b = await validate();
    assert.equal(b.inventory.length, a.inventory.length, b.problems.join('\n'));
    assert.notEqual(node2(b), node2(a));
    assert.deepEqual(node2(b)?.value['metadata'], {
      ...(node2(a)?.value['metadata'] as object),
      labels: { site: 'edge-lab-1', 'bpa.akraino.org/sriov': 'true', rack: 'r2' },
    });
    assert.deepEqual(b.problems, a.problems);
    // A MAC of another host: a clash, found warm as cold (validate compares them).
    await edit('inventory/hosts.yaml', 'mac: "52:54:00:10:00:02"', 'mac: "52:54:00:10:00:01"');
    const c = await validate();
    assert.ok(
      c.problems.some((p) => p.startsWith('DUPLICATE_HOST_MAC')),
      c.problems.join('\n'),
    );
    await cp(EXAMPLE, site, { recursive: true });
    const d = await validate();
    assert.deepEqual(d.problems, a.problems);
    assert.ok(node2(d));
    // A broadcast MAC on a NIC whose MAC the boot MAC repeats: the same identity, and a
    // warning, found warm as cold.
    await edit(
      'inventory/hosts.yaml',
      'mac: "52:54:00:10:00:02"\n        ip: 192.0.2.12',
      'mac: "ff:ff:ff:ff:ff:ff"\n        ip: 192.0.2.12',
    );
    const e = await validate();
    assert.deepEqual(
      e.problems.filter((p) => !a.problems.includes(p)).map((p) => p.split(' ')[0]),
      ['UNUSABLE_HOST_MAC'],
    );
  });
});
