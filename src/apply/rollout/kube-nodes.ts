import { CoreV1Api, type V1APIResourceList, type V1Pod } from '@kubernetes/client-node';
import { SharedAgentKubeConfig } from '../../kube/kubeconfig.js';
import { explainApiError, httpStatus, serverMessage } from '../../kube/api.js';
import { BpaError, StalledError, TransientError } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import type { RolloutSettings } from '../../validate/model.js';
import type { NodeOpsPort } from '../ports.js';

type EvictionApiVersion = 'policy/v1' | 'policy/v1beta1';

export interface KubeNodeOpsOptions {
  /** The application cluster's kubeconfig (admin.conf bpa stored after provisioning). */
  kubeconfig: (cluster: string) => Promise<string>;
  log: Logger;
  /** How long to wait between eviction retries and Ready polls (2 s). */
  pollMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Cordon, drain and readiness of a node through its own cluster's API, as `kubectl drain`
 * does it: cordon (spec.unschedulable), evict every pod through the Eviction API except
 * mirror pods and (when allowed) DaemonSet pods, retry an eviction a PodDisruptionBudget
 * refuses (429) until the drain timeout, then wait until the evicted pods are gone.
 */
export class KubeNodeOps implements NodeOpsPort {
  private readonly clients = new Map<string, CoreV1Api>();
  /** The Eviction apiVersion each cluster's `pods/eviction` takes, discovered once. */
  private readonly evictionVersions = new Map<string, EvictionApiVersion>();

  constructor(private readonly opts: KubeNodeOpsOptions) {}

  async cordon(cluster: string, node: string): Promise<void> {
    await this.setUnschedulable(cluster, node, true);
  }

  async uncordon(cluster: string, node: string): Promise<void> {
    await this.setUnschedulable(cluster, node, false);
  }

