import { isIP } from 'node:net';
import { error, pointer, warning, type Problem } from '../util/problem.js';
import { at, meta, ref, spec, type Doc } from './doc.js';
import type { ClusterModel, PackageSpec } from './model.js';
import { buildNodes } from './nodes.js';

/** The typed model of one cluster from its documents; undefined when one failed its schema. */
export function buildCluster(
  name: string,
  clusterDoc: Doc | undefined,
  prov: Doc,
  soft: Doc | undefined,
  problems: Problem[],
): ClusterModel | undefined {
  if (!prov.valid || (soft && !soft.valid)) return undefined;
  const m = meta(clusterDoc ?? prov);
  const s = spec(prov);
  checkDeprecated(prov, problems);
  const nodes = buildNodes(prov, problems);
  const podSubnet = typeof s['PodSubnet'] === 'string' ? s['PodSubnet'] : undefined;
  if (podSubnet !== undefined && !isCidr(podSubnet)) {
    problems.push(
      error(
        'INVALID_CIDR',
        `PodSubnet: ${JSON.stringify(podSubnet)} is not a valid CIDR`,
        at(prov, '/spec/PodSubnet'),
      ),
    );
  }
  const plugins = [...new Set(((s['KUDPlugins'] ?? []) as unknown[]).map(String))];
  const kubernetesVersion =
    typeof s['kubernetesVersion'] === 'string' ? s['kubernetesVersion'] : undefined;
  const softSpec = soft ? spec(soft) : {};
  return {
    name,
    labels: { ...meta(prov).labels, ...m.labels },
    owner: m.labels['owner'] ?? meta(prov).labels['owner'],
    clusterType: m.labels['cluster-type'] ?? meta(prov).labels['cluster-type'],
    clusterRef: clusterDoc ? ref(clusterDoc) : undefined,
    provisioning: { name: meta(prov).name, ref: ref(prov) },
    software: soft ? { name: meta(soft).name, ref: ref(soft) } : undefined,
    nodes,
    plugins,
    podSubnet,
    ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    masterSoftware: soft ? packages(soft, 'masterSoftware', softSpec, problems) : [],
    workerSoftware: soft ? packages(soft, 'workerSoftware', softSpec, problems) : [],
  };
}

/**
 * Fields of the 2019 ICN Provisioning CR, with what replaces each. `master` and `worker` are
 * read (as masters and workers); the others named places on the operator's machine that bpa
 * keeps in its own configuration, and are ignored.
 */
const DEPRECATED: Record<string, string> = {
  master:
    'is read as spec.masters (one node named master-1, or the list as written); write spec.masters instead',
  worker:
    'is read as spec.workers (one node named worker-1, or the list as written); write spec.workers instead',
  hostfile:
    "is ignored: bpa writes each cluster's inventory itself, to <state>/clusters/<cluster>/hosts.ini; remove the field",
  kudInstallerPath:
    "is ignored: the installer is the controller's configuration (--installer-command, BPA_INSTALLER_COMMAND), never a path from the site; remove the field",
  dhcpLeaseFile:
    "is ignored: lease files are Site spec.leases.files (inside the site) or the controller's --leases (BPA_LEASES); remove the field",
  multiClusterDir:
    "is ignored: each cluster's directory is <state>/clusters/<cluster>/ under bpa's --state directory; remove the field",
};

function checkDeprecated(prov: Doc, problems: Problem[]): void {
  const s = spec(prov);
  for (const [field, instead] of Object.entries(DEPRECATED)) {
    if (s[field] === undefined) continue;
    problems.push(
      warning(
        'DEPRECATED_FIELD',
        `spec.${field} (a 2019 ICN field) ${instead}`,
        at(prov, pointer('spec', field)),
      ),
    );
  }
}

function packages(
  d: Doc,
  field: string,
  s: Record<string, unknown>,
  problems: Problem[],
): PackageSpec[] {
  const list = (s[field] ?? []) as unknown[];
  const out: PackageSpec[] = [];
  const seen = new Set<string>();
  list.forEach((item, i) => {
    let p: PackageSpec;
    if (typeof item === 'string') p = { name: item };
    else {
      const [name] = Object.keys(item as object);
      if (name === undefined) return;
      const v = (item as Record<string, { version?: unknown } | null>)[name];
      p = v && typeof v.version === 'string' ? { name, version: v.version } : { name };
    }
    if (seen.has(p.name)) {
      problems.push(
        error(
          'DUPLICATE_PACKAGE',
          `${field}: package "${p.name}" is listed twice`,
          at(d, pointer('spec', field, i)),
        ),
      );
      return;
    }
    seen.add(p.name);
    out.push(p);
  });
  return out;
}

function isCidr(text: string): boolean {
  const slash = text.lastIndexOf('/');
  if (slash === -1) return false;
  const addr = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix)) return false;
  const family = isIP(addr);
  const bits = Number(prefix);
  return (family === 4 && bits <= 32) || (family === 6 && bits <= 128);
}
