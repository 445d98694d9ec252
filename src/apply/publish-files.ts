import { join } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import type { PublishPort } from './ports.js';

/**
 * Publishes into the state directory when bpa runs without a bootstrap cluster (a laptop,
 * CI, the demo): the kubeconfig as a 0600 file, the node map as a ConfigMap manifest that
 * `kubectl apply -f` would take.
 */
export class FilePublisher implements PublishPort {
  constructor(private readonly clusterDir: (cluster: string) => string) {}

  async storeKubeconfig(cluster: string, adminConf: string): Promise<string> {
    const file = join(this.clusterDir(cluster), 'kubeconfig');
    await writeFileAtomic(file, adminConf, 0o600);
    return file;
  }

  async publishNodes(
    cluster: string,
    nodes: ReadonlyArray<{ name: string; ip: string; roles: readonly string[] }>,
  ): Promise<string> {
    const file = join(this.clusterDir(cluster), `${cluster}-configmap.yaml`);
    const data = nodeMapData(nodes);
    const lines = Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`);
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cluster}-configmap\n  labels:\n    app.kubernetes.io/managed-by: bpa\n    bpa.akraino.org/cluster: ${cluster}\ndata:\n${lines.join('\n')}\n`;
    await writeFileAtomic(file, text, 0o644);
    return file;
  }
}

/** `MASTER_<node>` / `WORKER_<node>` → IP (ICN); a dual-role node has both keys. */
export function nodeMapData(
  nodes: ReadonlyArray<{ name: string; ip: string; roles: readonly string[] }>,
): Record<string, string> {
  const data: Record<string, string> = {};
  for (const n of nodes) {
    for (const role of n.roles) data[`${role.toUpperCase()}_${n.name}`] = n.ip;
  }
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1)));
}
