import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Config } from '../config/options.js';
import { ensureKeyPair } from './keys.js';
import { SshPool } from './pool.js';

export interface OpenSsh {
  keys: { privateKey: string; publicKey: string };
  options: { privateKeyPath: string; knownHostsFile: string };
  pool: SshPool;
}

/**
 * bpa's SSH key pair and connection pool, opened once per run when first needed: by apply,
 * which generates the key on first use, and by plan, which only reads what nodes report and
 * never creates a key.
 */
export class SshSession {
  private opened: Promise<OpenSsh> | undefined;

  /** The configured key, or the one bpa generates in the state directory. */
  static keyPath(cfg: Config): string {
    return cfg.sshKey ? resolve(cfg.sshKey) : join(cfg.stateDir, 'ssh', 'id_ed25519');
  }

  open(cfg: Config): Promise<OpenSsh> {
    this.opened ??= (async () => {
      const sshDir = join(cfg.stateDir, 'ssh');
      const keys = await ensureKeyPair(SshSession.keyPath(cfg), !cfg.sshKey);
      const options = {
        privateKeyPath: keys.privateKey,
        knownHostsFile: join(sshDir, 'known_hosts.json'),
      };
      return { keys, options, pool: new SshPool(options) };
    })();
    return this.opened;
  }

  async close(): Promise<void> {
    const s = await this.opened?.catch(() => undefined);
    await s?.pool.close();
  }
}

/** Whether bpa has a key to reach the nodes with, without creating one. */
export async function hasSshKey(cfg: Config): Promise<boolean> {
  try {
    await access(SshSession.keyPath(cfg));
    return true;
  } catch {
    return false;
  }
}
