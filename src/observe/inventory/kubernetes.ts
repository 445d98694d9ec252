import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import { StalledError, TransientError } from '../../util/errors.js';
import type { Metal3Object } from './hosts.js';

export const METAL3_GROUP = 'metal3.io';
export const METAL3_VERSION = 'v1alpha1';

export interface KubernetesInventoryOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to list; empty lists all namespaces. */
  namespaces: readonly string[];
  /** Objects per page (`limit`). */
  pageSize?: number;
}

interface ListPage {
  items?: Metal3Object[];
  metadata?: { continue?: string };
}

/**
 * Lists BareMetalHosts and HardwareData through the Kubernetes API, page by page. A missing
 * HardwareData API (older metal3) is not an error: hardware then comes from the hosts'
 * status. Errors name the cause: RBAC (403), a missing API (404), a configured namespace
 * that does not exist, a server fault (5xx, transient).
 */
export async function listMetal3Objects(opts: KubernetesInventoryOptions): Promise<Metal3Object[]> {
  const api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
  const namespaces = opts.namespaces.length ? [...opts.namespaces] : [undefined];
  const objects: Metal3Object[] = [];
  for (const namespace of namespaces) {
    const hosts = await listAll(api, 'baremetalhosts', namespace, opts.pageSize ?? 500, true);
    if (hosts.length === 0 && namespace !== undefined)
      await checkNamespace(opts.kubeConfig, namespace);
    for (const item of hosts) {
      objects.push({
        ...item,
        kind: 'BareMetalHost',
        origin: `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`,
      });
    }
    for (const item of await listAll(api, 'hardwaredata', namespace, opts.pageSize ?? 500, false)) {
      objects.push({
        ...item,
        kind: 'HardwareData',
        origin: `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`,
      });
    }
  }
  return objects;
}

/**
 * For hosts taken from a watch's cache: a configured namespace without any BareMetalHost is
 * checked as a listed one is (checkNamespace).
 */
export async function checkNamespaces(
  kc: KubeConfig,
  namespaces: readonly string[],
  objects: readonly Metal3Object[],
): Promise<void> {
  const seen = new Set<string>();
  for (const o of objects)
    if (o.kind === 'BareMetalHost' && o.metadata?.namespace) seen.add(o.metadata.namespace);
  for (const namespace of namespaces) if (!seen.has(namespace)) await checkNamespace(kc, namespace);
}

/**
 * The API server lists a namespace that does not exist as empty, exactly like one without
 * hosts. When a configured namespace gives no BareMetalHost, bpa asks whether it exists, so
 * a misspelt namespace stops with its name instead of planning against no hosts. When the
 * answer is not a clear 404 (no permission to read namespaces, a busy server), the empty
 * list stands.
 */
async function checkNamespace(kc: KubeConfig, namespace: string): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).readNamespace({ name: namespace });
  } catch (err: unknown) {
    if (err instanceof ApiException && err.code === 404) {
      throw new StalledError(
        'INVENTORY_UNAVAILABLE',
        `cannot list baremetalhosts.${METAL3_GROUP} in namespace ${namespace}: the namespace does not exist; check the inventory namespaces (Site spec.inventory.namespaces, BPA_NAMESPACES or --inventory-namespace)`,
        { cause: err },
      );
    }
  }
}

async function listAll(
  api: CustomObjectsApi,
  plural: string,
  namespace: string | undefined,
  limit: number,
  required: boolean,
): Promise<Metal3Object[]> {
  const out: Metal3Object[] = [];
  let token: string | undefined;
  const where = namespace ? `namespace ${namespace}` : 'all namespaces';
  do {
    let page: ListPage;
    try {
      const common = {
        group: METAL3_GROUP,
        version: METAL3_VERSION,
        plural,
        limit,
        _continue: token,
      };
      page = (
        namespace
          ? await api.listNamespacedCustomObject({ ...common, namespace })
          : await api.listClusterCustomObject(common)
      ) as ListPage;
    } catch (err: unknown) {
      if (!required && err instanceof ApiException && err.code === 404) return out;
      throw explain(err, `${plural}.${METAL3_GROUP} in ${where}`);
    }
    out.push(...(page.items ?? []));
    token = page.metadata?.continue || undefined;
  } while (token);
  return out;
}

function explain(err: unknown, what: string): Error {
  if (err instanceof ApiException) {
    const reason = statusMessage(err.body);
    switch (err.code) {
      case 401:
        return new StalledError(
          'INVENTORY_UNAVAILABLE',
          `cannot list ${what}: not authenticated (401); check the kubeconfig credentials`,
          { cause: err },
        );
      case 403:
        return new StalledError(
          'INVENTORY_UNAVAILABLE',
          `cannot list ${what}: forbidden (403)${reason}; grant list on baremetalhosts and hardwaredata (metal3.io) to bpa's service account`,
          { cause: err },
        );
      case 404:
        return new StalledError(
          'INVENTORY_UNAVAILABLE',
          `cannot list ${what}: not found (404)${reason}; the ${METAL3_GROUP}/${METAL3_VERSION} API is not served: is metal3 installed (its CRDs)?`,
          { cause: err },
        );
      default:
        if (err.code >= 500 || err.code === 429) {
          return new TransientError(
            'INVENTORY_UNAVAILABLE',
            `cannot list ${what}: server error (${err.code})${reason}; will retry`,
            { cause: err },
          );
        }
        return new StalledError(
          'INVENTORY_UNAVAILABLE',
          `cannot list ${what}: HTTP ${err.code}${reason}`,
          { cause: err },
        );
    }
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new TransientError('INVENTORY_UNAVAILABLE', `cannot list ${what}: ${msg}`, { cause: err });
}

function statusMessage(body: unknown): string {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return '';
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? `: ${message}` : '';
}
