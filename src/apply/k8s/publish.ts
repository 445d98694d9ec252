import {
  CoreV1Api,
  type KubeConfig,
  type V1ConfigMap,
  type V1Secret,
} from '@kubernetes/client-node';
import {
  CLUSTER_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  explainApiError,
  httpStatus,
  labelValue,
} from '../../kube/api.js';
import { StalledError, TransientError } from '../../util/errors.js';
import { retry } from '../../util/retry.js';

/** Write attempts before giving up on a object someone else keeps changing. */
const ATTEMPTS = 3;
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;

export interface PublishedNode {
  name: string;
  ip: string;
  roles: ('master' | 'worker')[];
}

/**
 * Stores the application cluster's kubeconfig as Secret `<cluster>-kubeconfig` (key `value`,
 * the Cluster API convention). Writes only when the content differs; a concurrent change is
 * met by reading again and retrying with the new resourceVersion.
 */
export async function storeKubeconfigSecret(
  kc: KubeConfig,
  namespace: string,
  cluster: string,
  adminConf: string,
): Promise<void> {
  const name = `${cluster}-kubeconfig`;
  const data = { value: Buffer.from(adminConf, 'utf8').toString('base64') };
  const labels = publishLabels(cluster);
  const core = kc.makeApiClient(CoreV1Api);
  await converge<V1Secret>({
    what: `Secret ${namespace}/${name}`,
    permission: `get, create and update on secrets in namespace ${namespace}`,
    read: () => core.readNamespacedSecret({ name, namespace }),
    create: () =>
      core.createNamespacedSecret({
        namespace,
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace, labels },
          type: 'Opaque',
          data,
        },
      }),
    upToDate: (s) =>
      s.type === 'Opaque' && sameMap(s.data, data) && hasLabels(s.metadata?.labels, labels),
    replace: (s) => {
      if (s.type !== undefined && s.type !== 'Opaque') {
        // The type of a Secret cannot change; replacing it would only be refused.
        throw new StalledError(
          'PUBLISH_CONFLICT',
          `Secret ${namespace}/${name} exists with type ${s.type}, not Opaque; delete it so bpa can write the kubeconfig`,
        );
      }
      return core.replaceNamespacedSecret({
        name,
        namespace,
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { ...s.metadata, labels: { ...s.metadata?.labels, ...labels } },
          type: 'Opaque',
          data,
        },
      });
    },
  });
}

/**
 * Publishes ConfigMap `<cluster>-configmap` with `MASTER_<node>` / `WORKER_<node>` → IP, as
 * ICN did (a node with both roles gets both keys). The data is replaced as a whole, so nodes
 * removed from the cluster disappear from it.
 */
export async function publishNodeConfigMap(
  kc: KubeConfig,
  namespace: string,
  cluster: string,
  nodes: readonly PublishedNode[],
): Promise<void> {
  const name = `${cluster}-configmap`;
  const data = nodeData(name, nodes);
  const labels = publishLabels(cluster);
  const core = kc.makeApiClient(CoreV1Api);
  await converge<V1ConfigMap>({
    what: `ConfigMap ${namespace}/${name}`,
    permission: `get, create and update on configmaps in namespace ${namespace}`,
    read: () => core.readNamespacedConfigMap({ name, namespace }),
    create: () =>
      core.createNamespacedConfigMap({
        namespace,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data },
      }),
    upToDate: (c) =>
      sameMap(c.data, data) &&
      Object.keys(c.binaryData ?? {}).length === 0 &&
      hasLabels(c.metadata?.labels, labels),
    replace: (c) =>
      core.replaceNamespacedConfigMap({
        name,
        namespace,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { ...c.metadata, labels: { ...c.metadata?.labels, ...labels } },
          data,
        },
      }),
  });
}

/** The ConfigMap data for the nodes; an IP given twice for one key is a caller's bug. */
export function nodeData(
  configMap: string,
  nodes: readonly PublishedNode[],
): Record<string, string> {
  const data: Record<string, string> = {};
  for (const node of nodes) {
    for (const role of new Set(node.roles)) {
      const key = `${role === 'master' ? 'MASTER' : 'WORKER'}_${node.name}`;
      if (!CONFIGMAP_KEY.test(key)) {
        throw new StalledError(
          'PUBLISH_INVALID',
          `node name ${JSON.stringify(node.name)} cannot form a key of ConfigMap ${configMap}`,
        );
      }
      const earlier = data[key];
      if (earlier !== undefined && earlier !== node.ip) {
        throw new StalledError(
          'PUBLISH_INVALID',
          `node ${node.name} is listed twice with different IPs (${earlier}, ${node.ip})`,
        );
      }
      data[key] = node.ip;
    }
  }
  return data;
}

