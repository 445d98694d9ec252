/**
 * One reconcile, as the steps it takes in order, each a function of one context (a
 * RunContext, reconcile/context.ts). Every command runs a prefix of this list:
 *
 *   bpa validate PATH                         source → load → validate
 *   bpa plan PATH                             … → observe → plan
 *   bpa apply PATH, bpa reconcile --once PATH … → lock → … → apply
 *   bpa reconcile --once --repo, bpa serve    … → apply, then report, in a finally
 *
 * A step that finds nothing left to do (an input that did not change, a site with errors, a
 * plan that cannot be applied) lets the ones after it pass. Each step loads the modules of its
 * stage when it runs: `bpa validate` never loads the planner, `bpa plan` never loads an
 * installer, and nothing loads SSH, git or the Kubernetes client unless it uses them.
 */
import { resolve } from 'node:path';
import { DEFAULT_LIMITS, loadSite, locateProblems, type SiteFile } from '../load/index.js';
import type { IpSource } from '../observe/inventory/ip.js';
import type { Flavour } from '../plan/hosts-ini.js';
import { checkSitePath } from '../source/local-path.js';
import { checkStateDir } from '../state/dir.js';
import { StateLock } from '../state/lock.js';
import { StalledError } from '../util/errors.js';
import { hasErrors, sortProblems, type Problem } from '../util/problem.js';
import { validateSite } from '../validate/index.js';
import { checkSiteNotEmpty } from '../validate/empty-site.js';
import { checkSiteTrust } from '../validate/trust.js';
import type { RunContext } from './context.js';
import type { Finalizing } from './deletion.js';

export interface Step {
  name: string;
  /** What the step does, in one line (`bpa --help`, docs/architecture.md). */
  does: string;
  /** Whether the step has anything to do in this run; the runner passes it otherwise. */
  when: (ctx: RunContext) => boolean;
  run: (ctx: RunContext) => Promise<void>;
}

export const STEPS = [
  {
    name: 'source',
    does: 'the site: a local path, or a repository revision (unchanged input skipped, signature checked)',
    when: () => true,
    run: source,
  },
  {
    name: 'lock',
    does: "the state directory's lock, held until the run ends, when the run changes anything",
    when: (ctx) => ctx.upTo === 'apply' || ctx.upTo === 'report',
    run: lock,
  },
  {
    name: 'load',
    does: 'files → YAML documents with file:line:column positions',
    when: (ctx) => !ctx.refused,
    run: load,
  },
  {
    name: 'validate',
    does: 'documents → the typed site model, or every problem',
    when: (ctx) => ctx.loaded !== undefined,
    run: validate,
  },
  {
    name: 'decrypt',
    does: "the site's SOPS files decrypted in memory and verified (apply, reconcile, serve)",
    when: (ctx) =>
      ctx.model !== undefined &&
      !hasErrors(ctx.validation) &&
      (ctx.upTo === 'apply' || ctx.upTo === 'report'),
    run: async (ctx) => (await import('./site-secrets.js')).decryptSecrets(ctx),
  },
  {
    name: 'observe',
    does: 'inventory, DHCP leases, the applied state, what the nodes report',
    when: (ctx) => ctx.model !== undefined && !hasErrors(ctx.validation),
    run: observe,
  },
  {
    name: 'plan',
    does: 'hosts assigned to nodes, desired against applied → ordered actions with reasons',
    when: (ctx) => ctx.observations !== undefined,
    run: plan,
  },
  {
    name: 'apply',
    does: 'the plan, journaled: installer runs, SSH, packages, published kubeconfigs',
    when: (ctx) => ctx.plan !== undefined && !hasErrors(ctx.problems),
    run: apply,
  },
] as const satisfies readonly Step[];

export type StepName = (typeof STEPS)[number]['name'];

/**
 * Runs the steps up to `upTo`; with `report`, all of them and then the report, in a finally
 * (reconcile/report.ts). A step's error is recorded in `ctx.failure` and thrown; whatever the
 * outcome, the lock is released and SSH connections are closed.
 */
