/**
 * Every setting bpa takes, declared once: its flag, environment variable, where it can come
 * from in the Site document, its default and its description. Flags, `--help` and the docs
 * come from here. Precedence: default ← Site document ← environment (BPA_*) ← flag.
 */
export interface OptionSpec<T> {
  /** commander flag syntax. */
  flag: string;
  env: string;
  /** Path in the Site document's spec, when the setting may be written there. */
  site?: string[];
  /**
   * The setting runs code on the machine bpa runs on (a command, an image): the Site value
   * counts only with --allow-site-commands (see docs/site-format.md, the trust model).
   */
  runsCode?: boolean;
  default: T;
  description: string;
  parse: (raw: string) => T;
  choices?: readonly string[];
}

const str = (raw: string): string => raw;
const bool = (raw: string): boolean => /^(1|true|yes|on)$/i.test(raw);
const list = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const int = (raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`not a positive integer: ${raw}`);
  return n;
};

export const OPTIONS = {
  stateDir: {
    flag: '--state <dir>',
    env: 'BPA_STATE_DIR',
    default: '.bpa-state',
    description: 'state directory: applied state, journal, cluster directories',
    parse: str,
  } as OptionSpec<string>,
  flavour: {
    flag: '--flavour <flavour>',
    env: 'BPA_FLAVOUR',
    site: ['installer', 'flavour'],
    default: 'kud',
    choices: ['kud', 'kubespray'],
    description: 'inventory (hosts.ini) flavour: kud or kubespray',
    parse: str,
  } as OptionSpec<string>,
  prune: {
    flag: '--prune',
    env: 'BPA_PRUNE',
    site: ['prune'],
    default: false,
    description: 'allow remove-nodes and remove-packages',
    parse: bool,
  } as OptionSpec<boolean>,
  inventoryDir: {
    flag: '--inventory <dir>',
    env: 'BPA_INVENTORY_DIR',
    default: '',
    description:
      'read BareMetalHost/HardwareData documents from this directory instead of the site',
    parse: str,
  } as OptionSpec<string>,
  kubeconfig: {
    flag: '--kubeconfig <file>',
    env: 'BPA_KUBECONFIG',
    default: '',
    description:
      'list BareMetalHosts from the Kubernetes API with this kubeconfig (KUBECONFIG or in-cluster config otherwise, when the Site says source: kubernetes)',
    parse: str,
  } as OptionSpec<string>,
  namespaces: {
    flag: '--namespace <ns...>',
    env: 'BPA_NAMESPACES',
    site: ['inventory', 'namespaces'],
    default: [],
    description: 'namespaces to list BareMetalHosts in (default: all)',
    parse: list,
  } as OptionSpec<string[]>,
  leases: {
    flag: '--leases <file...>',
    env: 'BPA_LEASES',
    site: ['leases', 'files'],
    default: [],
    description:
      'DHCP lease files (ISC dhcpd, dnsmasq, Kea CSV), anywhere on this machine; a Site names only files inside the site',
    parse: list,
  } as OptionSpec<string[]>,
  ipOrder: {
    flag: '--ip-order <sources>',
    env: 'BPA_IP_ORDER',
    site: ['leases', 'ipOrder'],
    default: ['lease', 'inventory'],
    description: 'where node addresses come from, first match wins: lease,inventory',
    parse: list,
  } as OptionSpec<string[]>,
  maxParallelHosts: {
    flag: '--max-parallel-hosts <n>',
    env: 'BPA_MAX_PARALLEL_HOSTS',
    site: ['concurrency', 'maxParallelHosts'],
    default: 10,
    description: 'hosts worked on at once',
    parse: int,
  } as OptionSpec<number>,
  installerMode: {
    flag: '--installer-mode <mode>',
    env: 'BPA_INSTALLER_MODE',
    site: ['installer', 'mode'],
    default: 'local',
    choices: ['local', 'job'],
    description:
      'run the installer as a local process or as a Kubernetes Job in the bootstrap cluster',
    parse: str,
  } as OptionSpec<string>,
  installerCommand: {
    flag: '--installer-command <template>',
    env: 'BPA_INSTALLER_COMMAND',
    site: ['installer', 'command'],
    runsCode: true,
    default: '',
    description:
      'provision command; placeholders {cluster} {clusterDir} {inventory} {plugins} {nodes} {podSubnet} (default per flavour, see docs)',
    parse: str,
  } as OptionSpec<string>,
  scaleCommand: {
    flag: '--scale-command <template>',
    env: 'BPA_SCALE_COMMAND',
    site: ['installer', 'scaleCommand'],
    runsCode: true,
    default: '',
    description: 'add-nodes command, run for the new nodes only ({nodes})',
    parse: str,
  } as OptionSpec<string>,
  addonCommand: {
    flag: '--addon-command <template>',
    env: 'BPA_ADDON_COMMAND',
    site: ['installer', 'addonCommand'],
    runsCode: true,
    default: '',
    description: 'install-plugins command, run once per added plugin ({plugins})',
    parse: str,
  } as OptionSpec<string>,
  removeCommand: {
    flag: '--remove-command <template>',
    env: 'BPA_REMOVE_COMMAND',
    site: ['installer', 'removeCommand'],
    runsCode: true,
    default: '',
    description: 'remove-nodes command, run for the removed nodes only ({nodes})',
    parse: str,
  } as OptionSpec<string>,
  installerTimeout: {
    flag: '--installer-timeout <seconds>',
    env: 'BPA_INSTALLER_TIMEOUT',
    site: ['installer', 'timeoutSeconds'],
    default: 7200,
    description: 'seconds an installer run may take before it is stopped',
    parse: int,
  } as OptionSpec<number>,
  installerImage: {
    flag: '--installer-image <image>',
    env: 'BPA_INSTALLER_IMAGE',
    site: ['installer', 'image'],
    runsCode: true,
    default: '',
    description: 'container image of the installer Job (job mode)',
    parse: str,
  } as OptionSpec<string>,
  sshUser: {
    flag: '--ssh-user <user>',
    env: 'BPA_SSH_USER',
    site: ['ssh', 'user'],
    default: 'root',
    description: 'user bpa and the installer log in as on the nodes',
    parse: str,
  } as OptionSpec<string>,
  sshPort: {
    flag: '--ssh-port <port>',
    env: 'BPA_SSH_PORT',
    site: ['ssh', 'port'],
    default: 22,
    description: 'SSH port of the nodes',
    parse: int,
  } as OptionSpec<number>,
  sshKey: {
    flag: '--ssh-key <file>',
    env: 'BPA_SSH_KEY',
    default: '',
    description: "bpa's private SSH key (default: <state>/ssh/id_ed25519, generated on first use)",
    parse: str,
  } as OptionSpec<string>,
  bootstrapCredentials: {
    flag: '--bootstrap-credentials <file>',
    env: 'BPA_BOOTSTRAP_CREDENTIALS',
    default: '',
    description:
      "file with the nodes' default username/password, used once to install bpa's key (never in the site repository)",
    parse: str,
  } as OptionSpec<string>,
  bootstrapKubeconfig: {
    flag: '--bootstrap-kubeconfig <file>',
    env: 'BPA_BOOTSTRAP_KUBECONFIG',
    default: '',
    description:
      'kubeconfig of the bootstrap cluster: kubeconfig Secrets, node ConfigMaps and installer Jobs go there (in-cluster config when running in a pod)',
    parse: str,
  } as OptionSpec<string>,
  namespace: {
    flag: '--bootstrap-namespace <ns>',
    env: 'BPA_NAMESPACE',
    default: 'bpa-system',
    description: 'namespace of Secrets, ConfigMaps and Jobs in the bootstrap cluster',
    parse: str,
  } as OptionSpec<string>,
  stateClaim: {
    flag: '--state-claim <name>',
    env: 'BPA_STATE_CLAIM',
    default: 'bpa-state',
    description: "PersistentVolumeClaim of bpa's state, mounted by installer Jobs (job mode)",
    parse: str,
  } as OptionSpec<string>,
  sshKeySecret: {
    flag: '--ssh-key-secret <name>',
    env: 'BPA_SSH_KEY_SECRET',
    site: ['ssh', 'keySecret'],
    default: 'bpa-ssh-key',
    description: "Secret with bpa's SSH private key, mounted by installer Jobs (job mode)",
    parse: str,
  } as OptionSpec<string>,
  repoUrl: {
    flag: '--repo <url>',
    env: 'BPA_REPO_URL',
    default: '',
    description: 'site repository to follow, over HTTP(S)',
    parse: str,
  } as OptionSpec<string>,
  ref: {
    flag: '--ref <ref>',
    env: 'BPA_REF',
    default: 'main',
    description: 'branch, tag or commit of the site repository',
    parse: str,
  } as OptionSpec<string>,
  path: {
    flag: '--path <path>',
    env: 'BPA_PATH',
    default: '.',
    description: 'site directory inside the repository',
    parse: str,
  } as OptionSpec<string>,
  statusBranch: {
    flag: '--status-branch <branch>',
    env: 'BPA_STATUS_BRANCH',
    default: '',
    description: 'push status commits to this branch instead of the followed one',
    parse: str,
  } as OptionSpec<string>,
  gitUsername: {
    flag: '--git-username <user>',
    env: 'BPA_GIT_USERNAME',
    default: '',
    description: 'user for HTTP basic auth to the repository',
    parse: str,
  } as OptionSpec<string>,
  gitTokenFile: {
    flag: '--git-token-file <file>',
    env: 'BPA_GIT_TOKEN_FILE',
    default: '',
    description:
      'file holding the token or password for the repository (BPA_GIT_TOKEN works too; never logged)',
    parse: str,
  } as OptionSpec<string>,
  interval: {
    flag: '--interval <duration>',
    env: 'BPA_INTERVAL',
    default: '5m',
    description: 'how often to poll the repository (e.g. 30s, 5m, 1h); jittered by 10%',
    parse: str,
  } as OptionSpec<string>,
  resyncInterval: {
    flag: '--resync-interval <duration>',
    env: 'BPA_RESYNC_INTERVAL',
    default: '1h',
    description:
      'how often to reconcile fully (nodes, packages) even when the repository did not change',
    parse: str,
  } as OptionSpec<string>,
  listen: {
    flag: '--listen <addr>',
    env: 'BPA_LISTEN',
    default: ':8080',
    description: 'address of the HTTP server: health, readiness, metrics, webhook, status API',
    parse: str,
  } as OptionSpec<string>,
  webhookSecretFile: {
    flag: '--webhook-secret-file <file>',
    env: 'BPA_WEBHOOK_SECRET_FILE',
    default: '',
    description: 'file holding the webhook HMAC secret; without one, POST /hooks/git is disabled',
    parse: str,
  } as OptionSpec<string>,
  leaderElect: {
    flag: '--leader-elect',
    env: 'BPA_LEADER_ELECT',
    default: false,
    description: 'elect a leader with a coordination.k8s.io Lease, so only one replica applies',
    parse: bool,
  } as OptionSpec<boolean>,
  verifySignatures: {
    flag: '--verify-signatures',
    env: 'BPA_VERIFY_SIGNATURES',
    default: false,
    description:
      'apply only commits signed by a trusted key (OpenPGP: --trusted-keys, SSH: --allowed-signers); others are rejected',
    parse: bool,
  } as OptionSpec<boolean>,
  trustedKeys: {
    flag: '--trusted-keys <file>',
    env: 'BPA_TRUSTED_KEYS',
    default: '',
    description: 'OpenPGP public keys (gpg --export [--armor]) trusted to sign site commits',
    parse: str,
  } as OptionSpec<string>,
  allowedSigners: {
    flag: '--allowed-signers <file>',
    env: 'BPA_ALLOWED_SIGNERS',
    default: '',
    description: 'OpenSSH allowed_signers file of SSH keys trusted to sign site commits',
    parse: str,
  } as OptionSpec<string>,
  allowSiteCommands: {
    flag: '--allow-site-commands',
    env: 'BPA_ALLOW_SITE_COMMANDS',
    default: false,
    description:
      'let the Site document set what runs on this machine (installer commands and image) and any package mirror: whoever can push to the site can then run code here',
    parse: bool,
  } as OptionSpec<boolean>,
  packageMirrors: {
    flag: '--package-mirrors <url...>',
    env: 'BPA_PACKAGE_MIRRORS',
    default: [],
    description:
      'apt repositories (URL prefixes, e.g. http://mirror.site.example/ubuntu) a Site packageMirror may name without --allow-site-commands',
    parse: list,
  } as OptionSpec<string[]>,
  planHash: {
    flag: '--plan-hash <hash>',
    env: 'BPA_PLAN_HASH',
    default: '',
    description: 'apply only if the current plan has this hash (or a prefix of it)',
    parse: str,
  } as OptionSpec<string>,
} as const;

