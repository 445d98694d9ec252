/**
 * Operator mode: deleting a cluster's object never surprises. Once bpa has provisioned
 * anything for a cluster, the object that stands for it (its Cluster, or a Provisioning no
 * Cluster names) carries the finalizer `bpa.akraino.org/cluster`, so that its deletion waits
 * for bpa:
 *
 * - `spec.deletionPolicy: Orphan` (the default): bpa forgets the cluster's applied state; its
 *   nodes keep running and its kubeconfig Secret stays. The finalizer is removed at once.
 * - `Delete`: the cluster is no longer in the site, so the plan removes it (remove-cluster:
 *   the installer's reset of every node, then bpa forgets it) — only when pruning is allowed,
 *   as in git mode; once it is forgotten, bpa deletes the kubeconfig Secret and the node
 *   ConfigMap and removes the finalizer. A failed reset holds the deletion (Stalled). Without pruning the
 *   deletion waits, saying why; removing the finalizer by hand (docs/gitops.md) orphans it.
 *
 * A failure here is logged and tried again at the next reconcile; it never fails the run.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/options.js';
import { requireKubeConfig } from '../kube/kubeconfig.js';
import type { SiteObjectRef, SiteSource } from '../source/site-source.js';
import { StateStore } from '../state/store.js';
import { messageOf } from '../util/errors.js';
import type { RunContext } from './context.js';

export const CLUSTER_FINALIZER = 'bpa.akraino.org/cluster';

/** What deletion needs of an operator-mode source. */
export type Finalizing = Required<Pick<SiteSource, 'siteObjects' | 'setFinalizers'>> &
  Pick<SiteSource, 'setDeletionStalled'>;

/** The cluster an object belongs to: its `cluster` label, else its name (as validate reads it). */
export function clusterOf(ref: SiteObjectRef): string {
  return ref.labels['cluster'] ?? ref.name;
}

/** Per cluster, the live object that stands for it: its Cluster, else a Provisioning no Cluster names. */
export function standingObjects(objects: readonly SiteObjectRef[]): Map<string, SiteObjectRef> {
  const out = new Map<string, SiteObjectRef>();
  const live = objects.filter((o) => !o.deletionTimestamp);
  const named = new Set(
    live.filter((o) => o.kind === 'Cluster').map((o) => String(o.spec['provisioningCR'] ?? '')),
  );
  for (const o of live) if (o.kind === 'Cluster') out.set(clusterOf(o), o);
  for (const o of live)
    if (o.kind === 'Provisioning' && !named.has(o.name) && !out.has(clusterOf(o)))
      out.set(clusterOf(o), o);
  return out;
}

function deleting(objects: readonly SiteObjectRef[]): SiteObjectRef[] {
  return objects.filter(
    (o) =>
      o.deletionTimestamp !== undefined &&
      o.finalizers.includes(CLUSTER_FINALIZER) &&
      (o.kind === 'Cluster' || o.kind === 'Provisioning'),
  );
}

function policyOf(ref: SiteObjectRef): 'Orphan' | 'Delete' {
  return ref.spec['deletionPolicy'] === 'Delete' ? 'Delete' : 'Orphan';
}

/**
 * Before the plan, under the state lock: orphaned clusters are forgotten (so that no plan
 * removes their nodes), and an object whose cluster lives on in other objects is let go.
 */
export async function settleDeletions(
  ctx: RunContext,
  source: Finalizing,
  cfg: Config,
): Promise<void> {
  // A cluster blocked by an error in its objects is still in the site.
  const inSite = new Set([
    ...(ctx.model?.clusters.map((c) => c.name) ?? []),
    ...(ctx.blocked?.clusters ?? []),
  ]);
  const store = new StateStore(cfg.stateDir);
  const held = new Set(deleting(source.siteObjects()).map(clusterOf));
  // A cluster whose objects are gone without bpa's finalizer (removed by hand, or deleted
  // before bpa provisioned anything) is orphaned: forgotten, never removed.
  for (const cluster of (await store.readApplied()).clusters.keys()) {
    if (inSite.has(cluster) || held.has(cluster)) continue;
    await attempt(ctx.log.child({ cluster }), async () => {
      await forget(store, cluster);
      ctx.log.info(
        { cluster },
        'the objects of the cluster are gone without its finalizer: bpa forgot it; its nodes keep running',
      );
    });
  }
  for (const ref of deleting(source.siteObjects())) {
    const cluster = clusterOf(ref);
    const log = ctx.log.child({ object: `${ref.kind}/${ref.name}`, cluster });
    await attempt(log, async () => {
      if (inSite.has(cluster)) {
        await release(source, ref);
        log.info('object deleted; its cluster lives on in the other objects of the site');
        return;
      }
      if (policyOf(ref) === 'Orphan') {
        await forget(store, cluster);
        await release(source, ref);
        log.info(
          'cluster deleted with deletionPolicy Orphan: bpa forgot it; its nodes keep running and its kubeconfig Secret stays',
        );
        return;
      }
      const applied = await store.readCluster(cluster);
      if (applied?.nodes.length && !cfg.prune)
        log.warn(
          'cluster deleted with deletionPolicy Delete, but pruning is not allowed: its nodes stay and the deletion waits; run bpa with --prune, or remove the finalizer bpa.akraino.org/cluster by hand to orphan the cluster',
        );
    });
  }
}