export async function runSteps(ctx: RunContext, upTo: StepName | 'report'): Promise<void> {
  ctx.upTo = upTo;
  try {
    for (const step of STEPS) {
      if (ctx.skipped) break;
      if (step.when(ctx)) {
        ctx.step = step.name;
        await step.run(ctx);
      }
      if (step.name === upTo) break;
    }
  } catch (err: unknown) {
    ctx.failure = err;
    throw err;
  } finally {
    try {
      if (upTo === 'report') {
        const { report } = await import('./report.js');
        await report(ctx);
      }
    } finally {
      await ctx.ssh?.close();
      await ctx.lock?.release();
    }
  }
}

async function source(ctx: RunContext): Promise<void> {
  // Before anything is read from the state or fetched into it (a repository's cache is there).
  if (ctx.upTo !== 'source' && ctx.upTo !== 'load' && ctx.upTo !== 'validate')
    await checkStateDir(ctx.operator.stateDir);
  if (ctx.site.kind === 'path') {
    await checkSitePath(ctx.site.path);
    ctx.siteDir = ctx.site.path;
    return;
  }
  const { syncRevision } = await import('./revision.js');
  await syncRevision(ctx, ctx.site);
}

/** Taken before the applied state is read: the state planned from is the one applied to. */
async function lock(ctx: RunContext): Promise<void> {
  const held = new StateLock(ctx.operator.stateDir);
  await held.acquire();
  ctx.lock = held;
}

async function load(ctx: RunContext): Promise<void> {
  const files = ctx.cache?.files;
  // The source's blob ids let unchanged files go unread (load/cache.ts).
  const checkedOut =
    files && ctx.site.kind === 'source' ? await ctx.site.source.checkedOut?.() : undefined;
  ctx.loaded = await loadSite(ctx.siteDir as string, DEFAULT_LIMITS, files, checkedOut);
  if (files) ctx.log.debug({ revision: ctx.revision, ...files.counts }, 'site loaded');
}

/** The site as the operator lets it be: what it may ask of bpa's machine is checked here too. */
async function validate(ctx: RunContext): Promise<void> {
  const loaded = ctx.loaded as NonNullable<RunContext['loaded']>;
  const result = validateSite(loaded, undefined, ctx.cache?.documents, {
    // bpa serve --watch DIR (development): a plaintext Secret is a warning, not an error.
    plaintextAllowed: ctx.site.kind === 'source' && ctx.site.source.watched === true,
  });
  const trust = checkSiteTrust(result.model?.site, {
    allowSiteCommands: ctx.operator.allowSiteCommands === true,
    packageMirrors: ctx.operator.packageMirrors ?? [],
  });
  const oneFile = ctx.site.kind === 'path' && resolve(ctx.site.path) !== loaded.root;
  const empty = checkSiteNotEmpty(loaded, result.model, siteName(ctx), oneFile);
  const problems = [...result.problems, ...trust, ...empty];
  const rest = hasErrors(problems) ? withoutBlocked(ctx, loaded, problems) : undefined;
  if (rest) {
    // Operator mode: the clusters with errors wait; the rest of the site goes on.
    ctx.loaded = rest.loaded;
    ctx.model = rest.model;
    ctx.blocked = {
      clusters: rest.clusters,
      problems: sortProblems(place(ctx, loaded.files, problems)),
    };
    ctx.validation = sortProblems(place(ctx, rest.loaded.files, rest.problems));
    ctx.log.warn(
      { clusters: rest.clusters },
      'clusters with errors in their objects are left out of this reconcile; the others go on',
    );
  } else {
    ctx.model = result.model;
    ctx.validation = sortProblems(place(ctx, loaded.files, problems));
  }
  ctx.problems = ctx.validation;
  // Reports carry no warnings: this one (a watched directory only) is said in the log.
  for (const p of ctx.validation)
    if (p.code === 'SECRET_PLAINTEXT')
      ctx.log.warn({ code: p.code, file: p.file, line: p.line }, p.message);
  ctx.onSiteRead?.(ctx);
}

