import { isIP } from 'node:net';
import { normalizeMac } from '../util/mac.js';
import { error, pointer, warning, type Problem } from '../util/problem.js';
import { quantityToUnits } from '../util/quantity.js';
import type { KindedDocument } from './classify.js';
import { buildInventory } from './inventory.js';
import type {
  ClusterModel,
  DocRef,
  NodeSpec,
  PackageSpec,
  Role,
  SiteModel,
  SiteSettings,
} from './model.js';
import { RESERVED_NODE_NAMES } from '../util/reserved-names.js';

type Doc = KindedDocument;

interface Meta {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
}

function meta(d: Doc): Meta {
  const m = (d.value['metadata'] ?? {}) as Record<string, unknown>;
  const labels = (
    typeof m['labels'] === 'object' && m['labels'] !== null ? m['labels'] : {}
  ) as Record<string, unknown>;
  const strLabels: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels))
    if (v !== null && v !== undefined) strLabels[k] = String(v);
  return {
    name: typeof m['name'] === 'string' ? m['name'] : '',
    namespace: typeof m['namespace'] === 'string' ? m['namespace'] : undefined,
    labels: strLabels,
  };
}

const at = (d: Doc, ptr: string): Partial<Problem> => ({
  file: d.file,
  doc: d.doc,
  pointer: (d.base ?? '') + ptr,
});
const ref = (d: Doc): DocRef => ({ file: d.file, doc: d.doc });
const spec = (d: Doc): Record<string, unknown> =>
  (d.value['spec'] ?? {}) as Record<string, unknown>;

/**
 * The rules that span documents, and the construction of the typed model from documents
 * that passed their schemas. Problems are appended to `problems`.
 */
export function buildModel(
  docs: Doc[],
  problems: Problem[],
  opts: { incomplete: boolean },
): SiteModel {
  const byKind = indexByName(docs, problems);
  // A reference to a document that failed its schema (a bad or missing name) would only
  // repeat that error, so references into such kinds are not reported as unresolved.
  const hasInvalid = new Set(docs.filter((d) => !d.valid).map((d) => d.kind));
  const clusters = buildClusters(byKind, problems, { ...opts, hasInvalid });
  checkMacsAcrossSite(clusters, problems);
  return {
    clusters,
    site: buildSite(docs, problems),
    inventory: buildInventory(docs, problems, 'site'),
  };
}

/** Documents by kind, then by (namespace/)name; a repeated name is a DUPLICATE_NAME. */
function indexByName(docs: Doc[], problems: Problem[]): Map<string, Map<string, Doc>> {
  const byKind = new Map<string, Map<string, Doc>>();
  for (const d of docs) {
    const m = meta(d);
    if (!m.name) continue; // the schema reported it
    // bpa's own kinds are named across the site (a namespace exported with an ICN object
    // changes nothing); metal3 objects are namespaced, as in the cluster.
    const namespaced = d.kind === 'BareMetalHost' || d.kind === 'HardwareData';
    const key = namespaced && m.namespace ? `${m.namespace}/${m.name}` : m.name;
    let names = byKind.get(d.kind);
    if (!names) byKind.set(d.kind, (names = new Map()));
    const first = names.get(key);
    if (first) {
      problems.push(
        error(
          'DUPLICATE_NAME',
          `${d.kind} "${key}" is already defined in ${first.file}`,
          at(d, '/metadata/name'),
        ),
      );
      continue;
    }
    names.set(key, d);
  }
  return byKind;
}

