import type { ExecutionSettings } from '../config/execution.js';
import type { AppliedCluster } from '../state/applied.js';
import { sameSecret } from './secrets.js';
import type { Action, PlannedNode } from './types.js';

/**
 * reconfigure-cluster: the installer's cluster path (Kubespray's cluster.yml, KUD's installer)
 * run again over a running cluster's nodes, because the installer variables (Site
 * installer.variables, a site Secret) are not those the cluster last converged with: their
 * values changed, or the cluster never ran with them. A new ciphertext of the same values
 * (a rotated data key, a new recipient) is no change when bpa has the keys: the HMAC of the
 * values decides (plan/secrets.ts). A cluster the plan provisions gets them anyway. Pure.
 */
export function planReconfigure(
  cluster: string,
  nodes: readonly PlannedNode[],
  applied: AppliedCluster | undefined,
  settings: ExecutionSettings | undefined,
  actions: Action[],
  notes: string[],
  secretValues?: ReadonlyMap<string, string>,
): void {
  if (!applied || actions.some((a) => a.kind === 'provision-cluster')) return;
  const name = settings?.installerVariables;
  if (name === undefined) {
    if (applied.installerVariables !== undefined)
      notes.push(
        `installer.variables was removed from the Site: the cluster keeps what the installer configured with the Secret ${applied.installerVariables}; bpa does not run the installer for it`,
      );
    return;
  }
  const cipher = settings?.secrets?.[name];
  if (cipher === undefined) return;
  const recorded = applied.secrets?.[name];
  if (recorded && sameSecret(name, cipher, recorded, secretValues)) return;
  const live = nodes.filter((n) => n.change !== 'remove');
  if (!live.length) return;
  actions.push({
    kind: 'reconfigure-cluster',
    cluster,
    nodes: live.map((n) => n.name),
    reason: recorded
      ? `installer variables changed (Secret ${name}): the installer converges the cluster with them`
      : `installer variables (Secret ${name}) were never applied to the running cluster: the installer converges it with them`,
    inputs: [`Site spec.installer.variables (Secret ${name})`],
    // The cluster as it was installed: an installer that takes the plugins ({plugins}, KUD's)
    // gets the ones the cluster has.
    plugins: [...applied.plugins],
  });
}
