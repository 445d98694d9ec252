import http from 'node:http';
import https from 'node:https';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { StalledError, messageOf } from '../util/errors.js';

/**
 * A kubeconfig whose API requests share one keep-alive agent. The client makes a new agent
 * for every request, so every request opened a new connection and made a new TLS context
 * and handshake: a status pass over 3,000 objects made 6,000 of them, their native memory
 * piling up in the process at each reconcile. Here the requests go over kept-alive
 * connections of one agent, a new one only when the client's settings for it change (a CA,
 * a client certificate from a credential plugin). Proxies keep the client's own agents.
 */
export class SharedAgentKubeConfig extends KubeConfig {
  private shared: { key: string; agent: http.Agent } | undefined;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const made = context.getAgent();
    if (!made || (made.constructor !== https.Agent && made.constructor !== http.Agent)) return;
    const options = (made as http.Agent & { options: Record<string, unknown> }).options;
    const key = agentKey(made instanceof https.Agent, options);
    if (this.shared?.key !== key) {
      const Agent = made instanceof https.Agent ? https.Agent : http.Agent;
      this.shared = { key, agent: new Agent({ ...options, keepAlive: true }) };
    }
    context.setAgent(this.shared.agent);
  }
}

/** What tells one agent's settings from another's: TLS material and checks. */
function agentKey(tls: boolean, o: Record<string, unknown>): string {
  const text = (v: unknown): unknown => (Buffer.isBuffer(v) ? v.toString('base64') : v);
  return JSON.stringify([
    tls,
    ...['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'].map((k) =>
      Array.isArray(o[k]) ? (o[k] as unknown[]).map(text) : text(o[k]),
    ),
  ]);
}

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
  const kc = new SharedAgentKubeConfig();
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
