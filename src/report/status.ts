import { yamlText } from '../util/yaml-text.js';
import type { ApplyResult, ClusterOutcome } from '../apply/engine.js';
import type { FactsMap } from '../observe/facts.js';
import { factsKey } from '../observe/facts.js';
import type { Plan } from '../plan/index.js';
import type { AppliedCluster, AppliedState } from '../state/applied.js';
import type { Problem } from '../util/problem.js';
import { redact } from '../util/redact.js';
import type { SiteModel } from '../validate/model.js';
import { STATUS_DIR } from '../source/site-path.js';
import { pluralize } from '../util/pluralize.js';

const API_VERSION = 'bpa.akraino.org/v1alpha1';

export type Phase =
  | 'Ready'
  | 'Provisioning'
  | 'Degraded'
  | 'Failed'
  | 'Blocked'
  | 'Rejected'
  | 'Waiting'
  | 'Suspended';

export interface Condition {
  type: 'Ready' | 'Reconciling' | 'Stalled';
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/**
 * One action of the last apply. A failed one says where and how it failed, never with the
 * installer's output: the step, the error code, how the installer ended, and the id of its
 * log (`<cluster>/<file>`, served by the page at `/api/v1/logs/<id>`).
 */
export interface LastOperation {
  action: string;
  nodes: string[];
  startedAt?: string;
  endedAt?: string;
  result: string;
  step?: string;
  code?: string;
  exitCode?: number;
  signal?: string;
  log?: string;
}

/** An error in a report: where it is (file and line, or in operator mode object and field). */
export interface ReportedError {
  code: string;
  message: string;
  file?: string;
  line?: number;
  object?: string;
  field?: string;
}

export interface ClusterStatusDoc {
  apiVersion: string;
  kind: 'ClusterStatus';
  metadata: { name: string; labels?: Record<string, string> };
  status: {
    phase: Phase;
    conditions: Condition[];
    source: { revision?: string; planHash?: string };
    nodes: Array<{
      name: string;
      roles: string[];
      host: string;
      mac: string;
      ip: string;
      reachable?: boolean;
      packages?: Record<string, string | null>;
    }>;
    plugins: string[];
    /**
     * The packages bpa manages on each role, as last applied (names and pins): with the nodes,
     * the applied state a plan made offline (`bpa plan --from-status`) starts from.
     */
    software?: {
      master: Array<{ name: string; version?: string }>;
      worker: Array<{ name: string; version?: string }>;
    };
    /** The Kubernetes version bpa installed or upgraded the cluster to, when the site set one. */
    kubernetesVersion?: string;
    /** The pod network the cluster was provisioned with; null: the installer's default. */
    podSubnet?: string | null;
    /**
     * The site Secret of installer variables the cluster last converged with, by the SHA-256
     * of its ciphertext (never a value): a plan made offline, or from a lost state directory,
     * then knows the variables were applied (plan/installer-vars.ts).
     */
    installerVariables?: { secret: string; digest: string };
    lastOperation?: LastOperation[];
    /**
     * Why changes are held or were let through: a suspension (by a commit or serve's API),
     * the next opening of the maintenance windows, or an apply outside them (--ignore-windows).
     */
    gate?: { state: string; reason: string; by?: string; since?: string; opensAt?: string };
    /** The last rolling change, node by node: where each node got. */
    rollout?: { action: string; nodes: Array<{ name: string; state: string }> };
    notes?: string[];
    errors?: ReportedError[];
  };
}

export interface SiteStatusDoc {
  apiVersion: string;
  kind: 'SiteStatus';
  metadata: { name: string };
  status: {
    phase: Phase;
    conditions: Condition[];
    source: { revision?: string; appliedRevision?: string };
    clusters: Array<{ name: string; phase: Phase }>;
    /** The plan that waits for approval (--require-approved-plan), so a person can review it. */
    approval?: {
      reason: ApprovalBlock['reason'];
      planHash: string;
      approvedPlanHash?: string;
      commit?: string;
      trailer: string;
      pending: ApprovalBlock['pending'];
    };
    errors?: ReportedError[];
  };
}

/** Why a revision's plan was not applied under --require-approved-plan. */
export interface ApprovalBlock {
  reason: 'PlanNotApproved' | 'PlanChanged';
  code: 'PLAN_NOT_APPROVED' | 'PLAN_CHANGED';
  message: string;
  /** The plan bpa computed for the revision. */
  planHash: string;
  /** The hash the trailer names, when there is one. */
  approvedPlanHash?: string;
  /** The commit whose message was read. */
  commit?: string;
  /** The actions that wait for approval, per cluster. */
  pending: Array<{ cluster: string; action: string; nodes: string[]; reason: string }>;
}

export interface ReportInput {
  /** The revision this reconcile looked at (git sha or site digest). */
  revision?: string;
  /** The last revision applied successfully (after this reconcile). */
  appliedRevision?: string;
  model?: SiteModel;
  /** Errors that rejected the revision (validation), with file and line. */
  rejected?: Problem[];
  /**
   * Operator mode: clusters left out because their own objects have errors; their reports are
   * kept, the site lists them as Rejected with the errors.
   */
  blocked?: { clusters: string[]; problems: Problem[] };
  plan?: Plan;
  /** The plan was not applied: it is not the approved one (--require-approved-plan). */
  approval?: ApprovalBlock;
  result?: ApplyResult;
  applied: AppliedState;
  facts?: FactsMap;
  /**
   * The reconcile failed outside any action (the inventory could not be read, the plan could
   * not be made): the site is reported Failed with it, and the clusters keep their last reports.
   */
  failure?: { code: string; message: string };
  /** Previous reports by path, to keep times and operations when nothing changed. */
  previous: ReadonlyMap<string, unknown>;
  /** The state directory (absolute): never named in a report, `<stateDir>` stands for it. */
  stateDir?: string;
  now: string;
}

/**
 * What a failed action's report says of it, from its code and the step, exit and log: no
 * text of the installer or of an error message, so no installer output reaches git.
 */
function installerVariablesOf(
  applied: AppliedCluster | undefined,
): Pick<ClusterStatusDoc['status'], 'installerVariables'> {
  const secret = applied?.installerVariables;
  const cipher = secret === undefined ? undefined : applied?.secrets?.[secret]?.cipher;
  return secret !== undefined && cipher !== undefined
    ? { installerVariables: { secret, digest: cipher } }
    : {};
}

export function describeFailure(
  action: string,
  error: { code?: string; step?: string; exitCode?: number; signal?: string; log?: string },
): string {
  const how = [
    error.code ?? 'failed',
    ...(error.exitCode !== undefined ? [`exit ${error.exitCode}`] : []),
    ...(error.signal ? [`signal ${error.signal}`] : []),
  ].join(', ');
  return `${action} failed${error.step ? ` at step ${error.step}` : ''}: ${how}${error.log ? `; log ${error.log}` : ''}`;
}

/**
 * The status files of one reconcile: `status/<cluster>.yaml` and `status/site.yaml`. Pure and
 * deterministic: when nothing changed, the text is identical (times are carried over from the
 * previous report), so no commit is made. Nothing secret is ever written: no installer output
 * at all (a failed action is its step, error code, exit and log id), other messages redacted
 * and short, no path in the state directory, and otherwise only names, addresses, versions
 * and phases.
 */
export function buildReports(input: ReportInput): Map<string, string> {
  const files = new Map<string, string>();
  const clusters: Array<{ name: string; phase: Phase }> = [];
  const render = (doc: unknown): string => withoutStateDir(renderDoc(doc), input.stateDir);
  if (input.rejected?.length || input.failure) {
    // An invalid revision, or a reconcile that failed before it could look at the clusters,
    // changes nothing: the clusters keep their last reports.
    // A kept report that held installer output in an operation (an older bpa wrote it) is
    // written again without it; one that did not stays byte for byte, so no commit is made.
    for (const [path, doc] of input.previous) {
      const prev = doc as ClusterStatusDoc | undefined;
      if (prev?.kind !== 'ClusterStatus') continue;
      clusters.push({ name: prev.metadata.name, phase: prev.status.phase });
      const kept = keptClusterDoc(prev);
      if (renderDoc(kept) !== renderDoc(prev)) files.set(path, render(kept));
    }
  } else {
    const names = new Set<string>([
      ...(input.model?.clusters.map((c) => c.name) ?? []),
      ...input.applied.clusters.keys(),
    ]);
    for (const name of input.blocked?.clusters ?? []) {
      names.delete(name);
      clusters.push({ name, phase: 'Rejected' });
    }
    for (const name of [...names].sort()) {
      const doc = clusterStatus(name, input);
      clusters.push({ name, phase: doc.status.phase });
      files.set(`${STATUS_DIR}/${name}.yaml`, render(doc));
    }
  }
  files.set(`${STATUS_DIR}/site.yaml`, render(siteStatus(input, clusters)));
  return files;
}

function clusterStatus(name: string, input: ReportInput): ClusterStatusDoc {
  const path = `${STATUS_DIR}/${name}.yaml`;
  const prev = input.previous.get(path) as ClusterStatusDoc | undefined;
  const model = input.model?.clusters.find((c) => c.name === name);
  const planned = input.plan?.clusters.find((c) => c.cluster === name);
  const outcome = input.result?.clusters.find((c) => c.cluster === name);
  const applied = input.applied.clusters.get(name);
  const ofCluster = (input.plan?.problems ?? []).filter((p) =>
    p.message.startsWith(`cluster ${name}:`),
  );
  const planProblems = ofCluster.filter((p) => p.severity === 'error');
  // A node kept on a host that no longer passes its terms: running, but not as the site says.
  const disqualified = ofCluster.filter((p) => p.code === 'HOST_NO_LONGER_QUALIFIES');
  const unreachable = (applied?.nodes ?? []).filter(
    (n) => input.facts?.get(factsKey(name, n.name))?.reachable === false,
  );

  let phase: Phase;
  let reason: string;
  let message: string;
  const waiting = input.approval?.pending.filter((p) => p.cluster === name) ?? [];
  if (planProblems.length) {
    phase = 'Blocked';
    reason = planProblems[0]?.code ?? 'Blocked';
    message = planProblems.map((p) => p.message).join('; ');
  } else if (input.approval && waiting.length) {
    phase = 'Blocked';
    reason = input.approval.reason;
    message = `${waiting.map((w) => w.action).join(', ')} ${waiting.length === 1 ? 'waits' : 'wait'} for an approved plan: ${input.approval.message}`;
  } else if (outcome?.result === 'failed') {
    const failed = outcome.actions.find((a) => a.result === 'failed');
    phase = applied ? 'Degraded' : 'Failed';
    reason =
      failed?.error?.code === 'ROLLOUT_HALTED'
        ? 'RolloutHalted'
        : (failed?.error?.code ?? 'ApplyFailed');
    message = describeFailure(failed?.kind ?? 'apply', failed?.error ?? {});
  } else if (planned?.gate?.state === 'suspended' || outcome?.result === 'suspended') {
    phase = 'Suspended';
    reason = 'Suspended';
    message =
      planned?.gate?.message ??
      'suspended through the suspend API of bpa serve during the apply: no further action started';
  } else if (outcome?.result === 'waiting') {
    phase = 'Waiting';
    reason = planned?.gate?.reason ?? 'OutsideMaintenanceWindow';
    const pending = outcome.actions.filter((a) => a.result === 'not-run').map((a) => a.kind);
    message =
      reason === 'WaitingForWave'
        ? `${pending.join(', ')} deferred: ${planned?.gate?.message ?? 'waiting for the waves before'}`
        : `${pending.join(', ')} ${outcome.actions.some((a) => a.result === 'done') ? 'left for' : 'deferred to'} the next maintenance window${outcome.waitingUntil ? `, which opens at ${outcome.waitingUntil}` : ' (none ever opens)'}`;
  } else if (!model) {
    phase = 'Degraded';
    reason = 'RemovedFromSite';
    message = 'the cluster is no longer in the site; run with prune to remove its nodes';
  } else if (!applied) {
    phase = 'Provisioning';
    reason = 'NotApplied';
    message = 'the cluster has not been provisioned yet';
  } else if (disqualified.length) {
    phase = 'Degraded';
    reason = 'HostNoLongerQualifies';
    message = disqualified.map((p) => p.message.slice(`cluster ${name}: `.length)).join('; ');
  } else if (unreachable.length) {
    phase = 'Degraded';
    reason = 'NodesUnreachable';
    message = `unreachable: ${unreachable.map((n) => n.name).join(', ')}`;
  } else {
    phase = 'Ready';
    reason = outcome?.result === 'applied' ? 'Applied' : 'UpToDate';
    message =
      outcome?.result === 'applied'
        ? `applied ${outcome.actions.map((a) => a.kind).join(', ')}`
        : 'the cluster matches the site';
  }

  const conditions = conditionsFor(phase, reason, message, prev?.status.conditions, input.now);
  const nodes = (applied?.nodes ?? []).map((n) => {
    const f = input.facts?.get(factsKey(name, n.name));
    return {
      name: n.name,
      roles: [...n.roles],
      host: n.host,
      mac: n.mac,
      ip: n.ip,
      ...(f ? { reachable: f.reachable } : {}),
      ...(f?.reachable && Object.keys(f.installed).length
        ? { packages: sortKeys(f.installed) }
        : {}),
    };
  });
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterStatus',
    metadata: { name, ...(model?.owner ? { labels: { cluster: name, owner: model.owner } } : {}) },
    status: {
      phase,
      conditions,
      source: {
        revision: applied?.revision ?? prev?.status.source.revision,
        planHash: applied?.planHash ?? prev?.status.source.planHash,
      },
      nodes,
      plugins: [...(applied?.plugins ?? [])],
      ...(applied
        ? {
            software: {
              master: applied.packages.master.map((p) => ({ ...p })),
              worker: applied.packages.worker.map((p) => ({ ...p })),
            },
          }
        : {}),
      ...(applied?.kubernetesVersion ? { kubernetesVersion: applied.kubernetesVersion } : {}),
      ...(applied?.podSubnet !== undefined ? { podSubnet: applied.podSubnet } : {}),
      ...installerVariablesOf(applied),
      ...lastOperation(outcome, prev),
      ...rolloutOf(outcome, prev),
      ...(planned?.gate || outcome?.result === 'waiting' || outcome?.result === 'suspended'
        ? { gate: gateEntry(planned?.gate, outcome) }
        : {}),
      ...(planned?.notes.length ? { notes: planned.notes.map((n) => safe(n)) } : {}),
      ...(planProblems.length ? { errors: planProblems.map(errorEntry) } : {}),
    },
  };
}

