import type { PackageSpec, Role } from '../validate/model.js';

/** What bpa last applied to one cluster: the basis of every later plan. */
export interface AppliedNode {
  name: string;
  roles: Role[];
  /** Host key (namespace/name) the node runs on. */
  host: string;
  mac: string;
  ip: string;
}

export interface AppliedCluster {
  cluster: string;
  /** Source revision (git sha) or a digest of the local site, when known. */
  revision?: string;
  planHash?: string;
  appliedAt: string;
  flavour?: string;
  /**
   * The pod network the cluster was provisioned with; null when it was provisioned without
   * one (the installer's default); absent when not known (applied by an older bpa).
   */
  podSubnet?: string | null;
  nodes: AppliedNode[];
  plugins: string[];
  /** The Kubernetes version bpa last installed or upgraded to (absent: the installer's default). */
  kubernetesVersion?: string;
  /** The packages bpa manages on each role, as last applied (names and pins). */
  packages: { master: PackageSpec[]; worker: PackageSpec[] };
  /** Digest of the registry mirror configuration bpa last wrote to the nodes (runtime/). */
  registryMirror?: string;
  /**
   * The site Secret whose values the installer last converged the whole cluster with
   * (provision-cluster, reconfigure-cluster); its record in `secrets` is from that run.
   */
  installerVariables?: string;
  /** The site Secrets bpa last acted with on this cluster (plan/secrets.ts); never a value. */
  secrets?: Record<string, SecretRecord>;
}

/** A site Secret as applied: its ciphertext digest, and an HMAC of its values when known. */
export interface SecretRecord {
  cipher: string;
  /** HMAC-SHA256 of the values under the state directory's secrets.key. */
  value?: string;
}

export interface AppliedState {
  clusters: Map<string, AppliedCluster>;
}

export function emptyState(): AppliedState {
  return { clusters: new Map() };
}
