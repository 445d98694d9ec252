import { readFile } from 'node:fs/promises';
import pLimit from 'p-limit';
import type { PlannedNode } from '../plan/index.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { BpaError, StalledError, messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { runProcess } from '../util/run-process.js';
import type { AccessPort } from './ports.js';
import {
  bootstrapKey,
  fingerprintOf,
  HostKeyStore,
  hostPort,
  knownHostsName,
  type BootstrapCredentials,
  type SshOptions,
  type SshPool,
  type SshTarget,
} from '../ssh/index.js';

export interface SshAccessOptions {
  pool: SshPool;
  ssh: SshOptions;
  user: string;
  port: number;
  /** bpa's public key, installed with the bootstrap credentials when key login fails. */
  publicKeyPath: string;
  bootstrap?: () => Promise<BootstrapCredentials>;
  /** The OpenSSH known_hosts file a cluster's installer gets, built from bpa's pinned keys. */
  knownHostsFile: (cluster: string) => string;
  maxParallelHosts: number;
  log: Logger;
}

export function targetOf(
  node: Pick<PlannedNode, 'name' | 'ip'>,
  user: string,
  port: number,
): SshTarget {
  return { node: node.name, address: node.ip, port, user };
}

/**
 * Brings nodes under bpa's SSH control: key login (host key pinned on first use, enforced
 * after); when key login is refused and default credentials are configured, bpa's key is
 * installed with them once, ssh-copy-id style, and key login is checked again. Then the
 * cluster's known_hosts for its installer (`<clusterDir>/known_hosts`, where a Job finds it
 * too) is written from the pinned keys, so ansible checks the same keys.
 */
export class SshAccess implements AccessPort {
  constructor(private readonly opts: SshAccessOptions) {}

  async ensure(cluster: string, nodes: readonly PlannedNode[]): Promise<void> {
    const limit = pLimit(this.opts.maxParallelHosts);
    const failures: string[] = [];
    let firstError: BpaError | undefined;
    await Promise.all(
      nodes.map((n) =>
        limit(async () => {
          try {
            await this.ensureOne(targetOf(n, this.opts.user, this.opts.port));
          } catch (err: unknown) {
            failures.push(`${n.name}: ${messageOf(err)}`);
            if (err instanceof BpaError) firstError ??= err;
          }
        }),
      ),
    );
    if (failures.length) {
      failures.sort();
      const retry = firstError?.retry ?? 'transient';
      throw new BpaError(
        firstError?.code ?? 'SSH_ACCESS_FAILED',
        `cluster ${cluster}: no SSH access to ${failures.length} node(s): ${failures.join('; ')}`,
        retry,
      );
    }
    await this.writeKnownHosts(this.opts.knownHostsFile(cluster), nodes);
  }

  private async ensureOne(target: SshTarget): Promise<void> {
    try {
      await this.opts.pool.run(target, ['true'], { timeoutMs: 30_000 });
      return;
    } catch (err: unknown) {
      if (!(err instanceof BpaError) || err.code !== 'SSH_AUTH' || !this.opts.bootstrap) throw err;
    }
    const creds = await this.opts.bootstrap();
    const publicKey = await readFile(this.opts.publicKeyPath, 'utf8');
    const result = await bootstrapKey(target, creds, publicKey, this.opts.ssh);
    this.opts.log.info(
      { node: target.node, result },
      "bpa's key installed with the bootstrap credentials",
    );
    await this.opts.pool.run(target, ['true'], { timeoutMs: 30_000 });
  }

  /**
   * known_hosts lines for the nodes, from the keys bpa pinned (a pin made before bpa kept the
   * key itself is completed with ssh-keyscan, keeping only the key that matches the pin).
   */
  private async writeKnownHosts(file: string, nodes: readonly PlannedNode[]): Promise<void> {
    const store = new HostKeyStore(this.opts.ssh.knownHostsFile);
    const pinned = await store.read();
    const lines = await Promise.all(
      nodes.map(async (n) => {
        const id = hostPort(n.ip, this.opts.port);
        const pin = pinned[id];
        if (!pin) return undefined;
        const host = knownHostsName(n.ip, this.opts.port);
        if (pin.key) return `${host} ${pin.algorithm} ${pin.key}`;
        const scanned = await keyscan(n.ip, this.opts.port);
        const match = scanned.find((l) => {
          const blob = l.split(' ')[2];
          return (
            blob !== undefined && fingerprintOf(Buffer.from(blob, 'base64')) === pin.fingerprint
          );
        });
        if (!match) {
          throw new StalledError(
            'HOST_KEY_CHANGED',
            `${n.name} (${id}): the host key offered now is not the one bpa pinned (${pin.fingerprint})`,
          );
        }
        return match;
      }),
    );
    const existing = await readFile(file, 'utf8').catch(() => '');
    const fresh = lines.filter((l): l is string => l !== undefined);
    const hosts = new Set(fresh.map((l) => l.split(' ')[0]));
    // A host's line is replaced, not added to: an old key must not linger next to the new one.
    const kept = existing.split('\n').filter((l) => l && !hosts.has(l.split(' ')[0]));
    await writeFileAtomic(file, [...kept, ...fresh].sort().join('\n') + '\n', 0o644);
  }
}

async function keyscan(address: string, port: number): Promise<string[]> {
  const { stdout } = await runProcess(['ssh-keyscan', '-T', '5', '-p', String(port), address], {
    timeoutMs: 15_000,
  }).catch(() => ({ stdout: '' }));
  // ssh-keyscan writes `host type base64` (with [host]:port for other ports).
  return stdout.split('\n').filter((l) => l && !l.startsWith('#'));
}
