import { error, type Problem } from '../util/problem.js';
import type { KindedDocument } from './classify.js';
import { clusterDocuments, indexByName } from './cluster-documents.js';
import { buildCluster } from './cluster-model.js';
import { at, meta, ref, spec, type Doc } from './doc.js';
import { buildInventory } from './inventory.js';
import type { ClusterModel, Day2Settings, SiteModel, SiteSettings } from './model.js';
import { checkMacsAcrossSite, checkPackageConflicts } from './site-rules.js';
import { checkWaves, clusterDay2, siteDay2, siteWaves } from './day2.js';
import { ObjectMemo } from '../util/memo.js';

/**
 * The rules that span documents, and the construction of the typed model from documents
 * that passed their schemas. Problems are appended to `problems`.
 */
export function buildModel(
  docs: KindedDocument[],
  problems: Problem[],
  opts: { incomplete: boolean },
): SiteModel {
  const byKind = indexByName(docs, problems);
  // A reference to a document that failed its schema (a bad or missing name) would only
  // repeat that error, so references into such kinds are not reported as unresolved.
  const hasInvalid = new Set(docs.filter((d) => !d.valid).map((d) => d.kind));
  const clusters: ClusterModel[] = [];
  const siteDoc = docs.find((d) => d.kind === 'Site' && d.valid);
  const day2 = siteDay2(siteDoc, problems);
  for (const c of clusterDocuments(byKind, problems, { ...opts, hasInvalid })) {
    const model = clusterModel(c.name, c.cluster, c.prov, c.soft, siteDoc, day2, problems);
    if (model) clusters.push(model);
  }
  clusters.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  checkMacsAcrossSite(clusters, problems);
  checkWaves(siteDoc, clusters, problems);
  checkPackageConflicts(clusters, problems);
  return {
    clusters,
    site: buildSite(docs, problems),
    day2,
    ...(siteWaves(siteDoc) ? { waves: siteWaves(siteDoc) } : {}),
    inventory: buildInventory(docs, problems, 'site'),
  };
}

interface BuiltCluster {
  name: string;
  cluster: Doc | undefined;
  soft: Doc | undefined;
  site: Doc | undefined;
  model: ClusterModel | undefined;
  /** Its problems as found, before positions are added to them. */
  problems: Problem[];
}

/**
 * Cluster models by their Provisioning document, with the other documents they were built
 * from. Under `bpa serve` unchanged files give the same document objects (load/cache.ts), so
 * a cluster whose documents (and the Site document, for its day-2 settings) are all the same
 * gets the same model object and the same problems (copies: positions are added to them
 * later); that lets planning keep what it derived from the model (plan/plan-cache.ts).
 * Documents are never changed once read, nor models once built. A WeakMap: an entry lives as
 * long as its document.
 */
const built = new ObjectMemo<Doc, BuiltCluster>();

function clusterModel(
  name: string,
  cluster: Doc | undefined,
  prov: Doc,
  soft: Doc | undefined,
  site: Doc | undefined,
  day2: Day2Settings,
  problems: Problem[],
): ClusterModel | undefined {
  let b = built.get(prov);
  if (!b || b.name !== name || b.cluster !== cluster || b.soft !== soft || b.site !== site) {
    const own: Problem[] = [];
    const model = buildCluster(name, cluster, prov, soft, own);
    b = {
      name,
      cluster,
      soft,
      site,
      model: model && { ...model, day2: clusterDay2(cluster, day2, own) },
      problems: own.map((p) => ({ ...p })),
    };
    built.set(prov, b);
  }
  for (const p of b.problems) problems.push({ ...p });
  return b.model;
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