function gateEntry(
  planned: NonNullable<ReportInput['plan']>['clusters'][number]['gate'],
  outcome: ClusterOutcome | undefined,
): NonNullable<ClusterStatusDoc['status']['gate']> {
  // A window that closed during the apply: the opening the engine found, not the plan's.
  const gate =
    (planned && {
      state: planned.state,
      reason: planned.reason,
      by: planned.by,
      since: planned.since,
    }) ??
    (outcome?.result === 'suspended'
      ? { state: 'suspended', reason: 'Suspended', by: 'api' }
      : { state: 'deferred', reason: 'OutsideMaintenanceWindow' });
  const opensAt = outcome?.waitingUntil ?? planned?.opensAt;
  return {
    state: gate.state,
    reason: gate.reason,
    ...('by' in gate && gate.by ? { by: gate.by } : {}),
    ...('since' in gate && gate.since ? { since: gate.since } : {}),
    ...(opensAt && gate.state !== 'suspended' ? { opensAt } : {}),
  };
}

function rolloutOf(
  outcome: ClusterOutcome | undefined,
  prev: ClusterStatusDoc | undefined,
): { rollout?: NonNullable<ClusterStatusDoc['status']['rollout']> } {
  const rolled = [...(outcome?.actions ?? [])].reverse().find((a) => a.rollout);
  if (!rolled?.rollout) return prev?.status.rollout ? { rollout: prev.status.rollout } : {};
  return {
    rollout: {
      action: rolled.kind,
      nodes: rolled.rollout.map((n) => ({ name: n.node, state: n.state })),
    },
  };
}