/** Problems with their place: a file's line and column, or the source's own (operator mode). */
function place(ctx: RunContext, files: readonly SiteFile[], problems: Problem[]): Problem[] {
  const source = ctx.site.kind === 'source' ? ctx.site.source : undefined;
  return source?.placeProblems ? source.placeProblems(problems) : locateProblems(files, problems);
}

/**
 * Operator mode: the site without the clusters whose objects have the errors, when that rest
 * is valid on its own; undefined otherwise (the whole site is rejected, as a commit is).
 */
function withoutBlocked(
  ctx: RunContext,
  loaded: NonNullable<RunContext['loaded']>,
  problems: readonly Problem[],
):
  | {
      loaded: NonNullable<RunContext['loaded']>;
      model: RunContext['model'];
      problems: Problem[];
      clusters: string[];
    }
  | undefined {
  const source = ctx.site.kind === 'source' ? ctx.site.source : undefined;
  const split = source?.isolate?.(problems);
  if (!split) return undefined;
  const files = loaded.files.filter((f) => !split.files.has(f.path));
  const rest = {
    ...loaded,
    files,
    documents: loaded.documents.filter((d) => !split.files.has(d.file)),
    problems: loaded.problems.filter((p) => p.file === undefined || !split.files.has(p.file)),
  };
  rest.incomplete = hasErrors(rest.problems);
  const again = validateSite(rest);
  const restProblems = [
    ...again.problems,
    ...checkSiteTrust(again.model?.site, {
      allowSiteCommands: ctx.operator.allowSiteCommands === true,
      packageMirrors: ctx.operator.packageMirrors ?? [],
    }),
    ...checkSiteNotEmpty(rest, again.model, siteName(ctx), false),
  ];
  if (hasErrors(restProblems)) return undefined;
  return { loaded: rest, model: again.model, problems: restProblems, clusters: split.clusters };
}

/** Operator mode: the source's objects and their finalizers; undefined for other sources. */
function finalizing(ctx: RunContext): Finalizing | undefined {
  const s = ctx.site.kind === 'source' ? ctx.site.source : undefined;
  return s?.siteObjects && s.setFinalizers
    ? {
        siteObjects: s.siteObjects.bind(s),
        setFinalizers: s.setFinalizers.bind(s),
        ...(s.setDeletionStalled ? { setDeletionStalled: s.setDeletionStalled.bind(s) } : {}),
      }
    : undefined;
}

/** The site as the operator named it: the path given, or the repository, ref and path. */
function siteName(ctx: RunContext): string {
  return ctx.site.kind === 'path' ? resolve(ctx.site.path) : ctx.site.source.describe();
}

