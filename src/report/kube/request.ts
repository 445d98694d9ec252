// `bpa reconcile --now`: asks the running controller for a reconcile, as `flux reconcile` does.
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { MANAGED_BY, MANAGED_BY_LABEL, explainApiError } from '../../kube/api.js';
import { StalledError } from '../../util/errors.js';
import { GROUP, PLURALS } from './objects.js';
import { REQUESTED_AT_ANNOTATION } from './writer.js';

/**
 * Sets the requestedAt annotation on the Site objects bpa keeps in the namespace (a site has
 * one) to `value`; bpa serve reconciles at once and echoes it in status.lastHandledReconcileAt.
 * Returns the names of the objects annotated.
 */
export async function requestReconcile(
  kc: KubeConfig,
  namespace: string,
  value: string,
): Promise<string[]> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const path = { group: GROUP, version: 'v1alpha1', namespace, plural: PLURALS.Site };
  const fail = (err: unknown, action: string, verb: string): never => {
    throw explainApiError(
      err,
      'KUBE_STATUS_FAILED',
      action,
      `${verb} on sites.${GROUP} in namespace ${namespace}`,
    );
  };
  const list = (await api
    .listNamespacedCustomObject({ ...path, labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` })
    .catch((err: unknown) => fail(err, 'list the Site objects', 'list'))) as {
    items: Array<{ metadata: { name: string } }>;
  };
  const names = list.items.map((i) => i.metadata.name);
  if (!names.length)
    throw new StalledError(
      'KUBE_STATUS_FAILED',
      `no Site object of bpa in namespace ${namespace}: bpa serve writes it with --kube-status once it has read a site with a Site document`,
    );
  for (const name of names)
    await api
      .patchNamespacedCustomObject(
        {
          ...path,
          name,
          body: { metadata: { annotations: { [REQUESTED_AT_ANNOTATION]: value } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      .catch((err: unknown) => fail(err, `annotate Site ${name}`, 'patch'));
  return names;
}
