import type { KubeConfig } from '@kubernetes/client-node';
import { publishNodeConfigMap, storeKubeconfigSecret } from './k8s/publish.js';
import type { PublishPort } from './ports.js';

/** Publishes into the bootstrap cluster: Secret `<cluster>-kubeconfig`, ConfigMap `<cluster>-configmap`. */
export class KubePublisher implements PublishPort {
  constructor(
    private readonly kc: KubeConfig,
    private readonly namespace: string,
  ) {}

  async storeKubeconfig(cluster: string, adminConf: string): Promise<string> {
    await storeKubeconfigSecret(this.kc, this.namespace, cluster, adminConf);
    return `Secret ${this.namespace}/${cluster}-kubeconfig`;
  }

  async publishNodes(
    cluster: string,
    nodes: ReadonlyArray<{ name: string; ip: string; roles: ReadonlyArray<'master' | 'worker'> }>,
  ): Promise<string> {
    await publishNodeConfigMap(
      this.kc,
      this.namespace,
      cluster,
      nodes.map((n) => ({ name: n.name, ip: n.ip, roles: [...n.roles] })),
    );
    return `ConfigMap ${this.namespace}/${cluster}-configmap`;
  }
}