function lastOperation(
  outcome: ClusterOutcome | undefined,
  prev: ClusterStatusDoc | undefined,
): { lastOperation?: LastOperation[] } {
  const ran = outcome?.actions.filter((a) => a.result !== 'not-run') ?? [];
  const prevOps = carriedOperations(prev?.status.lastOperation);
  if (!ran.length) return prevOps ? { lastOperation: prevOps } : {};
  const ops: LastOperation[] = ran.map((a) => ({
    action: a.kind,
    nodes: [...a.nodes],
    startedAt: a.startedAt,
    endedAt: a.endedAt,
    result: a.result,
    // Never the error's message: it may quote the installer (docs/gitops.md, "Reports").
    ...(a.error?.step ? { step: a.error.step } : {}),
    ...(a.error ? { code: a.error.code } : {}),
    ...(a.error?.exitCode !== undefined ? { exitCode: a.error.exitCode } : {}),
    ...(a.error?.signal ? { signal: a.error.signal } : {}),
    ...(a.error?.log ? { log: a.error.log } : {}),
  }));
  // The same failure again (a retry that changed nothing) keeps the first one's times and
  // log: the report stays as it was and makes no commit, so a failure that lasts is one entry
  // in the history, not one per retry. The status API and the page show every attempt.
  if (ops.some((o) => o.result === 'failed') && prevOps && sameOperations(ops, prevOps))
    return { lastOperation: prevOps };
  return { lastOperation: ops };
}

