import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { explainApiError } from '../../kube/api.js';
import { StalledError } from '../../util/errors.js';

/**
 * Where the application cluster's kubeconfig is, as bpa stored it after provisioning: the
 * Secret `<cluster>-kubeconfig` (key `value`) in the bootstrap cluster, or the 0600 file
 * `<clusterDir>/kubeconfig` without one.
 */
export function kubeconfigOf(
  bootstrap: KubeConfig | undefined,
  namespace: string,
  clusterDir: (cluster: string) => string,
): (cluster: string) => Promise<string> {
  return async (cluster) => {
    if (!bootstrap) {
      const file = join(clusterDir(cluster), 'kubeconfig');
      try {
        return await readFile(file, 'utf8');
      } catch (err: unknown) {
        throw new StalledError(
          'CLUSTER_KUBECONFIG_UNUSABLE',
          `cluster ${cluster}: no kubeconfig at ${file} (${(err as { code?: string }).code ?? 'unreadable'}), so its nodes cannot be drained`,
        );
      }
    }
    const name = `${cluster}-kubeconfig`;
    try {
      const secret = await bootstrap
        .makeApiClient(CoreV1Api)
        .readNamespacedSecret({ name, namespace });
      const value = secret.data?.['value'];
      if (!value) throw new Error(`Secret ${namespace}/${name} has no key value`);
      return Buffer.from(value, 'base64').toString('utf8');
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'CLUSTER_KUBECONFIG_UNUSABLE',
        `cluster ${cluster}: reading its kubeconfig (Secret ${namespace}/${name})`,
        `get on secrets in namespace ${namespace}`,
      );
    }
  };
}