  async drain(
    cluster: string,
    node: string,
    opts: RolloutSettings['drain'],
    signal?: AbortSignal,
  ): Promise<void> {
    const api = await this.api(cluster);
    const deadline = Date.now() + opts.timeoutMs;
    const evictionVersion = await this.evictionVersion(api, cluster, node);
    const pods = await this.podsOn(api, cluster, node);
    const evict: V1Pod[] = [];
    const blocking: string[] = [];
    for (const pod of pods) {
      const id = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
      if (pod.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined) continue;
      if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
        evict.push(pod);
        continue;
      }
      const daemon = pod.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet');
      if (daemon) {
        if (!opts.ignoreDaemonSets)
          blocking.push(`${id} (a DaemonSet pod; ignoreDaemonSets is false)`);
        continue;
      }
      const emptyDir = pod.spec?.volumes?.some((v) => v.emptyDir !== undefined);
      if (emptyDir && !opts.deleteEmptyDirData) {
        blocking.push(`${id} (emptyDir data would be lost; deleteEmptyDirData is false)`);
        continue;
      }
      evict.push(pod);
    }
    if (blocking.length)
      throw new StalledError('DRAIN_FAILED', `node ${node}: cannot drain: ${blocking.join(', ')}`);
    const pending = new Map(evict.map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p]));
    let refused = '';
    while (pending.size) {
      for (const [id, pod] of pending) {
        const name = pod.metadata?.name ?? '';
        const namespace = pod.metadata?.namespace ?? 'default';
        try {
          await api.createNamespacedPodEviction({
            name,
            namespace,
            body: {
              apiVersion: evictionVersion,
              kind: 'Eviction',
              metadata: { name, namespace },
              ...(opts.gracePeriodSeconds !== undefined
                ? { deleteOptions: { gracePeriodSeconds: opts.gracePeriodSeconds } }
                : {}),
            },
          });
          pending.delete(id);
          this.opts.log.info({ cluster, node, pod: id }, 'pod evicted');
        } catch (err: unknown) {
          const status = httpStatus(err);
          if (status === 404) {
            pending.delete(id);
          } else if (status === 429) {
            // A PodDisruptionBudget allows no disruption now: retried until the timeout.
            refused = `${id}: ${serverMessage(err) ?? 'refused by its PodDisruptionBudget'}`;
          } else {
            // A cluster upgraded since the discovery may take another version: read it again
            // on the next drain rather than repeat a refused one.
            if (status === 400) this.evictionVersions.delete(cluster);
            throw explainApiError(
              err,
              'DRAIN_FAILED',
              `node ${node}: evicting pod ${id}`,
              'create on pods/eviction',
            );
          }
        }
      }
      if (!pending.size) break;
      if (Date.now() >= deadline)
        throw new StalledError(
          'DRAIN_FAILED',
          `node ${node}: drain timed out after ${Math.round(opts.timeoutMs / 1000)}s; ${pending.size} pod(s) not evicted, last refusal: ${refused}`,
        );
      await this.wait(signal);
    }
    // Evicted pods terminate on their grace period: the node is drained once they are gone.
    for (;;) {
      const left = (await this.podsOn(api, cluster, node)).filter((p) =>
        evict.some((e) => e.metadata?.uid === p.metadata?.uid),
      );
      if (!left.length) return;
      if (Date.now() >= deadline)
        throw new StalledError(
          'DRAIN_FAILED',
          `node ${node}: drain timed out after ${Math.round(opts.timeoutMs / 1000)}s waiting for ${left.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).join(', ')} to terminate`,
        );
      await this.wait(signal);
    }
  }

  async waitReady(
    cluster: string,
    node: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const api = await this.api(cluster);
    const deadline = Date.now() + timeoutMs;
    let last = 'not read yet';
    for (;;) {
      try {
        const n = await api.readNode({ name: node });
        const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
        if (ready?.status === 'True') return;
        last = ready
          ? `Ready is ${ready.status}${ready.reason ? ` (${ready.reason})` : ''}`
          : 'no Ready condition';
      } catch (err: unknown) {
        last = explainApiError(
          err,
          'NODE_NOT_READY',
          `reading node ${node}`,
          'get on nodes',
        ).message;
      }
      if (Date.now() >= deadline)
        throw new StalledError(
          'NODE_NOT_READY',
          `node ${node}: not Ready within ${Math.round(timeoutMs / 1000)}s after the change: ${last}`,
        );
      await this.wait(signal);
    }
  }

  private async setUnschedulable(cluster: string, node: string, value: boolean): Promise<void> {
    const api = await this.api(cluster);
    try {
      await api.patchNode({
        name: node,
        body: [{ op: 'add', path: '/spec/unschedulable', value }],
      });
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'DRAIN_FAILED',
        `${value ? 'cordoning' : 'uncordoning'} node ${node}`,
        'patch on nodes',
      );
    }
    this.opts.log.info({ cluster, node }, value ? 'node cordoned' : 'node uncordoned');
  }

  private async podsOn(api: CoreV1Api, cluster: string, node: string): Promise<V1Pod[]> {
    try {
      const list = await api.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
      return list.items;
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'DRAIN_FAILED',
        `listing the pods of node ${node} (${cluster})`,
        'list on pods',
      );
    }
  }

  /**
   * The Eviction version the cluster's API server takes, from its /api/v1 resource list, where
   * `pods/eviction` names the group/version of its kind (as `kubectl drain` picks it): policy/v1
   * from Kubernetes 1.22, policy/v1beta1 before, whose servers refuse a policy/v1 body with
   * 400. Read once per cluster connection, as the client is: only an upgrade of the cluster
   * changes it, and an eviction the server rejects forgets it (see drain).
   */
  private async evictionVersion(
    api: CoreV1Api,
    cluster: string,
    node: string,
  ): Promise<EvictionApiVersion> {
    const known = this.evictionVersions.get(cluster);
    if (known) return known;
    let list: V1APIResourceList;
    try {
      list = await api.getAPIResources();
    } catch (err: unknown) {
      throw explainApiError(
        err,
        'DRAIN_FAILED',
        `node ${node}: reading which Eviction API cluster ${cluster} serves (GET /api/v1)`,
        'get on the /api/v1 discovery document',
      );
    }
    const sub = list.resources.find((r) => r.name === 'pods/eviction' && r.kind === 'Eviction');
    let version: EvictionApiVersion | undefined;
    // Servers before 1.8 list the subresource without its group/version; policy/v1beta1 is the
    // only Eviction they have.
    if (sub && !sub.group && !sub.version) version = 'policy/v1beta1';
    else if (sub?.group === 'policy' && (sub.version === 'v1' || sub.version === 'v1beta1'))
      version = `policy/${sub.version}`;
    if (!version) {
      const listed = sub ? `; it lists pods/eviction as ${sub.group}/${sub.version}` : '';
      throw new StalledError(
        'DRAIN_FAILED',
        `node ${node}: cluster ${cluster} serves no Eviction API bpa can use (pods/eviction taking policy/v1 or policy/v1beta1${listed}), so its nodes cannot be drained; use a Kubernetes version bpa supports (1.20 or newer) or turn off rollout.drain`,
      );
    }
    this.evictionVersions.set(cluster, version);
    this.opts.log.debug({ cluster, apiVersion: version }, 'eviction API discovered');
    return version;
  }

  private async api(cluster: string): Promise<CoreV1Api> {
    let api = this.clients.get(cluster);
    if (api) return api;
    const kc = new SharedAgentKubeConfig();
    try {
      kc.loadFromString(await this.opts.kubeconfig(cluster));
    } catch (err: unknown) {
      if (err instanceof BpaError) throw err;
      throw new StalledError(
        'CLUSTER_KUBECONFIG_UNUSABLE',
        `cluster ${cluster}: its kubeconfig cannot be read, so its nodes cannot be drained: ${(err as Error).message}`,
      );
    }
    api = kc.makeApiClient(CoreV1Api);
    this.clients.set(cluster, api);
    return api;
  }

  private wait(signal?: AbortSignal): Promise<void> {
    const ms = this.opts.pollMs ?? 2_000;
    if (this.opts.sleep) return this.opts.sleep(ms, signal);
    return new Promise((resolve, reject) => {
      if (signal?.aborted)
        return reject(new TransientError('APPLY_INTERRUPTED', 'bpa is stopping'));
      const t = setTimeout(resolve, ms);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          reject(new TransientError('APPLY_INTERRUPTED', 'bpa is stopping'));
        },
        { once: true },
      );
    });
  }
}