function publishLabels(cluster: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY, [CLUSTER_LABEL]: labelValue(cluster) };
}

interface Converge<T> {
  what: string;
  permission: string;
  read: () => Promise<T>;
  create: () => Promise<T>;
  upToDate: (current: T) => boolean;
  replace: (current: T) => Promise<T>;
}

/** Read, compare, then create or replace (with the resourceVersion read); re-read on 409. */
async function converge<T>(c: Converge<T>): Promise<void> {
  const attempt = async (): Promise<void> => {
    let current: T | undefined;
    try {
      current = await c.read();
    } catch (err: unknown) {
      if (httpStatus(err) !== 404)
        throw explainApiError(err, 'PUBLISH_FAILED', `reading ${c.what}`, c.permission);
    }
    try {
      if (current === undefined) await c.create();
      else if (!c.upToDate(current)) await c.replace(current);
    } catch (err: unknown) {
      if (err instanceof StalledError) throw err;
      // 409: created or changed by someone else since the read; read again.
      if (httpStatus(err) === 409) throw new Conflict();
      throw explainApiError(err, 'PUBLISH_FAILED', `writing ${c.what}`, c.permission);
    }
  };
  try {
    await retry(attempt, { attempts: ATTEMPTS, retryIf: (err) => err instanceof Conflict });
  } catch (err: unknown) {
    if (!(err instanceof Conflict)) throw err;
    throw new TransientError(
      'PUBLISH_CONFLICT',
      `${c.what} kept changing while bpa wrote it (${ATTEMPTS} conflicts); will retry`,
    );
  }
}

/** Someone else wrote the object between bpa's read and its write. */
class Conflict extends Error {}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const have = a ?? {};
  const keys = Object.keys(b);
  return Object.keys(have).length === keys.length && keys.every((k) => have[k] === b[k]);
}

function hasLabels(
  have: Record<string, string> | undefined,
  want: Record<string, string>,
): boolean {
  return Object.entries(want).every(([k, v]) => have?.[k] === v);
}

/**
 * Deletes what bpa published for a cluster (operator mode, `deletionPolicy: Delete`): Secret
 * `<cluster>-kubeconfig` and ConfigMap `<cluster>-configmap`, only when they carry bpa's
 * labels for that cluster (someone else's object of the same name is left alone). Gone
 * already is done.
 */
export async function deletePublished(
  kc: KubeConfig,
  namespace: string,
  cluster: string,
): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const labels = publishLabels(cluster);
  const deleted: string[] = [];
  const remove = async (
    kind: 'Secret' | 'ConfigMap',
    name: string,
    read: () => Promise<{ metadata?: { labels?: Record<string, string> } }>,
    del: () => Promise<unknown>,
  ): Promise<void> => {
    const what = `${kind} ${namespace}/${name}`;
    const permission = `get and delete on ${kind === 'Secret' ? 'secrets' : 'configmaps'} in namespace ${namespace}`;
    try {
      const obj = await read();
      if (!hasLabels(obj.metadata?.labels, labels)) return;
      await del();
      deleted.push(what);
    } catch (err: unknown) {
      if (httpStatus(err) === 404) return;
      throw explainApiError(err, 'KUBE_API_ERROR', `deleting ${what}`, permission);
    }
  };
  const secret = `${cluster}-kubeconfig`;
  const configMap = `${cluster}-configmap`;
  await remove(
    'Secret',
    secret,
    () => core.readNamespacedSecret({ name: secret, namespace }),
    () => core.deleteNamespacedSecret({ name: secret, namespace }),
  );
  await remove(
    'ConfigMap',
    configMap,
    () => core.readNamespacedConfigMap({ name: configMap, namespace }),
    () => core.deleteNamespacedConfigMap({ name: configMap, namespace }),
  );
  return deleted;
}