async function observe(ctx: RunContext): Promise<void> {
  const model = ctx.model as NonNullable<RunContext['model']>;
  const root = (ctx.loaded as NonNullable<RunContext['loaded']>).root;
  const cfg = ctx.configFor(model.site?.spec);
  ctx.config = cfg;
  if (ctx.upTo === 'plan' && ctx.site.kind === 'path') {
    // A plan made offline (a pull request job): the world as the controller last reported it.
    const fromStatus = await import('./from-status.js');
    const statusDir = ctx.statusFrom ?? (ctx.siteDir as string);
    if (await fromStatus.useStatus(cfg, statusDir)) {
      const world = await fromStatus.readStatusWorld(statusDir, model);
      ctx.observations = world.observations;
      ctx.facts = world.facts;
      ctx.fromStatus = { observedAt: world.observedAt, controller: world.controller };
      return;
    }
  }
  const [{ observe: observeSite }, { observeOptions }, facts] = await Promise.all([
    import('../observe/index.js'),
    import('../observe/from-config.js'),
    import('../observe/facts.js'),
  ]);
  if (ctx.site.kind === 'source') {
    // A lost state directory (a new volume) is rebuilt from the reports in the repository,
    // so running clusters are not provisioned again.
    const [{ rebuildState }, { StateStore }, { trustedReports }] = await Promise.all([
      import('./rebuild.js'),
      import('../state/store.js'),
      import('./status-guard.js'),
    ]);
    const objects = finalizing(ctx);
    // Never from someone else's edit of status/ when bpa knows its own reports. In operator
    // mode the reports are in the state directory itself: nothing to rebuild from, and a
    // cluster bpa forgot must stay forgotten.
    if (!objects) {
      const reports = await trustedReports(ctx, ctx.site.source, ctx.siteDir as string);
      await rebuildState(new StateStore(cfg.stateDir), reports, model, ctx.log);
    }
    // Operator mode: a deleted cluster is settled before it is planned (reconcile/deletion.ts).
    if (objects && (ctx.upTo === 'apply' || ctx.upTo === 'report')) {
      const { settleDeletions } = await import('./deletion.js');
      await settleDeletions(ctx, objects, cfg);
    }
  }
  const options = observeOptions(cfg, model.site?.spec, root, ctx.env, ctx.now());
  const source = ctx.site.kind === 'source' ? ctx.site.source : undefined;
  if (options.inventory.kind === 'kubernetes' && source?.watchedInventory)
    options.inventory.watched = source.watchedInventory.bind(source);
  const observations = await observeSite(model, { ...options, leaseCache: ctx.cache?.leases });
  ctx.observations = observations;
  ctx.problems = sortProblems([...ctx.problems, ...observations.problems]);
  const targets = facts.factsTargets(model, observations.applied);
  if (!targets.length) return;
  if (ctx.ports) {
    ctx.facts = await ctx.ports.facts.read(targets);
    return;
  }
  const { SshSession, hasSshKey } = await import('../ssh/session.js');
  // bpa plan reads the nodes only with a key bpa has; an apply creates its key when missing.
  const applies = ctx.upTo === 'apply' || ctx.upTo === 'report';
  if (!applies && !(await hasSshKey(cfg))) return;
  ctx.ssh ??= new SshSession();
  ctx.facts = await facts.readFacts(ctx.ssh, targets, cfg);
}

async function plan(ctx: RunContext): Promise<void> {
  const model = ctx.model as NonNullable<RunContext['model']>;
  const cfg = ctx.config as NonNullable<RunContext['config']>;
  const observations = ctx.observations as NonNullable<RunContext['observations']>;
  const [{ planSite }, { executionSettings }, { readSuspensions }] = await Promise.all([
    import('../plan/index.js'),
    import('../config/execution.js'),
    import('../state/suspensions.js'),
  ]);
  // Planned from status/: as the controller plans, so that the hash is the one it computes.
  const controller = ctx.fromStatus?.controller;
  ctx.suspended = await readSuspensions(cfg.stateDir);
  ctx.plan = planSite({
    facts: ctx.facts,
    model,
    hosts: observations.hosts,
    leases: observations.leases,
    applied: observations.applied,
    prune: controller?.prune ?? cfg.prune,
    flavour: (controller?.flavour ?? cfg.flavour) as Flavour,
    ipOrder: (controller?.ipOrder ?? cfg.ipOrder) as IpSource[],
    settings: controller
      ? controller.settings
      : executionSettings(cfg, model.site?.spec, model.secrets),
    now: ctx.now(),
    ignoreWindows: cfg.ignoreWindows === true,
    suspended: ctx.suspended,
    // Only for a plan of the world observed here: one from status/ is another world.
    ...(ctx.cache?.plan && !ctx.fromStatus ? { cache: ctx.cache.plan } : {}),
    ...(ctx.secretDigests ? { secretValues: ctx.secretDigests } : {}),
  });
  if (ctx.blocked) {
    // A blocked cluster is not in the site this run, yet not removed either: left as it is.
    const { planHash } = await import('../plan/hash.js');
    const out = new Set(ctx.blocked.clusters);
    const kept = ctx.plan.clusters.filter((c) => !out.has(c.cluster));
    ctx.plan = { ...ctx.plan, clusters: kept, hash: planHash(kept, ctx.plan.settings) };
  }
  // Placement problems point into the site's files: give them lines too.
  const located = place(
    ctx,
    (ctx.loaded as NonNullable<RunContext['loaded']>).files,
    ctx.plan.problems,
  );
  ctx.problems = sortProblems([...ctx.problems, ...located]);
  ctx.onPlan?.(ctx);
}

