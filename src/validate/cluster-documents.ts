import { error, warning, type Problem } from '../util/problem.js';
import { at, meta, spec, type Doc } from './doc.js';
import { ObjectMemo } from '../util/memo.js';

/** The documents of one cluster. */
export interface ClusterDocuments {
  name: string;
  /** The Cluster document, when the site has one (ICN also allows a bare Provisioning). */
  cluster?: Doc;
  prov: Doc;
  soft?: Doc;
}

/** Documents by kind, then by (namespace/)name; a repeated name is a DUPLICATE_NAME. */
export function indexByName(docs: Doc[], problems: Problem[]): Map<string, Map<string, Doc>> {
  const byKind = new Map<string, Map<string, Doc>>();
  for (const d of docs) {
    const key = nameKey(d);
    if (!key) continue; // the schema reported it
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

/**
 * Each document's name as indexByName keys it, kept for as long as the document lives (under
 * `bpa serve`, the documents of unchanged files are the same objects; none is changed once
 * read): 13,000 documents' metadata are not read again at every reconcile.
 */
const nameKeys = new ObjectMemo<Doc, string>();

/** `namespace/name` for metal3 objects, the name for bpa's own kinds; '' without a name. */
function nameKey(d: Doc): string {
  let key = nameKeys.get(d);
  if (key === undefined) {
    const m = meta(d);
    // bpa's own kinds are named across the site (a namespace exported with an ICN object
    // changes nothing); metal3 objects are namespaced, as in the cluster.
    const namespaced = d.kind === 'BareMetalHost' || d.kind === 'HardwareData';
    key = !m.name ? '' : namespaced && m.namespace ? `${m.namespace}/${m.name}` : m.name;
    nameKeys.set(d, key);
  }
  return key;
}

/**
 * Which documents make each cluster: a Cluster with the Provisioning and Software it names, a
 * Provisioning no Cluster names (a cluster of its own, as in ICN), and Software joined to its
 * cluster by label. Every reference that cannot be followed, every document claimed twice and
 * every label that disagrees is a problem; the clusters that can be built are returned.
 */
export function clusterDocuments(
  byKind: Map<string, Map<string, Doc>>,
  problems: Problem[],
  opts: { incomplete: boolean; hasInvalid: Set<string> },
): ClusterDocuments[] {
  const { hasInvalid } = opts;
  const provisionings = byKind.get('Provisioning') ?? new Map<string, Doc>();
  const softwares = byKind.get('Software') ?? new Map<string, Doc>();
  const claimedProv = new Map<string, string>(); // provisioning name → cluster
  const claimedSoft = new Set<string>();
  const plans: ClusterDocuments[] = [];
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
  return plans;
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
