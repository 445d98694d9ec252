// What the status page shows beyond the reports: the plan, the inventory and who holds each
// host. Built once per reconcile from what the steps found; pure. Every message and reason is
// redacted: they quote site and host values, and the page shows them as they are.
import type { ActionError, ActionOutcome, ApplyResult } from '../apply/engine.js';
import type { Observations } from '../observe/index.js';
import type { Plan } from '../plan/index.js';
import { redact } from '../util/redact.js';
import { problemPlace } from '../util/problem.js';

export interface ViewAction {
  kind: string;
  /** What the run that made the plan did with it (pending: not applied, or no apply yet). */
  state: 'pending' | 'done' | 'failed' | 'not-run' | 'interrupted';
  nodes: string[];
  reason: string;
  packages?: Array<{ node: string; name: string; from?: string; to?: string }>;
  /**
   * Why it failed, with the end of the installer's output (redacted): for the page, behind
   * its access control. Reports in git carry only the step, code, exit and log id.
   */
  error?: ActionError;
}

export interface ViewClusterPlan {
  cluster: string;
  actions: ViewAction[];
  /** What waits (a removal without --prune, a change no action can make): deferred work. */
  notes: string[];
  nodes: Array<{
    name: string;
    roles: string[];
    host: string;
    mac: string;
    ip: string;
    change: string;
    placement: string;
  }>;
}

export interface ViewHost {
  /** namespace/name, as nodes name their host. */
  key: string;
  macs: string[];
  cpu?: number;
  ramMebibytes?: number;
  sriov: boolean;
  qat: boolean;
  eligible: boolean;
  /** Why the host cannot be used, when it is not eligible. */
  reason?: string;
  /** The cluster/node placed on it by the plan (or applied on it before). */
  heldBy?: string;
  /** Another owner (`spec.consumerRef`): such a host is never placed. */
  consumer?: string;
}

export interface SiteView {
  plan?: {
    hash: string;
    clusters: ViewClusterPlan[];
    /** Placement and address problems: why a node found no host. */
    problems: Array<{ code: string; message: string; where?: string }>;
  };
  inventory?: { from: string; hosts: ViewHost[] };
}

/** The plan and the inventory of a run, when it got that far. */
export function siteView(ctx: {
  plan?: Plan;
  observations?: Observations;
  result?: ApplyResult;
}): SiteView | undefined {
  const plan = ctx.plan;
  const obs = ctx.observations;
  if (!plan && !obs) return undefined;
  const held = new Map<string, string>();
  for (const [cluster, applied] of obs?.applied.clusters ?? [])
    for (const n of applied.nodes) held.set(n.host, `${cluster}/${n.name}`);
  for (const c of plan?.clusters ?? [])
    for (const n of c.nodes) if (n.change !== 'remove') held.set(n.host, `${c.cluster}/${n.name}`);
  return {
    ...(plan
      ? {
          plan: {
            hash: plan.hash,
            clusters: plan.clusters.map((c) => ({
              cluster: c.cluster,
              actions: c.actions.map((a) => ({
                kind: a.kind,
                state: stateOf(ctx.result, c.cluster, a.kind, a.nodes),
                ...errorOf(ctx.result, c.cluster, a.kind, a.nodes),
                nodes: [...a.nodes],
                reason: redact(a.reason),
                ...(a.packages?.length ? { packages: a.packages.map((p) => ({ ...p })) } : {}),
              })),
              notes: c.notes.map(redact),
              nodes: c.nodes.map((n) => ({
                name: n.name,
                roles: [...n.roles],
                host: n.host,
                mac: n.mac,
                ip: n.ip,
                change: n.change,
                placement: redact(n.placement),
              })),
            })),
            problems: plan.problems.map((p) => {
              const where = problemPlace(p);
              return { code: p.code, message: redact(p.message), ...(where ? { where } : {}) };
            }),
          },
        }
      : {}),
    ...(obs
      ? {
          inventory: {
            from: obs.inventory,
            hosts: obs.hosts
              .map((h): ViewHost => {
                const { key } = h;
                const holder = held.get(key);
                return {
                  key,
                  macs: [...h.macs],
                  ...(h.cpuCount !== undefined ? { cpu: h.cpuCount } : {}),
                  ...(h.ramMebibytes !== undefined ? { ramMebibytes: h.ramMebibytes } : {}),
                  sriov: h.sriov,
                  qat: h.qat,
                  eligible: h.eligible,
                  ...(h.ineligibleReason ? { reason: redact(h.ineligibleReason) } : {}),
                  ...(holder ? { heldBy: holder } : {}),
                  ...(h.consumer ? { consumer: h.consumer } : {}),
                };
              })
              .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
          },
        }
      : {}),
  };
}

function outcomeOf(
  result: ApplyResult | undefined,
  cluster: string,
  kind: string,
  nodes: readonly string[],
): ActionOutcome | undefined {
  return result?.clusters
    .find((c) => c.cluster === cluster)
    ?.actions.find((a) => a.kind === kind && a.nodes.join() === nodes.join());
}

function stateOf(
  result: ApplyResult | undefined,
  cluster: string,
  kind: string,
  nodes: readonly string[],
): ViewAction['state'] {
  return outcomeOf(result, cluster, kind, nodes)?.result ?? 'pending';
}

function errorOf(
  result: ApplyResult | undefined,
  cluster: string,
  kind: string,
  nodes: readonly string[],
): Pick<ViewAction, 'error'> {
  const error = outcomeOf(result, cluster, kind, nodes)?.error;
  return error ? { error: { ...error, message: redact(error.message) } } : {};
}
