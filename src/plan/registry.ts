import { factsKey, type NodeFacts } from '../observe/facts.js';
import type { ExecutionSettings } from '../config/execution.js';
import { mirrorDigest, mirrorDrift } from '../runtime/registry-mirror.js';
import type { AppliedCluster } from '../state/applied.js';
import type { Action, PlannedNode } from './types.js';
import { sameSecret } from './secrets.js';

/**
 * configure-registry: the nodes whose container runtime must be (re)told to pull through the
 * site registry: new nodes, every node when the mirror settings changed since they were
 * applied, and nodes that report the files changed or gone (drift). Pure.
 */
export function planRegistry(
  cluster: string,
  nodes: readonly PlannedNode[],
  applied: AppliedCluster | undefined,
  settings: ExecutionSettings | undefined,
  facts: ReadonlyMap<string, NodeFacts> | undefined,
  actions: Action[],
  notes: string[],
  secretValues?: ReadonlyMap<string, string>,
): void {
  const mirror = settings?.registryMirror;
  if (!mirror) {
    if (applied?.registryMirror)
      notes.push(
        'registryMirror was removed from the Site: bpa leaves the mirror configuration on the nodes; remove it by hand where it is not wanted',
      );
    return;
  }
  const digest = mirrorDigest(mirror);
  const live = nodes.filter((n) => n.change !== 'remove');
  const changed = applied?.registryMirror !== digest && !sameCredentials();
  // Rotated credentials' ciphertext with the values bpa applied: the mirror as it was.
  function sameCredentials(): boolean {
    const cred = mirror?.credentials;
    const recorded = cred ? applied?.secrets?.[cred.secret] : undefined;
    if (
      !mirror ||
      !cred ||
      !recorded ||
      !sameSecret(cred.secret, cred.digest, recorded, secretValues)
    )
      return false;
    const before = { ...mirror, credentials: { ...cred, digest: recorded.cipher } };
    return applied?.registryMirror === mirrorDigest(before);
  }
  const why: string[] = [];
  const targets: string[] = [];
  for (const n of live) {
    if (n.change === 'add' || changed) {
      targets.push(n.name);
      continue;
    }
    const seen = facts?.get(factsKey(cluster, n.name));
    if (!seen?.reachable || !seen.files) continue;
    const drift = mirrorDrift(mirror, seen.files);
    if (drift.length) {
      targets.push(n.name);
      why.push(`${n.name}: ${drift.join(', ')}`);
    }
  }
  if (!targets.length) return;
  const what = `${mirror.registries.join(', ')} through ${mirror.url} (${mirror.runtimes.join(', ')})`;
  actions.push({
    kind: 'configure-registry',
    cluster,
    nodes: targets,
    reason: why.length
      ? `nodes differ from the registry mirror applied: ${why.join('; ')}`
      : changed && applied?.registryMirror
        ? `registry mirror changed: ${what}`
        : `pull ${what}`,
    inputs: ['Site spec.registryMirror'],
    registry: mirror,
  });
}