/**
 * After the apply: a `Delete` whose nodes are all removed is finished (Secret and ConfigMap
 * deleted, the cluster forgotten, the finalizer removed), and every cluster bpa has applied
 * anything to gets the finalizer on the object that stands for it.
 */
export async function finishDeletions(
  ctx: RunContext,
  source: Finalizing,
  cfg: Config,
): Promise<void> {
  const store = new StateStore(cfg.stateDir);
  const objects = source.siteObjects();
  // A cluster blocked by an error in its objects is still in the site.
  const inSite = new Set([
    ...(ctx.model?.clusters.map((c) => c.name) ?? []),
    ...(ctx.blocked?.clusters ?? []),
  ]);
  for (const ref of deleting(objects)) {
    const cluster = clusterOf(ref);
    if (inSite.has(cluster) || policyOf(ref) !== 'Delete') continue;
    const log = ctx.log.child({ object: `${ref.kind}/${ref.name}`, cluster });
    await attempt(log, async () => {
      const applied = await store.readCluster(cluster);
      if (applied?.nodes.length) {
        // The removal failed: the deletion is held, and the object says why (the next
        // reconcile tries again; removing the finalizer by hand orphans the cluster).
        const failed = ctx.result?.clusters
          .find((c) => c.cluster === cluster && c.result === 'failed')
          ?.actions.find((a) => a.result === 'failed');
        if (failed?.error && source.setDeletionStalled) {
          const message = `the deletion is held: ${failed.kind} failed (${failed.error.code}): ${failed.error.message}; bpa tries again at the next reconcile, and removing the finalizer ${CLUSTER_FINALIZER} by hand orphans the cluster`;
          await source.setDeletionStalled(ref, failed.error.code, message);
          log.warn({ reason: failed.error.code }, message);
        }
        return;
      }
      const kc = requireKubeConfig(
        { file: cfg.bootstrapKubeconfig, env: ctx.env, what: 'the bootstrap cluster' },
        'give --bootstrap-kubeconfig, or run bpa in the cluster',
      );
      const { deletePublished } = await import('../apply/k8s/publish.js');
      const deleted = await deletePublished(kc, cfg.namespace, cluster);
      await forget(store, cluster);
      await release(source, ref);
      log.info(
        { deleted },
        'cluster deleted with deletionPolicy Delete: its nodes are removed, its kubeconfig Secret and node ConfigMap deleted',
      );
    });
  }
  const applied = await store.readApplied();
  for (const [cluster, ref] of standingObjects(objects)) {
    if (ref.finalizers.includes(CLUSTER_FINALIZER) || !applied.clusters.get(cluster)?.nodes.length)
      continue;
    const log = ctx.log.child({ object: `${ref.kind}/${ref.name}`, cluster });
    await attempt(log, async () => {
      await source.setFinalizers(ref, [...ref.finalizers, CLUSTER_FINALIZER]);
      log.info('finalizer added: deleting the object now waits for bpa');
    });
  }
}

async function release(source: Finalizing, ref: SiteObjectRef): Promise<void> {
  await source.setFinalizers(
    ref,
    ref.finalizers.filter((f) => f !== CLUSTER_FINALIZER),
  );
}

/** The cluster's applied state removed: bpa no longer knows it (its logs stay). */
async function forget(store: StateStore, cluster: string): Promise<void> {
  await rm(join(store.clusterDir(cluster), 'applied.json'), { force: true });
}

async function attempt(log: RunContext['log'], fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err: unknown) {
    log.warn({ err: messageOf(err) }, 'finalizer work failed: tried again at the next reconcile');
  }
}