async function apply(ctx: RunContext): Promise<void> {
  const model = ctx.model as NonNullable<RunContext['model']>;
  const cfg = ctx.config as NonNullable<RunContext['config']>;
  const plan = ctx.plan as NonNullable<RunContext['plan']>;
  if (cfg.planHash && !plan.hash.startsWith(cfg.planHash)) {
    throw new StalledError(
      'PLAN_HASH_MISMATCH',
      `nothing applied: the plan has changed since it was reviewed: its hash is now ${plan.hash.slice(0, 12)}, not ${cfg.planHash}; run bpa plan again and review it`,
    );
  }
  if (cfg.requireApprovedPlan && ctx.site.kind === 'source') {
    // Only the plan a person reviewed is applied: anything else waits, reported as Blocked.
    const { checkApproval } = await import('./approval.js');
    const block = await checkApproval(
      plan,
      ctx.revision as string,
      ctx.site.source,
      cfg.approvalExempt,
    );
    if (block) {
      ctx.approval = block;
      ctx.log.warn({ code: block.code, plan: block.planHash }, block.message);
      return;
    }
  }
  const [{ applyPlan }, { factsAfter }, { StateStore }, { siteDigest }, { secretRecords }] =
    await Promise.all([
      import('../apply/engine.js'),
      import('../apply/facts-after.js'),
      import('../state/store.js'),
      import('../load/digest.js'),
      import('../plan/secrets.js'),
    ]);
  const store = new StateStore(cfg.stateDir);
  const lockHeld = ctx.lock as StateLock;
  let ports = ctx.ports;
  if (!ports) {
    const [{ realPorts }, { SshSession }, { readFacts }] = await Promise.all([
      import('../apply/ports-for.js'),
      import('../ssh/session.js'),
      import('../observe/facts.js'),
    ]);
    const session = (ctx.ssh ??= new SshSession());
    const real = await realPorts({
      cfg,
      site: model.site?.spec ?? {},
      secrets: ctx.secrets,
      plan,
      store,
      ssh: await session.open(cfg),
      env: ctx.env,
      log: ctx.log,
      onLine: ctx.onLine,
      signal: ctx.signal,
    });
    ports = { ...real, facts: { read: (targets) => readFacts(session, targets, cfg) } };
  }
  const secrets = secretRecords(plan.settings, ctx.secretDigests);
  ctx.result = await applyPlan(plan, {
    ...(secrets ? { secrets } : {}),
    store,
    verifyLock: () => lockHeld.verify(),
    log: ctx.log,
    revision: siteDigest((ctx.loaded as NonNullable<RunContext['loaded']>).files),
    signal: ctx.signal,
    // One clock for the run: what the apply records (appliedAt, which waves soak from) is
    // read against the same time the plan was made with.
    now: () => new Date(ctx.now()),
    clock: ctx.now,
    suspendedNow: async (cluster) => {
      const { readSuspensions } = await import('../state/suspensions.js');
      const now = await readSuspensions(cfg.stateDir);
      return now[cluster] !== undefined || now['*'] !== undefined;
    },
    access: ports.access,
    installer: ports.installer,
    publish: ports.publish,
    packages: ports.packages,
    registry: ports.registry,
    nodes: ports.nodes,
    healthCommand: ports.healthCommand,
    onNodePhase: ctx.onNodePhase,
  });
  const facts = ports.facts;
  const objects = finalizing(ctx);
  if (objects) {
    const { finishDeletions } = await import('./deletion.js');
    await finishDeletions(ctx, objects, cfg);
  }
  ctx.factsAfter = await factsAfter({
    model,
    result: ctx.result,
    before: ctx.facts,
    store,
    read: (targets) => facts.read(targets),
    log: ctx.log,
  });
}
