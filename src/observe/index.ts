import { isAbsolute, relative, resolve, sep } from 'node:path';
import { loadSite, locateProblems } from '../load/index.js';
import { StateStore } from '../state/store.js';
import type { AppliedState } from '../state/applied.js';
import type { Problem } from '../util/problem.js';
import { validateInventory } from '../validate/index.js';
import type { InventoryDocument, SiteModel } from '../validate/model.js';
import { hostsFromObjects, type Metal3Object } from './inventory/hosts.js';
import type { LeaseCache } from './leases/lease-cache.js';
import { readLeaseFiles } from './leases/read-lease-files.js';
import type { Host, Lease } from './types.js';
import { ObjectMemo } from '../util/memo.js';
import type { WatchedMetal3Object } from '../source/site-source.js';

export type InventorySpec =
  | { kind: 'embedded'; root: string; directory?: string }
  | { kind: 'directory'; dir: string }
  | {
      kind: 'kubernetes';
      kubeconfig?: string;
      env: NodeJS.ProcessEnv;
      namespaces: string[];
      /** Operator mode: the hosts from the watch's cache, when it covers these namespaces. */
      watched?: (namespaces: readonly string[]) => readonly WatchedMetal3Object[] | undefined;
    };

export interface ObserveOptions {
  inventory: InventorySpec;
  leaseFiles: string[];
  /** The site directory, when the lease files come from the site: they must stay inside it. */
  leaseRoot?: string;
  now: number;
  stateDir: string;
  /** Lease files as last parsed (`bpa serve`): an unchanged file is not parsed again. */
  leaseCache?: LeaseCache;
}

export interface Observations {
  hosts: Host[];
  leases: Map<string, Lease>;
  applied: AppliedState;
  /** Lease and inventory-file problems (warnings mostly). */
  problems: Problem[];
  /** "12 BareMetalHosts from the site", for output. */
  inventory: string;
}

/** Reads the world: inventory, leases and the applied state. */
export async function observe(model: SiteModel, opts: ObserveOptions): Promise<Observations> {
  const problems: Problem[] = [];
  const [objects, leaseResult, applied] = await Promise.all([
    inventoryObjects(model, opts.inventory, problems),
    readLeaseFiles(opts.leaseFiles, opts.now, {
      confineTo: opts.leaseRoot,
      cache: opts.leaseCache,
    }),
    new StateStore(opts.stateDir).readApplied(),
  ]);
  problems.push(...leaseResult.problems);
  const hosts = hostsFromObjects(objects.objects);
  return {
    hosts,
    leases: leaseResult.leases,
    applied,
    problems,
    inventory: `${hosts.length} BareMetalHosts from ${objects.from}`,
  };
}

async function inventoryObjects(
  model: SiteModel,
  spec: InventorySpec,
  problems: Problem[],
): Promise<{ objects: readonly Metal3Object[]; from: string }> {
  switch (spec.kind) {
    case 'embedded': {
      const docs = spec.directory
        ? model.inventory.filter((d) => under(d.ref.file, spec.directory ?? ''))
        : model.inventory;
      return {
        objects: docs.map(toObject),
        from: spec.directory ? `the site's ${spec.directory}/` : 'the site',
      };
    }
    case 'directory': {
      // Not the site: a bad document is left out with a warning, never the whole directory.
      const loaded = await loadSite(spec.dir);
      const result = validateInventory(loaded);
      // Absolute paths: the CLI shows them relative to where it runs, not to the site.
      const located = locateProblems(loaded.files, result.problems).map((p) => ({
        ...p,
        file: p.file === undefined ? undefined : resolve(loaded.root, p.file),
      }));
      problems.push(...located);
      return { objects: result.inventory.map(toObject), from: spec.dir };
    }
    case 'kubernetes': {
      // The Kubernetes client is large: loaded only for this source.
      const [{ listMetal3Objects, checkNamespaces }, { requireKubeConfig }] = await Promise.all([
        import('./inventory/kubernetes.js'),
        import('../kube/kubeconfig.js'),
      ]);
      const kubeConfig = requireKubeConfig(
        { file: spec.kubeconfig, env: spec.env, kubeconfigEnv: true, what: 'the inventory' },
        'pass --kubeconfig, set KUBECONFIG, or run bpa in the cluster',
      );
      const where = spec.namespaces.length
        ? `namespaces ${spec.namespaces.join(', ')}`
        : 'all namespaces';
      const watched = spec.watched?.(spec.namespaces);
      if (watched) {
        await checkNamespaces(kubeConfig, spec.namespaces, watched);
        return { objects: watched, from: `the Kubernetes API (${where}, watched)` };
      }
      return {
        objects: await listMetal3Objects({ kubeConfig, namespaces: spec.namespaces }),
        from: `the Kubernetes API (${where})`,
      };
    }
  }
}

/**
 * Each document's object, kept for as long as its parsed value lives: under `bpa serve` an
 * unchanged file gives the same values (load/cache.ts), so the same objects, which lets
 * hostsFromObjects see at a glance which hosts may have changed.
 */
const objectOf = new ObjectMemo<object, Metal3Object>();

function toObject(d: InventoryDocument): Metal3Object {
  const known = objectOf.get(d.value);
  if (known && known.kind === d.kind && known.origin === d.ref.file) return known;
  const v = d.value as Omit<Metal3Object, 'kind' | 'origin'>;
  const o = {
    kind: d.kind,
    metadata: v.metadata,
    spec: v.spec,
    status: v.status,
    origin: d.ref.file,
  };
  objectOf.set(d.value, o);
  return o;
}

function under(file: string, dir: string): boolean {
  const rel = relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(sep);
}
