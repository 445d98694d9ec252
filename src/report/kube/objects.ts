// The objects of bpa's kinds that mirror a site's documents in the bootstrap cluster. Pure.
import { CLUSTER_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from '../../kube/api.js';
import type { LoadedDocument } from '../../load/index.js';
import type { DocRef, SiteModel } from '../../validate/model.js';

export const GROUP = 'bpa.akraino.org';
export const API_VERSION = `${GROUP}/v1alpha1`;
/** The revision of the site an object was last applied from (git sha or site digest). */
export const REVISION_ANNOTATION = `${GROUP}/revision`;
/** The site file the object comes from, so an operator knows where to change it. */
export const SOURCE_ANNOTATION = `${GROUP}/source`;

export type BpaKind = 'Site' | 'Cluster' | 'Provisioning' | 'Software';
export const PLURALS: Readonly<Record<BpaKind, string>> = {
  Site: 'sites',
  Cluster: 'clusters',
  Provisioning: 'provisionings',
  Software: 'softwares',
};
export const KINDS = Object.keys(PLURALS) as BpaKind[];

export interface SiteObject {
  apiVersion: string;
  kind: BpaKind;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  spec: unknown;
}

/** One object to keep, and the cluster whose status it shows (none: the Site). */
export interface DesiredObject {
  object: SiteObject;
  cluster?: string;
}

/**
 * One object per Site, Cluster, Provisioning and Software document of a checked site, in the
 * bootstrap namespace: the document's name, labels and spec (its namespace, if any, is the
 * site's own affair), bpa's label and the revision and file as annotations.
 */
export function desiredObjects(
  model: SiteModel,
  documents: readonly LoadedDocument[],
  namespace: string,
  revision: string,
): DesiredObject[] {
  const out = new Map<string, DesiredObject>();
  const add = (ref: DocRef | undefined, cluster: string | undefined): void => {
    const doc = ref && documents.find((d) => d.file === ref.file && d.index === ref.doc);
    const value = doc?.value as
      | { kind?: unknown; metadata?: { name?: unknown; labels?: unknown }; spec?: unknown }
      | undefined;
    if (!doc || !value || typeof value.kind !== 'string' || !(value.kind in PLURALS)) return;
    const kind = value.kind as BpaKind;
    const name = String(value.metadata?.name ?? '');
    if (!name || out.has(`${kind}/${name}`)) return;
    const labels = stringMap(value.metadata?.labels);
    out.set(`${kind}/${name}`, {
      object: {
        apiVersion: API_VERSION,
        kind,
        metadata: {
          name,
          namespace,
          labels: {
            ...labels,
            [MANAGED_BY_LABEL]: MANAGED_BY,
            ...(cluster ? { [CLUSTER_LABEL]: cluster } : {}),
          },
          annotations: { [REVISION_ANNOTATION]: revision, [SOURCE_ANNOTATION]: doc.file },
        },
        spec: value.spec ?? {},
      },
      ...(cluster ? { cluster } : {}),
    });
  };
  add(model.site?.ref, undefined);
  for (const c of model.clusters) {
    add(c.clusterRef, c.name);
    add(c.provisioning.ref, c.name);
    add(c.software?.ref, c.name);
  }
  return [...out.values()];
}

function stringMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null) return {};
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );
}
