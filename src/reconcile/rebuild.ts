import type { ClusterStatusDoc } from '../report/status.js';
import type { AppliedCluster } from '../state/applied.js';
import type { StateStore } from '../state/store.js';
import type { Logger } from '../util/log.js';
import type { PackageSpec, SiteModel } from '../validate/model.js';

/**
 * The applied state as the repository's reports describe it, for a state directory that was
 * lost (a new volume): nodes, hosts, addresses, plugins, the Kubernetes version and the pod
 * network come from `status/<cluster>.yaml`;
 * the managed packages too, or, from a report without them, as the site lists them now (the
 * next observation of the nodes, fix-drift, corrects any difference). Clusters whose report shows no node are left out.
 */
export function appliedFromReports(
  reports: ReadonlyMap<string, unknown>,
  model: SiteModel | undefined,
): AppliedCluster[] {
  const out: AppliedCluster[] = [];
  for (const doc of reports.values()) {
    const r = doc as ClusterStatusDoc | undefined;
    if (r?.kind !== 'ClusterStatus' || !Array.isArray(r.status?.nodes) || !r.status.nodes.length)
      continue;
    const cluster = model?.clusters.find((c) => c.name === r.metadata.name);
    out.push({
      cluster: r.metadata.name,
      revision: r.status.source?.revision,
      planHash: r.status.source?.planHash,
      appliedAt: new Date(0).toISOString(),
      nodes: r.status.nodes
        .filter((n) => n.name && n.host && n.ip && Array.isArray(n.roles))
        .map((n) => ({
          name: n.name,
          roles: n.roles.filter((x): x is 'master' | 'worker' => x === 'master' || x === 'worker'),
          host: n.host,
          mac: n.mac,
          ip: n.ip,
        })),
      plugins: Array.isArray(r.status.plugins) ? [...r.status.plugins] : [],
      ...(typeof r.status.kubernetesVersion === 'string'
        ? { kubernetesVersion: r.status.kubernetesVersion }
        : {}),
      ...(typeof r.status.podSubnet === 'string' || r.status.podSubnet === null
        ? { podSubnet: r.status.podSubnet }
        : {}),
      ...installerVariablesOf(r.status.installerVariables),
      // Reports of an older bpa carry no software: the site's lists stand in for it.
      packages: {
        master: softwareOf(r.status.software?.master) ?? [...(cluster?.masterSoftware ?? [])],
        worker: softwareOf(r.status.software?.worker) ?? [...(cluster?.workerSoftware ?? [])],
      },
    });
  }
  return out;
}

/** The installer variables a report says the cluster converged with (a ciphertext digest). */
function installerVariablesOf(v: unknown): Pick<AppliedCluster, 'installerVariables' | 'secrets'> {
  const { secret, digest } = (typeof v === 'object' && v !== null ? v : {}) as {
    secret?: unknown;
    digest?: unknown;
  };
  if (typeof secret !== 'string' || typeof digest !== 'string') return {};
  return { installerVariables: secret, secrets: { [secret]: { cipher: digest } } };
}

/**
 * Seeds an empty state directory from the reports, with the packages `model` (the site being
 * reconciled) asks for; returns the clusters it recorded.
 */
export async function rebuildState(
  store: StateStore,
  reports: ReadonlyMap<string, unknown>,
  model: SiteModel,
  log: Logger,
): Promise<string[]> {
  if (
    ![...reports.values()].some(
      (d) => (d as ClusterStatusDoc | undefined)?.kind === 'ClusterStatus',
    )
  )
    return [];
  if ((await store.readApplied()).clusters.size) return [];
  const rebuilt = appliedFromReports(reports, model);
  for (const applied of rebuilt) await store.writeCluster(applied);
  if (rebuilt.length)
    log.warn(
      { clusters: rebuilt.map((c) => c.cluster) },
      'state directory was empty: applied state rebuilt from the status reports',
    );
  return rebuilt.map((c) => c.cluster);
}

function softwareOf(list: unknown): PackageSpec[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list
    .filter(
      (p): p is PackageSpec =>
        typeof p === 'object' && p !== null && typeof (p as PackageSpec).name === 'string',
    )
    .map((p) =>
      typeof p.version === 'string' ? { name: p.name, version: p.version } : { name: p.name },
    );
}
