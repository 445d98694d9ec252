import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

/** What a client needs to reach a (fake) API server with a bearer token over plain HTTP. */
export interface ClusterAccess {
  server: string;
  token: string;
  /** Namespace of the context; defaults to `default`. */
  namespace?: string;
  /** Name used for the cluster, user and context entries; defaults to `fake`. */
  name?: string;
}

/** The kubeconfig document as plain data, in the on-disk (kebab-case) layout. */
export function kubeconfigDocument(access: ClusterAccess): Record<string, unknown> {
  const name = access.name ?? 'fake';
  return {
    apiVersion: 'v1',
    kind: 'Config',
    // The client refuses plain http unless TLS verification is explicitly skipped.
    clusters: [{ name, cluster: { server: access.server, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: { token: access.token } }],
    contexts: [
      { name, context: { cluster: name, user: name, namespace: access.namespace ?? 'default' } },
    ],
    'current-context': name,
    preferences: {},
  };
}

export function kubeconfigYaml(access: ClusterAccess): string {
  return stringify(kubeconfigDocument(access));
}

/** Writes a kubeconfig (mode 0600, like a real one holding a token) and returns its path. */
export async function writeKubeconfig(file: string, access: ClusterAccess): Promise<string> {
  await writeFile(file, kubeconfigYaml(access), { mode: 0o600 });
  return file;
}

/** A ready KubeConfig object for the same access, without touching the filesystem. */
export function kubeConfigFor(access: ClusterAccess): KubeConfig {
  const name = access.name ?? 'fake';
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name, server: access.server, skipTLSVerify: true }],
    users: [{ name, token: access.token }],
    contexts: [{ name, cluster: name, user: name, namespace: access.namespace ?? 'default' }],
    currentContext: name,
  });
  return kc;
}
