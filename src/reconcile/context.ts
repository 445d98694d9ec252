import type { SiteSecretValues } from '../sops/values.js';
import type { ApplyResult } from '../apply/engine.js';
import type { ApplyPorts } from '../apply/ports.js';
import type { Config, ConfigFor } from '../config/options.js';
import { SiteCache, type LoadedSite } from '../load/index.js';
import type { FactsMap } from '../observe/facts.js';
import type { Observations } from '../observe/index.js';
import type { Plan } from '../plan/index.js';
import type { PlanningSettings } from '../report/inventory.js';
import type { SiteSource } from '../source/site-source.js';
import type { SshSession } from '../ssh/session.js';
import type { StateLock } from '../state/lock.js';
import type { Suspensions } from '../state/suspensions.js';
import type { Logger } from '../util/log.js';
import type { Problem } from '../util/problem.js';
import { DocumentCache } from '../validate/document-cache.js';
import { LeaseCache } from '../observe/leases/lease-cache.js';
import { PlanCache } from '../plan/plan-cache.js';
import type { SiteModel } from '../validate/model.js';
import type { ApprovalBlock } from './approval.js';
import type { SourceState, StatusCheck } from './source-state.js';
import type { Trigger } from './summary.js';
import { keepDerived } from '../util/memo.js';

/** Where a run takes the site from. */
export type SiteInput =
  /** `bpa validate|plan|apply PATH`, `bpa reconcile --once PATH`: a directory or one file. */
  | { kind: 'path'; path: string }
  /**
   * `bpa reconcile --once --repo`, `bpa serve`: a repository (or a watched directory) whose
   * revisions are reconciled once each, and re-checked fully every `resyncIntervalMs`.
   */
  | { kind: 'source'; source: SiteSource; trigger: Trigger; resyncIntervalMs: number };

/** What a run is given. */
export interface RunOptions {
  site: SiteInput;
  /** The command's settings, resolved with the Site document's spec once it is read. */
  configFor: ConfigFor;
  env: NodeJS.ProcessEnv;
  log: Logger;
  now?: () => number;
  /** Fired when bpa is stopping (SIGTERM, leadership lost): the apply journals and returns. */
  signal?: AbortSignal;
  /** Live installer output lines. */
  onLine?: (line: string) => void;
  /**
   * `bpa plan`, `bpa diff`: the site directory whose status/ gives the world to plan against,
   * when not the site's own (two revisions planned against the same observation).
   */
  statusFrom?: string;
  /** Each node of a rolling change as it moves (cordoned, drained, changed, healthy, done, failed). */
  onNodePhase?: (cluster: string, node: string, phase: string) => void;
  /** Called once the site is read and checked, before anything is observed or applied. */
  onSiteRead?: (ctx: RunContext) => void;
  /** Called once the plan is made, before anything is applied (to show it). */
  onPlan?: (ctx: RunContext) => void;
  /** The outside world (nodes, installer, publishing) instead of what the settings name: tests. */
  ports?: ApplyPorts;
  /**
   * What a long-running reconciler keeps of the site between runs (`bpa serve`): unchanged
   * files are not read, parsed or checked again. Never changes a result.
   */
  cache?: WarmCache;
}

export interface WarmCache {
  files: SiteCache;
  documents: DocumentCache;
  /** Lease files as last parsed. */
  leases?: LeaseCache;
  /** The last plan's host index and clusters. */
  plan?: PlanCache;
}

/** An empty cache for a process that reconciles the same site again and again. */
export function warmCache(): Required<WarmCache> {
  // What is derived per document and per host is kept from now on (util/memo.ts).
  keepDerived();
  return {
    files: new SiteCache(),
    documents: new DocumentCache(),
    leases: new LeaseCache(),
    plan: new PlanCache(),
  };
}

/**
 * One run of the reconcile steps (reconcile/steps.ts): what it was given, and what each step
 * found, in the order the steps fill it in. A step reads what the steps before it wrote.
 */
export interface RunContext extends Readonly<Omit<RunOptions, 'now'>> {
  readonly now: () => number;
  /** The operator's settings (flags, environment), before the site is read. */
  readonly operator: Config;
  /** The last step the run goes to: `apply` and `report` change the world, under the lock. */
  upTo?: string;
  /** The step running, or the one that failed. */
  step?: string;
  /** What stopped the run: a step's error, or the report's. */
  failure?: unknown;

  // source
  siteDir?: string;
  /** The git commit, or for a directory the digest of its input. */
  revision?: string;
  /** The digest of the site's input: a commit outside the site or of status/ keeps it. */
  digest?: string;
  /** What bpa last saw of its source (a repository's revisions fetched, attempted, applied). */
  sourceState?: SourceState;
  /** The revision's status/ against what bpa last wrote there (reconcile/status-guard.ts). */
  status?: StatusCheck;
  /** Nothing new: the same input as the last reconcile, and no full reconcile due. */
  skipped?: boolean;
  /** The revision may not be applied (its signature): reported like an invalid one. */
  refused?: Problem;

  // lock
  lock?: StateLock;

  // load
  loaded?: LoadedSite;

  // validate
  model?: SiteModel;
  /** The problems of the site itself (load, validate, trust), with positions, sorted. */
  validation: Problem[];
  /**
   * Operator mode: clusters left out of this run because their own objects have errors (the
   * others go on), with those errors; nothing of them is planned or applied.
   */
  blocked?: { clusters: string[]; problems: Problem[] };

  // decrypt
  /** The site's decrypted Secrets, by name (apply, reconcile, serve): memory only, never written. */
  secrets?: SiteSecretValues;
  /** HMACs of each decrypted Secret's values under the state directory's key (plan/secrets.ts). */
  secretDigests?: ReadonlyMap<string, string>;

  // observe
  /** The settings with the Site document's. */
  config?: Config;
  observations?: Observations;
  /** What the nodes applied before report (installed packages). */
  facts?: FactsMap;
  /** bpa's SSH key and connections, opened when first needed and closed when the run ends. */
  ssh?: SshSession;
  /** The world was read from the site's status/ (bpa plan --from-status), not observed. */
  fromStatus?: { observedAt: string; controller?: PlanningSettings };

  // plan
  /** Clusters suspended through serve's API (`*`: all), read from the state directory. */
  suspended?: Suspensions;
  plan?: Plan;
  /** Every problem so far (site, observation, plan), with positions, sorted. */
  problems: Problem[];

  // apply
  /** Nothing applied: the plan is not the one approved (serve --require-approved-plan). */
  approval?: ApprovalBlock;
  result?: ApplyResult;
  /** The facts with the nodes the apply worked on read again: what a report shows. */
  factsAfter?: FactsMap;

  // report
  /** bpa stopped during the apply: nothing is reported, the next start resumes it. */
  interrupted?: boolean;
  /** The status files written (site-relative path → text). */
  reports?: Map<string, string>;
}

/** A run ready for its first step; the operator's settings are resolved (and checked) here. */
export function createRun(opts: RunOptions): RunContext {
  return {
    ...opts,
    now: opts.now ?? Date.now,
    operator: opts.configFor(undefined),
    validation: [],
    problems: [],
  };
}
