import { createHash } from 'node:crypto';
import type { ExecutionSettings } from '../config/execution.js';
import type { ClusterPlan } from './types.js';

/** JSON with object keys sorted at every level: the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        ),
      );
    }
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The plan hash covers what would run and nothing else: per cluster its nodes (name, roles,
 * host, MAC, address, change), its actions (kind, nodes, plugins, packages), the inventory
 * the installer gets (with its etcd members and pod subnet) and what is recorded as applied; and how bpa acts (installer commands,
 * package mirror, SSH user and port). Explanations (reasons, placement texts, notes) and where
 * things were read from (file paths, lease line numbers) are left out, so the same site and
 * world give the same hash from any directory and any order of lease lines.
 */
export function planHash(
  clusters: readonly ClusterPlan[],
  settings: ExecutionSettings | undefined,
): string {
  return sha256Hex(
    canonicalJson({
      clusters: clusters.map((c) => ({
        cluster: c.cluster,
        flavour: c.flavour,
        nodes: c.nodes.map((n) => ({
          name: n.name,
          roles: n.roles,
          host: n.host,
          mac: n.mac,
          ip: n.ip,
          change: n.change,
        })),
        actions: c.actions.map((a) => ({
          kind: a.kind,
          nodes: a.nodes,
          plugins: a.plugins,
          packages: a.packages,
        })),
        hostsIni: c.hostsIni,
        etcd: c.etcd,
        podSubnet: c.podSubnet,
        desired: c.desired,
        rollout: c.rollout,
      })),
      settings,
    }),
  );
}
