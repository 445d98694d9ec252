import { resolve } from 'node:path';
import { ConfigError } from '../util/errors.js';
import type { Config } from './options.js';

export interface InstallerCommands {
  provision: string;
  scale: string;
  /** Empty: the flavour has no add-on path (plugins are refused at plan time). */
  addon: string;
  remove: string;
  /** Resets every node of the inventory: a whole cluster removed (remove-cluster). */
  reset: string;
  upgrade: string;
}

/**
 * How bpa will act on the nodes, beyond what the site says: the installer commands it runs,
 * the package mirror it writes, the SSH user and port it (and the installer) log in with.
 * Part of the plan and of its hash: a change here changes what would run.
 */
export interface ExecutionSettings {
  installer: {
    mode: string;
    image?: string;
    commands: InstallerCommands;
    /** The Kubespray checkout `{kubesprayDir}` stands for (absolute; in job mode, in the image). */
    kubesprayDir?: string;
  };
  packageMirror?: string;
  /**
   * `bpa`: the mirror is bpa's own signed apt repository; its public key is written to the
   * nodes (at BPA_APT_KEY) before the mirror line that names it.
   */
  packageMirrorKey?: 'bpa';
  /** The site's registry, as the nodes' container runtimes are told to pull through it. */
  registryMirror?: RegistryMirror;
  ssh: { user: string; port: number };
  /**
   * The site Secrets the Site refers to, name → sha256 of their ciphertext (validate/secrets.ts):
   * a changed value changes the hash, a plaintext never enters it.
   */
  secrets?: Record<string, string>;
  /** The Secret whose values are the installer's variables (Site installer.variables). */
  installerVariables?: string;
}

export interface RegistryMirror {
  /** The mirror as the nodes reach it (--registry-url), e.g. `http://172.22.0.2:5000`. */
  url: string;
  /** Upstream registries pulled through it, e.g. `docker.io`, `registry.k8s.io`. */
  registries: string[];
  runtimes: Array<'containerd' | 'docker'>;
  /** Credentials containerd sends to the mirror: a site Secret, by name and ciphertext digest. */
  credentials?: { secret: string; digest: string };
}

/**
 * The Site's `registryMirror` at the address the operator gives (--registry-url): the site
 * says which registries and runtimes, the operator where the registry is.
 */
function registryMirror(
  cfg: Config,
  value: unknown,
  secrets: ReadonlyMap<string, string>,
): RegistryMirror | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const spec = value as { registries?: unknown; runtimes?: unknown };
  if (!cfg.registryUrl)
    throw new ConfigError(
      'setting registryUrl: the Site document asks for a registryMirror, and bpa has no --registry-url (BPA_REGISTRY_URL) saying where the nodes reach the site registry; set it to the registry beside bpa, e.g. http://172.22.0.2:5000',
      'site',
    );
  const list = (v: unknown, dflt: string[]): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : dflt;
  const secret = refName((value as { credentials?: unknown }).credentials);
  const digest = secret === undefined ? undefined : secrets.get(secret);
  return {
    ...(secret !== undefined && digest !== undefined ? { credentials: { secret, digest } } : {}),
    url: cfg.registryUrl.replace(/\/+$/, ''),
    registries: [...new Set(list(spec.registries, ['docker.io']))].sort(),
    runtimes: [
      ...new Set(list(spec.runtimes, ['containerd'])),
    ].sort() as RegistryMirror['runtimes'],
  };
}

/** Where nodes keep the public key of bpa's apt repository (`signed-by=`). */
export const BPA_APT_KEY = '/etc/apt/keyrings/bpa-artifacts.asc';

/**
 * The apt source line of bpa's own repository (Site `packageMirror: {bpa: true}`), at the
 * address nodes reach bpa at (--artifacts-url): signed-by its key when bpa signs it
 * (--apt-signing-key), else trusted as it is.
 */
function bpaMirror(cfg: Config): Pick<ExecutionSettings, 'packageMirror' | 'packageMirrorKey'> {
  if (!cfg.artifactsUrl)
    throw new ConfigError(
      'setting artifactsUrl: the Site document says packageMirror: {bpa: true}, and bpa has no --artifacts-url (BPA_ARTIFACTS_URL) saying where the nodes reach its apt repository; set it to the address of bpa serve on the provisioning network, e.g. http://172.22.0.2:8080',
      'site',
    );
  const url = `${cfg.artifactsUrl.replace(/\/+$/, '')}/artifacts/apt/`;
  return cfg.aptSigningKey
    ? { packageMirror: `deb [signed-by=${BPA_APT_KEY}] ${url} ./`, packageMirrorKey: 'bpa' }
    : { packageMirror: `deb [trusted=yes] ${url} ./` };
}

/** Whether a Site's packageMirror asks for bpa's own repository. */
export function isBpaMirror(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>)['bpa'] === true
  );
}

