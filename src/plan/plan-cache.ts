import type { Problem } from '../util/problem.js';
import type { Assignment } from './assign.js';
import type { ClusterPlan } from './types.js';

/** A cluster's last plan, with what it was made from. */
export interface ClusterEntry {
  /**
   * Its inputs, compared one by one with `===`: the cluster's model object, the hosts and
   * placement texts of its nodes, their address resolutions, its applied state and facts as
   * JSON, the settings as JSON, the flavour, pruning, whether assignment blocked it.
   */
  inputs: readonly unknown[];
  /** As computed before gating: never handed out itself, only shallow copies to gate. */
  plan: ClusterPlan;
  /** Its problems as found, before positions are added to them. */
  problems: Problem[];
  /** Its entry in the plan hash's canonical JSON, for the rollout it was made with. */
  hashed?: { rollout: string; text: string };
}

/**
 * What planning keeps between the plans of a long-running process (`bpa serve`), so that a
 * change to one file redoes only what that file touches: the last assignment (and its host
 * index) the next starts from, and each cluster's plan while its inputs are the same objects as last time. Under
 * `bpa serve` unchanged files give the same documents, models (validate/rules.ts), hosts
 * (observe/inventory/hosts.ts), leases (observe/leases/lease-cache.ts) and address
 * resolutions (observe/inventory/ip.ts); none of them is changed once made. Only the clusters
 * of the last plan are kept.
 */
export class PlanCache {
  assignment: Assignment | undefined;
  clusters = new Map<string, ClusterEntry>();
  /** Clusters of the last plan taken from the cache: for tests. */
  reused = 0;
}

/** True when two input lists hold the same values (`===`) in the same order. */
export function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