function buildClusters(
  byKind: Map<string, Map<string, Doc>>,
  problems: Problem[],
  opts: { incomplete: boolean; hasInvalid: Set<string> },
): ClusterModel[] {
  const { hasInvalid } = opts;
  const provisionings = byKind.get('Provisioning') ?? new Map<string, Doc>();
  const softwares = byKind.get('Software') ?? new Map<string, Doc>();
  const claimedProv = new Map<string, string>(); // provisioning name → cluster
  const claimedSoft = new Set<string>();
  const plans: Array<{ name: string; cluster?: Doc; prov: Doc; soft?: Doc }> = [];
  const clusterNames = new Map<string, Doc>();

  for (const c of [...(byKind.get('Cluster') ?? new Map<string, Doc>()).values()]) {
    const m = meta(c);
    const name = m.labels['cluster'] ?? m.name;
    const s = spec(c);
    const dup = clusterNames.get(name);
    if (dup) {
      problems.push(
        error(
          'DUPLICATE_NAME',
          `cluster "${name}" is already declared in ${dup.file}`,
          at(c, '/metadata'),
        ),
      );
      continue;
    }
    clusterNames.set(name, c);
    const provName = typeof s['provisioningCR'] === 'string' ? s['provisioningCR'] : undefined;
    const prov = provName === undefined ? undefined : provisionings.get(provName);
    if (provName !== undefined && !prov) {
      if (!opts.incomplete && !hasInvalid.has('Provisioning')) {
        problems.push(
          error(
            'UNRESOLVED_REFERENCE',
            `spec.provisioningCR: no Provisioning named "${provName}" in the site`,
            at(c, '/spec/provisioningCR'),
          ),
        );
      }
      continue;
    }
    if (!prov) continue; // the schema reported the missing field
    const owner = claimedProv.get(provName ?? '');
    if (owner !== undefined) {
      problems.push(
        error(
          'DUPLICATE_PROVISIONING',
          `Provisioning "${provName}" is already used by cluster "${owner}"`,
          at(c, '/spec/provisioningCR'),
        ),
      );
      continue;
    }
    claimedProv.set(provName ?? '', name);
    checkLabel(name, c, prov, problems);
    let soft: Doc | undefined;
    const softName = typeof s['softwareCR'] === 'string' ? s['softwareCR'] : undefined;
    if (softName !== undefined) {
      soft = softwares.get(softName);
      if (!soft && !opts.incomplete && !hasInvalid.has('Software')) {
        problems.push(
          error(
            'UNRESOLVED_REFERENCE',
            `spec.softwareCR: no Software named "${softName}" in the site`,
            at(c, '/spec/softwareCR'),
          ),
        );
      }
      if (soft) {
        checkLabel(name, c, soft, problems);
        claimedSoft.add(softName);
      }
    }
    plans.push({ name, cluster: c, prov, soft });
  }

  // A Provisioning no Cluster references is a cluster of its own (ICN behaviour).
  for (const [provName, prov] of provisionings) {
    if (claimedProv.has(provName)) continue;
    const m = meta(prov);
    const name = m.labels['cluster'] ?? m.name;
    const existing = plans.find((p) => p.name === name);
    if (existing) {
      problems.push(
        error(
          'DUPLICATE_PROVISIONING',
          `cluster "${name}" already has Provisioning "${meta(existing.prov).name}" (${existing.prov.file}); keep one Provisioning per cluster`,
          at(prov, '/metadata/name'),
        ),
      );
      continue;
    }
    plans.push({ name, prov });
  }

  // Software without an explicit reference joins the cluster named by its label.
  for (const [softName, soft] of softwares) {
    if (claimedSoft.has(softName)) continue;
    const label = meta(soft).labels['cluster'];
    const target = label === undefined ? undefined : plans.find((p) => p.name === label);
    if (!target) {
      problems.push(
        warning(
          'UNUSED_SOFTWARE',
          `Software "${softName}" belongs to no cluster${label === undefined ? ' (it has no cluster label and no Cluster references it)' : ` (no cluster "${label}" in the site)`}`,
          at(soft, '/metadata'),
        ),
      );
      continue;
    }
    if (target.soft) {
      problems.push(
        error(
          'DUPLICATE_SOFTWARE',
          `cluster "${target.name}" already has Software "${meta(target.soft).name}" (${target.soft.file})`,
          at(soft, '/metadata/name'),
        ),
      );
      continue;
    }
    target.soft = soft;
  }

  const clusters: ClusterModel[] = [];
  for (const p of plans) {
    const model = buildCluster(p.name, p.cluster, p.prov, p.soft, problems);
    if (model) clusters.push(model);
  }
  return clusters.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function checkLabel(cluster: string, clusterDoc: Doc, target: Doc, problems: Problem[]): void {
  const label = meta(target).labels['cluster'];
  if (label !== undefined && label !== cluster) {
    problems.push(
      error(
        'CLUSTER_LABEL_MISMATCH',
        `${target.kind} "${meta(target).name}" is labelled cluster "${label}", but Cluster "${meta(clusterDoc).name}" (${clusterDoc.file}) is cluster "${cluster}"`,
        at(target, '/metadata/labels/cluster'),
      ),
    );
  }
}

function buildCluster(
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

/**
 * The entries of one role list with their pointers: `masters` as written, or the 2019 singular
 * `master`, either a list like `masters` or one node's fields (named `master-1`). Both forms
 * in one document are an error: which one is meant cannot be known.
 */
function roleEntries(
  prov: Doc,
  role: Role,
  problems: Problem[],
): Array<{ entry: Record<string, unknown>; ptr: (name: string) => string }> {
  const s = spec(prov);
  const plural = `${role}s`;
  const list = (s[plural] ?? []) as Array<Record<string, unknown>>;
  const out = list.map((entry, i) => ({
    entry,
    ptr: (name: string) => pointer('spec', plural, i, name),
  }));
  const legacy = s[role];
  if (legacy === undefined) return out;
  if (s[plural] !== undefined) {
    problems.push(
      error(
        'INVALID_VALUE',
        `spec.${role} (the 2019 ICN form) and spec.${plural} are both given; move the node(s) of spec.${role} into spec.${plural}`,
        at(prov, pointer('spec', role)),
      ),
    );
    return out;
  }
  if (Array.isArray(legacy)) {
    return (legacy as Array<Record<string, unknown>>).map((entry, i) => ({
      entry,
      ptr: (name: string) => pointer('spec', role, i, name),
    }));
  }
  return [{ entry: { [`${role}-1`]: legacy }, ptr: () => pointer('spec', role) }];
}

const FIELDS = ['mac', 'cpu', 'memoryBytes', 'sriov', 'qat'] as const;

function buildNodes(prov: Doc, problems: Problem[]): NodeSpec[] {
  const s = spec(prov);
  const nodes = new Map<string, NodeSpec>();
  let masters = 0;
  for (const role of ['master', 'worker'] as Role[]) {
    const seen = new Set<string>();
    roleEntries(prov, role, problems).forEach(({ entry, ptr: pointerOf }) => {
      const [name] = Object.keys(entry);
      if (name === undefined) return;
      const ptr = pointerOf(name);
      if (seen.has(name)) {
        problems.push(
          error('DUPLICATE_NODE', `${role}s: node "${name}" is listed twice`, at(prov, ptr)),
        );
        return;
      }
      seen.add(name);
      if (RESERVED_NODE_NAMES.has(name)) {
        problems.push(
          error(
            'RESERVED_NODE_NAME',
            `node "${name}" has the name of an inventory group or keyword; installers select nodes by name (--limit), and this one would select a group`,
            at(prov, ptr),
          ),
        );
      }
      if (role === 'master') masters++;
      const fields = nodeFields((entry[name] ?? {}) as Record<string, unknown>);
      const existing = nodes.get(name);
      if (!existing) {
        nodes.set(name, { name, roles: [role], pointer: ptr, ...fields });
        return;
      }
      existing.roles.push(role);
      for (const f of FIELDS) {
        const a = existing[f];
        const b = fields[f];
        if (a !== undefined && b !== undefined && a !== b) {
          problems.push(
            error(
              'DUAL_ROLE_MISMATCH',
              `node "${name}" is both master and worker, but its ${f === 'memoryBytes' ? 'memory' : f === 'mac' ? 'mac-address' : f} differs (${String(f === 'memoryBytes' ? existing.memory : a)} vs ${String(f === 'memoryBytes' ? fields.memory : b)})`,
              at(prov, ptr),
            ),
          );
        }
      }
      Object.assign(
        existing,
        Object.fromEntries(
          Object.entries(fields).filter(
            ([k, v]) =>
              v !== undefined && (existing as unknown as Record<string, unknown>)[k] === undefined,
          ),
        ),
      );
    });
  }
  if (masters === 0) {
    problems.push(
      error(
        'NO_MASTER',
        `cluster has no master: add at least one entry under spec.masters`,
        at(
          prov,
          s['masters'] !== undefined
            ? '/spec/masters'
            : s['master'] !== undefined
              ? '/spec/master'
              : '/spec',
        ),
      ),
    );
  } else if (masters % 2 === 0) {
    problems.push(
      warning(
        'EVEN_MASTERS',
        `${masters} masters: etcd keeps quorum with a majority, so ${masters - 1} or ${masters + 1} masters are better than ${masters}`,
        at(
          prov,
          s['masters'] === undefined && s['master'] !== undefined
            ? '/spec/master'
            : '/spec/masters',
        ),
      ),
    );
  }
  return [...nodes.values()];
}

function nodeFields(v: Record<string, unknown>): Omit<NodeSpec, 'name' | 'roles' | 'pointer'> {
  const out: Omit<NodeSpec, 'name' | 'roles' | 'pointer'> = {};
  if (typeof v['mac-address'] === 'string') out.mac = normalizeMac(v['mac-address']);
  if (typeof v['cpu'] === 'number') out.cpu = v['cpu'];
  if (typeof v['memory'] === 'string' || typeof v['memory'] === 'number') {
    out.memory = String(v['memory']);
    out.memoryBytes = quantityToUnits(out.memory);
  }
  if (typeof v['sriov'] === 'boolean') out.sriov = v['sriov'];
  if (typeof v['qat'] === 'boolean') out.qat = v['qat'];
  return out;
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

/** One MAC is one host: two nodes of the site (in any cluster) may not share it. */
function checkMacsAcrossSite(clusters: ClusterModel[], problems: Problem[]): void {
  const owners = new Map<string, string>();
  for (const c of clusters) {
    for (const n of c.nodes) {
      if (!n.mac) continue;
      const who = `${c.name}/${n.name}`;
      const first = owners.get(n.mac);
      if (first !== undefined && first !== who) {
        problems.push(
          error(
            'DUPLICATE_MAC',
            `mac-address ${n.mac} of node "${n.name}" is already used by node ${first}`,
            {
              file: c.provisioning.ref.file,
              doc: c.provisioning.ref.doc,
              pointer: `${n.pointer}/mac-address`,
            },
          ),
        );
        continue;
      }
      owners.set(n.mac, who);
    }
  }
}

function buildSite(docs: Doc[], problems: Problem[]): SiteSettings | undefined {
  const sites = docs.filter((d) => d.kind === 'Site');
  for (const extra of sites.slice(1)) {
    problems.push(
      error(
        'MULTIPLE_SITES',
        `a site has at most one Site document; the first is in ${sites[0]?.file}`,
        at(extra, ''),
      ),
    );
  }
  const first = sites[0];
  if (!first || !first.valid) return undefined;
  return { name: meta(first).name, ref: ref(first), spec: spec(first) };
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
