import { resolve } from 'node:path';
import { executionSettings } from '../config/execution.js';
import type { Config } from '../config/options.js';
import type { IpSource } from '../observe/inventory/ip.js';
import { observe, type InventorySpec, type Observations } from '../observe/index.js';
import { locateProblems } from '../load/index.js';
import { hasErrors, sortProblems, type Problem } from '../util/problem.js';
import { validatePath, type ValidatedPath } from '../validate/run.js';
import type { Flavour } from './hosts-ini.js';
import type { FactsMap, FactsTarget } from '../observe/facts.js';
import type { SiteModel } from '../validate/model.js';
import { planSite, type Plan } from './index.js';

export interface PlanRun {
  validated: ValidatedPath;
  observations?: Observations;
  plan?: Plan;
  /** What nodes reported, when facts were collected. */
  facts?: FactsMap;
  /** Every problem: validation, observation and planning, positions filled in. */
  problems: Problem[];
}

/**
 * load → validate → observe → plan for a local site path: what `bpa plan` and a reconcile
 * run. Throws (a BpaError) when the path, the configuration or an observation is unusable.
 */
export async function runPlan(
  path: string,
  config: (site: Record<string, unknown> | undefined) => Config,
  env: NodeJS.ProcessEnv,
  now: number,
  /** Reads what nodes report (installed packages), when SSH access is configured. */
  facts?: (targets: FactsTarget[], cfg: Config) => Promise<FactsMap | undefined>,
): Promise<PlanRun> {
  const operator = config(undefined);
  const validated = await validatePath(path, undefined, {
    allowSiteCommands: operator.allowSiteCommands === true,
    packageMirrors: operator.packageMirrors ?? [],
  });
  if (!validated.model || hasErrors(validated.problems))
    return { validated, problems: validated.problems };
  const model = validated.model;
  const cfg = config(model.site?.spec);
  // Lease files the site names are read inside the site only; the operator's from anywhere.
  const fromSite = cfg.sources.leases === 'site';
  const leaseFiles = cfg.leases.map((p) => (fromSite ? resolve(validated.root, p) : resolve(p)));
  const observations = await observe(model, {
    inventory: inventorySpec(cfg, model.site?.spec, validated.root, env),
    leaseFiles,
    leaseRoot: fromSite ? validated.root : undefined,
    now,
    stateDir: cfg.stateDir,
  });
  const factsMap = facts ? await facts(factsTargets(model, observations), cfg) : undefined;
  const plan = planSite({
    facts: factsMap,
    model,
    hosts: observations.hosts,
    leases: observations.leases,
    applied: observations.applied,
    prune: cfg.prune,
    flavour: cfg.flavour as Flavour,
    ipOrder: cfg.ipOrder as IpSource[],
    settings: executionSettings(cfg, model.site?.spec),
  });
  // Placement problems point into the site's files: give them lines too.
  const planProblems = locateProblems(validated.loaded.files, plan.problems);
  return {
    validated,
    observations,
    plan,
    facts: factsMap,
    problems: sortProblems([...validated.problems, ...observations.problems, ...planProblems]),
  };
}

function inventorySpec(
  cfg: Config,
  site: Record<string, unknown> | undefined,
  root: string,
  env: NodeJS.ProcessEnv,
): InventorySpec {
  if (cfg.inventoryDir) return { kind: 'directory', dir: cfg.inventoryDir };
  const inv = (site?.['inventory'] ?? {}) as { source?: string; directory?: string };
  if (cfg.kubeconfig || inv.source === 'kubernetes') {
    return {
      kind: 'kubernetes',
      kubeconfig: cfg.kubeconfig || undefined,
      env,
      namespaces: cfg.namespaces,
    };
  }
  return { kind: 'embedded', root, directory: inv.directory };
}

/** Nodes bpa applied before, with the packages the site asks their roles to carry. */
export function factsTargets(
  model: SiteModel,
  observations: Pick<Observations, 'applied'>,
): FactsTarget[] {
  const targets: FactsTarget[] = [];
  for (const applied of observations.applied.clusters.values()) {
    const cluster = model.clusters.find((c) => c.name === applied.cluster);
    for (const n of applied.nodes) {
      const names = new Set<string>();
      for (const role of n.roles) {
        for (const p of (role === 'master' ? cluster?.masterSoftware : cluster?.workerSoftware) ??
          [])
          names.add(p.name);
        for (const p of applied.packages[role] ?? []) names.add(p.name);
      }
      targets.push({
        cluster: applied.cluster,
        node: n.name,
        ip: n.ip,
        packages: [...names].sort(),
      });
    }
  }
  return targets;
}