/**
 * Operations carried over from a previous report, with only the fields a report may hold: an
 * older bpa wrote a failed action's installer output in a `message` (or any other field) of
 * it, and a carried copy must not keep that text in git.
 */
function carriedOperations(ops: unknown): LastOperation[] | undefined {
  if (!Array.isArray(ops)) return undefined;
  const text = (v: unknown): v is string => typeof v === 'string';
  return ops
    .filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null)
    .map((o) => ({
      action: text(o.action) ? o.action : 'unknown',
      nodes: Array.isArray(o.nodes) ? o.nodes.filter(text) : [],
      ...(text(o.startedAt) ? { startedAt: o.startedAt } : {}),
      ...(text(o.endedAt) ? { endedAt: o.endedAt } : {}),
      result: text(o.result) ? o.result : 'unknown',
      ...(text(o.step) ? { step: o.step } : {}),
      ...(text(o.code) ? { code: o.code } : {}),
      ...(typeof o.exitCode === 'number' ? { exitCode: o.exitCode } : {}),
      ...(text(o.signal) ? { signal: o.signal } : {}),
      ...(text(o.log) ? { log: o.log } : {}),
    }));
}

/** A previous cluster report as it may be kept: its operations without free text. */
function keptClusterDoc(doc: ClusterStatusDoc): ClusterStatusDoc {
  const ops = carriedOperations(doc.status.lastOperation);
  return ops ? { ...doc, status: { ...doc.status, lastOperation: ops } } : doc;
}

