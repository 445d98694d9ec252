import type { AppliedCluster } from '../../state/applied.js';
import { error, type Problem } from '../../util/problem.js';
import type { ClusterModel } from '../../validate/model.js';
import type { Action, PlannedNode } from '../types.js';
import { inputsOf } from './context.js';

/** `v1.27.10` → [1, 27, 10]. */
function versionParts(v: string): number[] {
  return v.replace(/^v/, '').split('.').map(Number);
}

/**
 * A change of the site's kubernetesVersion on a running cluster: an upgrade-cluster action of
 * the nodes already in it, one minor version at a time, never a downgrade. Node changes go
 * first, at the version the cluster runs (a node joined at a newer version than the control
 * plane is refused by kubeadm); the upgrade follows in the next plan. Returns the version the
 * inventory gives the installer.
 */
export function planUpgrade(
  cluster: ClusterModel,
  nodes: readonly PlannedNode[],
  applied: AppliedCluster,
  actions: Action[],
  notes: string[],
  problems: Problem[],
): string | undefined {
  const want = cluster.kubernetesVersion;
  const had = applied.kubernetesVersion;
  if (want === undefined) {
    if (had !== undefined)
      notes.push(
        `kubernetesVersion is no longer set: the cluster stays on ${had}, which its inventory keeps`,
      );
    return had;
  }
  if (want === had) return want;
  const where = {
    file: cluster.provisioning.ref.file,
    doc: cluster.provisioning.ref.doc,
    pointer: '/spec/kubernetesVersion',
  };
  if (had !== undefined) {
    const [a = 0, b = 0, c = 0] = versionParts(had);
    const [x = 0, y = 0, z = 0] = versionParts(want);
    if (x < a || (x === a && (y < b || (y === b && z < c)))) {
      problems.push(
        error(
          'KUBERNETES_DOWNGRADE',
          `cluster ${cluster.name}: kubernetesVersion ${want} is lower than ${had}, which the cluster runs; Kubernetes is not downgraded`,
          where,
        ),
      );
      return had;
    }
    if (x !== a || y > b + 1) {
      problems.push(
        error(
          'KUBERNETES_UPGRADE_SKIPS_MINOR',
          `cluster ${cluster.name}: kubernetesVersion ${want} skips a minor version of ${had}, which the cluster runs; upgrade one minor version at a time`,
          where,
        ),
      );
      return had;
    }
  }
  const from = had ?? "the installer's default";
  if (actions.some((a) => a.kind === 'add-nodes' || a.kind === 'remove-nodes')) {
    notes.push(
      `the upgrade of Kubernetes ${from} → ${want} waits until the node changes are applied (nodes join at the version the cluster runs); the next reconcile plans it`,
    );
    return had;
  }
  actions.push({
    kind: 'upgrade-cluster',
    cluster: cluster.name,
    nodes: nodes.filter((n) => n.change !== 'remove' && n.change !== 'add').map((n) => n.name),
    reason: `Kubernetes ${from} → ${want}`,
    inputs: inputsOf(cluster, 'provisioning'),
  });
  return want;
}