export type OptionName = keyof typeof OPTIONS;
type ValueOf<K extends OptionName> = (typeof OPTIONS)[K] extends OptionSpec<infer T> ? T : never;
export type Config = { [K in OptionName]: ValueOf<K> } & {
  sources: Partial<Record<OptionName, 'default' | 'site' | 'env' | 'flag'>>;
};

/**
 * Resolves settings. `flags` are commander's parsed values (undefined when not given), `env`
 * the environment, `site` the Site document's spec (or undefined).
 */
export function resolveConfig(
  names: readonly OptionName[],
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  site: Record<string, unknown> | undefined,
): Config {
  const out: Record<string, unknown> = {};
  const sources: Config['sources'] = {};
  // Never from the site itself: the site may not grant itself the right to run code here.
  const allow = OPTIONS.allowSiteCommands;
  const siteRunsCode =
    flags['allowSiteCommands'] === true || allow.parse(env[allow.env] ?? 'false');
  for (const name of names) {
    const spec = OPTIONS[name] as OptionSpec<unknown>;
    let value: unknown = spec.default;
    let source: 'default' | 'site' | 'env' | 'flag' = 'default';
    const fromSite =
      spec.site && (!spec.runsCode || siteRunsCode) ? dig(site, spec.site) : undefined;
    if (fromSite !== undefined) {
      value = fromSite;
      source = 'site';
    }
    const fromEnv = env[spec.env];
    if (fromEnv !== undefined && fromEnv !== '') {
      value = spec.parse(fromEnv);
      source = 'env';
    }
    const fromFlag = flags[name];
    if (fromFlag !== undefined) {
      value = fromFlag;
      source = 'flag';
    }
    out[name] = value;
    sources[name] = source;
  }
  return { ...(out as Omit<Config, 'sources'>), sources } as Config;
}

function dig(obj: Record<string, unknown> | undefined, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
