import { error, type Problem } from '../util/problem.js';
import type { KindedDocument } from './classify.js';
import { clusterDocuments, indexByName } from './cluster-documents.js';
import { buildCluster } from './cluster-model.js';
import { at, meta, ref, spec, type Doc } from './doc.js';
import { buildInventory } from './inventory.js';
import type { ClusterModel, SiteModel, SiteSettings } from './model.js';
import { checkMacsAcrossSite, checkPackageConflicts } from './site-rules.js';
import { checkWaves, clusterDay2, siteDay2, siteWaves } from './day2.js';

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
    const model = buildCluster(c.name, c.cluster, c.prov, c.soft, problems);
    if (model) clusters.push({ ...model, day2: clusterDay2(c.cluster, day2, problems) });
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
