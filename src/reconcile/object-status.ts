/**
 * The seam between a reconcile and the status of bpa's objects in the cluster (operator mode):
 * after the reports are written, the report step hands this function the objects the site was
 * read from and the reports (`status/<cluster>.yaml`, `status/site.yaml`) of this run.
 *
 * Issue 29 (kstatus conditions, printer columns, Events, `reconcile.bpa.akraino.org/requestedAt`)
 * plugs in here: it writes each object's status subresource from its cluster's report, and
 * never the spec of an object bpa did not create. Until then operator mode keeps its reports in
 * the state directory only (`<stateDir>/kubernetes/site/status/`), which the status page and
 * `bpa status` read as in git mode.
 */
import type { SiteObjectRef } from '../source/site-source.js';
import type { RunContext } from './context.js';

export interface ObjectStatusInput {
  /** The Site, Cluster, Provisioning and Software objects of the run, those being deleted included. */
  objects: readonly SiteObjectRef[];
  /** The reports of the run, by site-relative path. */
  reports: ReadonlyMap<string, string>;
  ctx: RunContext;
}

export function writeObjectStatus(input: ObjectStatusInput): Promise<void> {
  input.ctx.log.debug(
    { objects: input.objects.length, reports: input.reports.size },
    'object status: not written yet (issue 29)',
  );
  return Promise.resolve();
}
