/**
 * A site that defines nothing is refused, not planned. Planned, an empty site (an empty
 * directory, a wrong --path, a repository emptied but for status/) says that every cluster
 * applied before is gone: with pruning allowed, remove everything. So does a directory of
 * hosts only (--path pointing at the inventory). A site that is meant to have no cluster says
 * so with a Site document. One file given on its own (`bpa validate hosts.yaml`) is checked
 * as it is: a file of hosts or of software is a part of a site, not a wrong path.
 */
import { error, hasErrors, type Problem } from '../util/problem.js';
import type { SiteModel } from './model.js';

/**
 * The problems of a site without content. `where` names the site as the operator gave it (the
 * path, or the repository, ref and path).
 */
export function checkSiteNotEmpty(
  loaded: { documents: readonly unknown[]; problems: readonly Problem[] },
  model: SiteModel | undefined,
  where: string,
  oneFile = false,
): Problem[] {
  // Files that could not be read or parsed have their own errors.
  if (hasErrors(loaded.problems)) return [];
  if (loaded.documents.length === 0) {
    return [
      error(
        'SITE_EMPTY',
        `the site ${where} holds no YAML documents (status/ and files .bpaignore names are not read): is the path right? An empty site is not planned: it would remove every cluster applied before`,
      ),
    ];
  }
  if (!oneFile && model && model.clusters.length === 0 && !model.site) {
    return [
      error(
        'SITE_NO_CLUSTERS',
        `the site ${where} has ${model.inventory.length ? 'hosts' : 'documents'} but no cluster (no Cluster or Provisioning document) and no Site document: is the path right? A site meant to have no cluster says so with a Site document`,
      ),
    ];
  }
  return [];
}