function sameOperations(a: readonly LastOperation[], b: readonly LastOperation[]): boolean {
  const key = (o: LastOperation): string =>
    JSON.stringify([o.action, o.nodes, o.result, o.step, o.code, o.exitCode, o.signal]);
  return a.length === b.length && a.every((o, i) => key(o) === key(b[i] as LastOperation));
}

function siteStatus(
  input: ReportInput,
  clusters: Array<{ name: string; phase: Phase }>,
): SiteStatusDoc {
  const prev = input.previous.get(`${STATUS_DIR}/site.yaml`) as SiteStatusDoc | undefined;
  const rejected = input.rejected?.filter((p) => p.severity === 'error') ?? [];
  let phase: Phase;
  let reason: string;
  let message: string;
  if (rejected.length) {
    phase = 'Rejected';
    reason = 'InvalidRevision';
    message = `revision ${short(input.revision)} has ${pluralize(rejected.length, 'error')}; the last good revision ${short(input.appliedRevision)} stays applied`;
  } else if (input.failure) {
    phase = 'Failed';
    reason = input.failure.code;
    message = `the reconcile of revision ${short(input.revision)} failed: ${input.failure.message}`;
  } else if (input.approval) {
    phase = 'Blocked';
    reason = input.approval.reason;
    message = input.approval.message;
  } else {
    const worst = (
      [
        'Failed',
        'Rejected',
        'Blocked',
        'Degraded',
        'Provisioning',
        'Waiting',
        'Suspended',
      ] as Phase[]
    ).find((p) => clusters.some((c) => c.phase === p));
    phase = worst ?? 'Ready';
    reason = phase === 'Ready' ? 'AllClustersReady' : `Clusters${phase}`;
    const notReady = clusters.filter((c) => c.phase !== 'Ready');
    message =
      phase === 'Ready'
        ? `${pluralize(clusters.length, 'cluster')} ready`
        : notReady.map((c) => `${c.name}: ${c.phase}`).join(', ');
  }
  return {
    apiVersion: API_VERSION,
    kind: 'SiteStatus',
    metadata: { name: input.model?.site?.name ?? prev?.metadata.name ?? 'site' },
    status: {
      phase,
      conditions: conditionsFor(phase, reason, message, prev?.status.conditions, input.now),
      source: { revision: input.revision, appliedRevision: input.appliedRevision },
      clusters,
      ...(input.approval && !rejected.length ? { approval: approvalEntry(input.approval) } : {}),
      ...(rejected.length ? { errors: rejected.map(errorEntry) } : {}),
      ...(!rejected.length && input.blocked?.problems.length
        ? { errors: input.blocked.problems.filter((p) => p.severity === 'error').map(errorEntry) }
        : {}),
      ...(input.failure && !rejected.length
        ? { errors: [{ code: input.failure.code, message: safe(input.failure.message) }] }
        : {}),
    },
  };
}

