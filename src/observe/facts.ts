import pLimit from 'p-limit';
import { QUERY_OK_EXIT_CODES, parseHeld, parseQuery, queryArgv } from '../apt/commands.js';
import type { Config } from '../config/options.js';
import { watchedPaths } from '../runtime/registry-mirror.js';
import type { SshPool } from '../ssh/pool.js';
import type { SshSession } from '../ssh/session.js';
import type { AppliedState } from '../state/applied.js';
import { BpaError, messageOf } from '../util/errors.js';
import type { SiteModel } from '../validate/model.js';

/** What a node reports about itself: installed versions of the packages bpa manages there. */
export interface NodeFacts {
  reachable: boolean;
  /** Package → installed version, null when not installed. */
  installed: Record<string, string | null>;
  /** Files bpa keeps on the node (the registry mirror's): path → content, null when absent. */
  files?: Record<string, string | null>;
  /** Which of the packages are on hold (apt-mark hold); absent: not known. */
  held?: string[];
  error?: { code: string; message: string };
}

export interface FactsTarget {
  cluster: string;
  node: string;
  ip: string;
  packages: string[];
  /** Files whose content the plan compares (absent: none). */
  files?: string[];
}

/** `cluster/node` → facts. */
export type FactsMap = Map<string, NodeFacts>;

export function factsKey(cluster: string, node: string): string {
  return `${cluster}/${node}`;
}

/**
 * Reads installed package versions with dpkg-query over SSH, many nodes at once (bounded),
 * each with its own timeout. An unreachable node is reported as such; the others go on.
 */
export async function collectFacts(
  targets: readonly FactsTarget[],
  ssh: { pool: SshPool; user: string; port: number; maxParallelHosts: number; timeoutMs: number },
): Promise<FactsMap> {
  const limit = pLimit(ssh.maxParallelHosts);
  const out: FactsMap = new Map();
  await Promise.all(
    targets.map((t) =>
      limit(async () => {
        const key = factsKey(t.cluster, t.node);
        if (!t.packages.length && !t.files?.length) {
          out.set(key, { reachable: true, installed: {} });
          return;
        }
        const target = { node: t.node, address: t.ip, port: ssh.port, user: ssh.user };
        try {
          let installed: Record<string, string | null> = {};
          let held: string[] | undefined;
          if (t.packages.length) {
            // dpkg-query exits 1 when some package is not installed and still prints the
            // others: the whole output counts, not a tail of it.
            const { stdout } = await ssh.pool.run(target, queryArgv(t.packages), {
              timeoutMs: ssh.timeoutMs,
              okExitCodes: QUERY_OK_EXIT_CODES,
            });
            installed = parseQuery(stdout, t.packages);
            held = parseHeld(stdout, t.packages);
          }
          const files: Record<string, string | null> = {};
          for (const path of t.files ?? []) {
            const r = await ssh.pool.run(target, readFileArgv(path), {
              // A hosts.toml with registry credentials is root's only (mode 0600).
              sudo: ssh.user !== 'root',
              timeoutMs: ssh.timeoutMs,
              okExitCodes: [0, FILE_ABSENT],
            });
            files[path] = r.exitCode === FILE_ABSENT ? null : r.stdout;
          }
          out.set(key, {
            reachable: true,
            installed,
            ...(held ? { held } : {}),
            ...(t.files?.length ? { files } : {}),
          });
        } catch (err: unknown) {
          out.set(key, {
            reachable: false,
            installed: {},
            error: {
              code: err instanceof BpaError ? err.code : 'FACTS_FAILED',
              message: messageOf(err),
            },
          });
        }
      }),
    ),
  );
  return out;
}

/** The exit code of readFileArgv for a file that does not exist. */
const FILE_ABSENT = 3;

/** Prints a file, or exits FILE_ABSENT when there is none (other failures are errors). */
function readFileArgv(path: string): string[] {
  if (!/^\/[A-Za-z0-9._/-]+$/.test(path)) throw new Error(`invalid path ${JSON.stringify(path)}`);
  return ['sh', '-c', `if [ -e "$1" ]; then cat -- "$1"; else exit ${FILE_ABSENT}; fi`, 'sh', path];
}

/** How long reading one node's facts may take. */
const FACTS_TIMEOUT_MS = 30_000;

/** What the nodes report (installed packages), read through bpa's SSH session as apply reads it. */
export async function readFacts(
  session: SshSession,
  targets: readonly FactsTarget[],
  cfg: Config,
): Promise<FactsMap> {
  const { pool } = await session.open(cfg);
  return collectFacts(targets, {
    pool,
    user: cfg.sshUser,
    port: cfg.sshPort,
    maxParallelHosts: cfg.maxParallelHosts,
    timeoutMs: FACTS_TIMEOUT_MS,
  });
}

/**
 * Nodes bpa applied before, with the packages the site asks their roles to carry and the
 * registry mirror files it keeps there.
 */
export function factsTargets(model: SiteModel, applied: AppliedState): FactsTarget[] {
  const targets: FactsTarget[] = [];
  const mirror = model.site?.spec['registryMirror'];
  const files = typeof mirror === 'object' && mirror !== null ? watchedPaths(mirror) : [];
  for (const cluster of applied.clusters.values()) {
    const site = model.clusters.find((c) => c.name === cluster.cluster);
    for (const n of cluster.nodes) {
      const names = new Set<string>();
      for (const role of n.roles) {
        for (const p of (role === 'master' ? site?.masterSoftware : site?.workerSoftware) ?? [])
          names.add(p.name);
        for (const p of cluster.packages[role] ?? []) names.add(p.name);
      }
      targets.push({
        cluster: cluster.cluster,
        node: n.name,
        ip: n.ip,
        packages: [...names].sort(),
        ...(files.length ? { files } : {}),
      });
    }
  }
  return targets;
}

/** Reads what the given nodes report: the installed versions of their packages. */
export interface FactsPort {
  /** Installed versions of each target's packages (dpkg-query); an unreachable node is said so. */
  read(targets: readonly FactsTarget[]): Promise<FactsMap>;
}
