import { resolve } from 'node:path';
import type { Config } from '../config/options.js';
import type { InventorySpec, ObserveOptions } from './index.js';

/**
 * Where the observe stage looks, from the settings: the inventory (a directory, the
 * Kubernetes API, or the site itself) and the lease files. Lease files the site names are
 * read inside the site only; the operator's from anywhere.
 */
export function observeOptions(
  cfg: Config,
  site: Record<string, unknown> | undefined,
  root: string,
  env: NodeJS.ProcessEnv,
  now: number,
): ObserveOptions {
  const fromSite = cfg.sources.leases === 'site';
  return {
    inventory: inventorySpec(cfg, site, root, env),
    leaseFiles: cfg.leases.map((p) => (fromSite ? resolve(root, p) : resolve(p))),
    leaseRoot: fromSite ? root : undefined,
    now,
    stateDir: cfg.stateDir,
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