function approvalEntry(a: ApprovalBlock): NonNullable<SiteStatusDoc['status']['approval']> {
  return {
    reason: a.reason,
    planHash: a.planHash,
    ...(a.approvedPlanHash ? { approvedPlanHash: a.approvedPlanHash } : {}),
    ...(a.commit ? { commit: a.commit } : {}),
    trailer: `Bpa-Approved-Plan: ${a.planHash}`,
    pending: a.pending.map((p) => ({ ...p, nodes: [...p.nodes], reason: safe(p.reason) })),
  };
}

/** Kubernetes-style conditions; a condition's time changes only when its status changes. */
function conditionsFor(
  phase: Phase,
  reason: string,
  message: string,
  prev: Condition[] | undefined,
  now: string,
): Condition[] {
  const want: Array<Omit<Condition, 'lastTransitionTime'>> = [
    {
      type: 'Ready',
      status: phase === 'Ready' ? 'True' : 'False',
      reason,
      message: safe(message),
    },
    {
      type: 'Reconciling',
      status: phase === 'Provisioning' ? 'True' : 'False',
      reason: phase === 'Provisioning' ? reason : 'Idle',
      message: phase === 'Provisioning' ? safe(message) : '',
    },
    {
      type: 'Stalled',
      status: phase === 'Rejected' || phase === 'Blocked' || phase === 'Failed' ? 'True' : 'False',
      reason: phase === 'Rejected' || phase === 'Blocked' || phase === 'Failed' ? reason : 'None',
      message:
        phase === 'Rejected' || phase === 'Blocked' || phase === 'Failed' ? safe(message) : '',
    },
  ];
  return want.map((c) => {
    const before = prev?.find((p) => p.type === c.type);
    return {
      ...c,
      lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now,
    };
  });
}

function errorEntry(p: Problem): {
  code: string;
  message: string;
  file?: string;
  line?: number;
  object?: string;
  field?: string;
} {
  return {
    code: p.code,
    message: safe(p.message),
    ...(p.file ? { file: p.file } : {}),
    ...(p.line ? { line: p.line } : {}),
    ...(p.object ? { object: p.object } : {}),
    ...(p.field ? { field: p.field } : {}),
  };
}

/** A message as a report may carry it: redacted, and short (the full logs stay in the state directory). */
function safe(text: string, max = 1000): string {
  const clean = redact(text);
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

function short(sha: string | undefined): string {
  if (!sha) return '(none)';
  return sha.startsWith('sha256:') ? sha.slice(7, 19) : sha.slice(0, 12);
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Deterministic YAML: fixed key order (as built), no line folding, a header. */
function renderDoc(doc: unknown): string {
  return `# written by bpa; do not edit\n${yamlText(doc)}`;
}

/**
 * A report (or the status API's error) without the state directory's path (an error naming a
 * file in it, a plan note): `<stateDir>` instead.
 */
export function withoutStateDir(text: string, stateDir: string | undefined): string {
  const dir = stateDir?.replace(/\/+$/, '');
  if (!dir?.startsWith('/')) return text;
  const escaped = dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`${escaped}(?![^/\\s"',;:)\\]])`, 'g'), '<stateDir>');
}

/**
 * The cluster reports the previous reconcile wrote that `files` does not replace (a rejected
 * or failed reconcile keeps them): with `files`, every report as it now stands, for the
 * status API and the page.
 */
export function keptReports(
  previous: ReadonlyMap<string, unknown>,
  files: ReadonlyMap<string, string>,
): Map<string, string> {
  const kept = new Map<string, string>();
  for (const [path, doc] of previous)
    if (!files.has(path) && (doc as ClusterStatusDoc | undefined)?.kind === 'ClusterStatus')
      kept.set(path, renderDoc(keptClusterDoc(doc as ClusterStatusDoc)));
  return kept;
}