// Kubespray's own playbooks, run from the operator's checkout (`--kubespray-dir`) with its
// ansible.cfg. cluster.yml leaves the admin kubeconfig in <inventory dir>/artifacts/ only with
// kubeconfig_localhost; remove-node.yml asks for a confirmation on a terminal bpa does not have.
const KUBESPRAY = {
  provision:
    'ansible-playbook -i {inventory} {kubesprayDir}/cluster.yml -e kubeconfig_localhost=true',
  scale: 'ansible-playbook -i {inventory} {kubesprayDir}/scale.yml --limit {nodes}',
  remove:
    'ansible-playbook -i {inventory} {kubesprayDir}/remove-node.yml -e node={nodes} -e skip_confirmation=true',
  upgrade: 'ansible-playbook -i {inventory} {kubesprayDir}/upgrade-cluster.yml --limit {nodes}',
  // reset.yml asks for a confirmation too; it resets every host of the inventory.
  reset: 'ansible-playbook -i {inventory} {kubesprayDir}/reset.yml -e reset_confirmation=yes',
};

/**
 * The commands bpa runs when none are configured, per inventory flavour. KUD deploys with
 * Kubespray, so both flavours scale, remove and upgrade with Kubespray's playbooks; KUD
 * provisions with its own installer and installs its plugins with its configure playbooks.
 * Kubespray has no plugins of its own: its add-ons are its variables (see docs/apply.md).
 */
export function defaultCommands(flavour: string): InstallerCommands {
  return flavour === 'kud'
    ? {
        ...KUBESPRAY,
        provision: 'installer --cluster {cluster} --plugins {plugins}',
        addon: 'ansible-playbook -i {inventory} configure-{plugins}.yml',
      }
    : { ...KUBESPRAY, addon: '' };
}

/** The installer commands of a configuration: the configured ones, else the flavour's. */
export function installerCommands(cfg: Config): InstallerCommands {
  const d = defaultCommands(cfg.flavour);
  return {
    provision: cfg.installerCommand || d.provision,
    scale: cfg.scaleCommand || d.scale,
    addon: cfg.addonCommand || d.addon,
    remove: cfg.removeCommand || d.remove,
    reset: cfg.resetCommand || d.reset,
    upgrade: cfg.upgradeCommand || d.upgrade,
  };
}

/**
 * The Kubespray checkout as an absolute path ('' when none is configured). In job mode it is a
 * path inside the installer image, taken as written.
 */
export function kubesprayDirOf(cfg: Config): string {
  if (!cfg.kubesprayDir || cfg.installerMode === 'job') return cfg.kubesprayDir;
  return resolve(cfg.kubesprayDir);
}

/** `{secret: name}` → name. */
function refName(v: unknown): string | undefined {
  const name = typeof v === 'object' && v !== null ? (v as { secret?: unknown }).secret : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** A site Secret's name and the digest of its ciphertext (validate/secrets.ts). */
export interface SecretDigest {
  name: string;
  digest: string;
}

export function executionSettings(
  cfg: Config,
  site: Record<string, unknown> | undefined,
  siteSecrets: readonly SecretDigest[] = [],
): ExecutionSettings {
  const mirror = site?.['packageMirror'];
  const digests = new Map(siteSecrets.map((s) => [s.name, s.digest]));
  const referred = [
    refName((site?.['ssh'] as Record<string, unknown> | undefined)?.['bootstrapCredentials']),
    refName((site?.['registryMirror'] as Record<string, unknown> | undefined)?.['credentials']),
    refName((site?.['installer'] as Record<string, unknown> | undefined)?.['variables']),
  ].filter((n): n is string => n !== undefined && digests.has(n));
  const variables = refName(
    (site?.['installer'] as Record<string, unknown> | undefined)?.['variables'],
  );
  const kubesprayDir = kubesprayDirOf(cfg);
  return {
    installer: {
      mode: cfg.installerMode,
      ...(cfg.installerMode === 'job' ? { image: cfg.installerImage } : {}),
      commands: installerCommands(cfg),
      ...(kubesprayDir ? { kubesprayDir } : {}),
    },
    ...(typeof mirror === 'string' ? { packageMirror: mirror } : {}),
    ...(isBpaMirror(mirror) ? bpaMirror(cfg) : {}),
    ...(site?.['registryMirror'] !== undefined
      ? { registryMirror: registryMirror(cfg, site['registryMirror'], digests) }
      : {}),
    ssh: { user: cfg.sshUser, port: cfg.sshPort },
    ...(referred.length
      ? {
          secrets: Object.fromEntries(
            [...new Set(referred)].sort().map((n) => [n, digests.get(n) as string]),
          ),
        }
      : {}),
    ...(variables !== undefined && digests.has(variables) ? { installerVariables: variables } : {}),
  };
}
