import { dirname } from 'node:path';
import pLimit from 'p-limit';
import { BPA_APT_KEY } from '../../config/execution.js';
import type { PackageChange, PlannedNode } from '../../plan/index.js';
import { BpaError, messageOf } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import { targetOf } from '../access.js';
import type { PackagePort, PackageResult } from '../ports.js';
import type { SshPool } from '../../ssh/index.js';
import {
  MIRROR_LIST,
  QUERY_OK_EXIT_CODES,
  checkMirror,
  installArgv,
  markArgv,
  missingPackage,
  parseHeld,
  parseQuery,
  queryArgv,
  removeArgv,
  updateArgv,
} from '../../apt/commands.js';

export interface SshPackagesOptions {
  pool: SshPool;
  user: string;
  port: number;
  maxParallelHosts: number;
  /** An apt source line written on the node first (offline sites: a local mirror). */
  packageMirror?: string;
  /** The mirror's OpenPGP public key (armored), written to BPA_APT_KEY before the mirror line. */
  packageMirrorKey?: string;
  /** Per apt run (install can take long on a slow mirror). */
  timeoutMs: number;
  log: Logger;
}

/**
 * Package changes over SSH with apt and dpkg: every node in parallel (bounded), each
 * verified with dpkg-query afterwards. One node failing never stops the others; its result
 * says why, with the tail of apt's stderr.
 */
export class SshPackages implements PackagePort {
  constructor(private readonly opts: SshPackagesOptions) {
    if (opts.packageMirror) checkMirror(opts.packageMirror);
  }

  async apply(
    _cluster: string,
    nodes: readonly PlannedNode[],
    changes: readonly PackageChange[],
    mode: 'install' | 'upgrade' | 'remove',
  ): Promise<PackageResult[]> {
    const limit = pLimit(this.opts.maxParallelHosts);
    return Promise.all(
      nodes.map((n) =>
        limit(async () => {
          const started = Date.now();
          const result = await this.applyNode(
            n,
            changes.filter((c) => c.node === n.name),
            mode,
          );
          return { ...result, durationMs: Date.now() - started };
        }),
      ),
    );
  }

  private async applyNode(
    node: PlannedNode,
    changes: readonly PackageChange[],
    mode: 'install' | 'upgrade' | 'remove',
  ): Promise<PackageResult> {
    const target = targetOf(node, this.opts.user, this.opts.port);
    const sudo = this.opts.user !== 'root';
    const run = (
      argv: string[],
      timeoutMs = this.opts.timeoutMs,
    ): Promise<{ stdout: string; stderr: string }> =>
      this.opts.pool.run(target, argv, { sudo, timeoutMs });
    const names = changes.map((c) => c.name);
    const pinned =
      mode === 'remove' ? [] : changes.filter((c) => c.to !== undefined).map((c) => c.name);
    let unheld: string[] = [];
    try {
      // Held packages are unheld to change them, and only those: apt still refuses to move any
      // other held package (the container runtime, kubelet) as a dependency of this change.
      const before = await this.opts.pool.run(target, queryArgv(names), {
        timeoutMs: 60_000,
        okExitCodes: QUERY_OK_EXIT_CODES,
      });
      unheld = parseHeld(before.stdout, names);
      if (unheld.length) await run(markArgv('unhold', unheld), 60_000);
      if (mode === 'remove') {
        await run(removeArgv(names));
      } else {
        if (this.opts.packageMirror) {
          if (this.opts.packageMirrorKey) {
            await this.opts.pool.run(
              target,
              ['install', '-d', '-m', '0755', dirname(BPA_APT_KEY)],
              {
                sudo,
                timeoutMs: 30_000,
              },
            );
            await this.opts.pool.run(target, ['tee', BPA_APT_KEY], {
              sudo,
              stdin: this.opts.packageMirrorKey,
              timeoutMs: 30_000,
            });
          }
          await this.opts.pool.run(target, ['tee', MIRROR_LIST], {
            sudo,
            stdin: `${this.opts.packageMirror}\n`,
            timeoutMs: 30_000,
          });
          await run(updateArgv(true));
        }
        try {
          await run(installArgv(changes.map((c) => ({ name: c.name, version: c.to }))));
        } catch (err: unknown) {
          // Package lists may be stale or absent (a fresh node): refresh once, then retry.
          if (
            !this.opts.packageMirror &&
            err instanceof BpaError &&
            /Unable to locate|has no installation candidate|was not found/.test(stderrOf(err))
          ) {
            await run(updateArgv(false));
            await run(installArgv(changes.map((c) => ({ name: c.name, version: c.to }))));
          } else throw err;
        }
      }
      // Pinned versions are held, so unattended upgrades cannot move them.
      if (pinned.length) await run(markArgv('hold', pinned), 60_000);
      unheld = [];
      // Read with the whole output (exit 1 means "some not installed"); any other failure
      // is reported as itself, never as packages that seem to be missing.
      const query = await this.opts.pool.run(target, queryArgv(names), {
        timeoutMs: 60_000,
        okExitCodes: QUERY_OK_EXIT_CODES,
      });
      const installed = parseQuery(query.stdout, names);
      const held = new Set(parseHeld(query.stdout, names));
      const wrong = changes.filter((c) =>
        mode === 'remove'
          ? installed[c.name] !== null
          : installed[c.name] === null ||
            (c.to !== undefined && (installed[c.name] !== c.to || !held.has(c.name))),
      );
      if (wrong.length) {
        const what = wrong
          .map((c) =>
            installed[c.name] !== null && installed[c.name] === c.to
              ? `${c.name} ${c.to} is not on hold`
              : `${c.name} is ${installed[c.name] ?? 'not installed'}${c.to ? `, wanted ${c.to}` : ''}`,
          )
          .join('; ');
        return {
          node: node.name,
          ok: false,
          installed,
          error: { code: 'PACKAGE_VERIFY_FAILED', message: `${node.name}: after apt-get, ${what}` },
        };
      }
      return { node: node.name, ok: true, installed };
    } catch (err: unknown) {
      // The change failed: what was held stays held (the old version is still there).
      if (unheld.length)
        await run(markArgv('hold', unheld), 60_000).catch((e: unknown) =>
          this.opts.log.warn({ node: node.name, err: messageOf(e) }, 'could not hold again'),
        );
      const missing = err instanceof BpaError ? missingPackage(stderrOf(err)) : undefined;
      const error = missing
        ? {
            code: 'PACKAGE_NOT_FOUND',
            message: `${node.name}: package ${missing} is not available from the node's apt sources`,
          }
        : {
            code: err instanceof BpaError ? err.code : 'PACKAGES_FAILED',
            message: `${node.name}: ${messageOf(err)}`,
          };
      this.opts.log.warn({ node: node.name, err: error }, 'package change failed');
      return { node: node.name, ok: false, installed: {}, error };
    }
  }
}

function stderrOf(err: unknown): string {
  const e = err as { stderrTail?: unknown; message?: unknown };
  return `${typeof e.stderrTail === 'string' ? e.stderrTail : ''}\n${typeof e.message === 'string' ? e.message : ''}`;
}
