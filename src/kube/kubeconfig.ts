import { KubeConfig } from '@kubernetes/client-node';
import { StalledError, messageOf } from '../util/errors.js';

export interface KubeConfigSource {
  /** A kubeconfig file given in bpa's configuration. */
  file?: string;
  env: NodeJS.ProcessEnv;
  /** Also honour KUBECONFIG (for the inventory, as kubectl does). */
  kubeconfigEnv?: boolean;
  /** What the cluster is for, in messages: "the inventory", "the bootstrap cluster". */
  what: string;
}

/**
 * The one way bpa loads a kubeconfig: the given file, else KUBECONFIG (when asked), else the
 * in-cluster service account when bpa runs in a pod. Undefined when there is none; a file that
 * cannot be read or is not a usable kubeconfig is KUBECONFIG_INVALID, naming the file.
 */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig | undefined {
  const file = source.file || (source.kubeconfigEnv ? source.env['KUBECONFIG'] : undefined);
  const kc = new KubeConfig();
  if (file) {
    try {
      kc.loadFromFile(file);
    } catch (err: unknown) {
      const code = (err as { code?: string }).code;
      throw new StalledError(
        'KUBECONFIG_INVALID',
        code === 'ENOENT'
          ? `kubeconfig ${file} for ${source.what} does not exist; check the path`
          : `kubeconfig ${file} for ${source.what} cannot be read (${code ?? firstLine(messageOf(err))}); check that it is a kubeconfig (kubectl --kubeconfig ${file} get ns)`,
      );
    }
    if (!kc.getCurrentCluster())
      throw new StalledError(
        'KUBECONFIG_INVALID',
        `kubeconfig ${file} for ${source.what} has no current context with a cluster; set current-context`,
      );
    return kc;
  }
  if (source.env['KUBERNETES_SERVICE_HOST']) {
    try {
      kc.loadFromCluster();
    } catch (err: unknown) {
      throw new StalledError(
        'KUBECONFIG_INVALID',
        `the in-cluster configuration for ${source.what} cannot be loaded: ${firstLine(messageOf(err))}`,
      );
    }
    return kc;
  }
  return undefined;
}

/** As loadKubeConfig, but a missing configuration is NO_KUBECONFIG saying what to give. */
export function requireKubeConfig(source: KubeConfigSource, hint: string): KubeConfig {
  const kc = loadKubeConfig(source);
  if (!kc) throw new StalledError('NO_KUBECONFIG', `${source.what} needs a kubeconfig: ${hint}`);
  return kc;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
