/**
 * Every setting bpa takes, declared once: its flag, environment variable, where it can come
 * from in the Site document, its default, its description and the values it accepts. Flags,
 * `--help` and the docs come from here, and every value is checked here the same way
 * whatever its source (CONFIG_INVALID names the setting, the source and what is allowed).
 * Precedence: default ← Site document ← environment (BPA_*) ← flag.
 */
import { ConfigError, type SettingSource } from '../util/errors.js';
import { parseDuration } from '../util/duration.js';

type Kind = 'string' | 'integer' | 'boolean' | 'list' | 'duration';

export interface OptionSpec<T> {
  /** commander flag syntax. */
  flag: string;
  /**
   * An earlier flag of the setting (commander syntax) that still works: hidden from --help,
   * and its use prints a one-line note on stderr naming `flag`.
   */
  deprecatedFlag?: string;
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
  kind: Kind;
  /** Allowed values (of each item, for a list). */
  choices?: readonly string[];
  /** Bounds: of an integer, or of a duration in milliseconds. */
  min?: number;
  max?: number;
  /** A pattern each value (each item of a list) must match, and how to say it. */
  pattern?: { re: RegExp; text: string };
  /** Further checks; returns why the value is not allowed. */
  check?: (value: T) => string | undefined;
  /**
   * The setting turns a safeguard on: an empty value is refused from the environment too
   * (elsewhere an empty BPA_* variable means "not set"), since `BPA_PLAN_HASH=$APPROVED` with
   * the variable unset would otherwise turn the safeguard off without a word.
   */
  guard?: boolean;
  /**
   * An empty value given as a flag means something (said in the description): `--approval-exempt
   * ""` exempts nothing. Every other flag given an empty value is refused.
   */
  emptyAllowed?: boolean;
  /** A boolean on by default: `--no-<flag>` turns it off. */
  negatable?: boolean;
}

/** `:8080`, `127.0.0.1:8080`, `[::1]:0` → host and port; undefined when it is not one. */
export function parseListen(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!m || Number(m[3]) > 65535) return undefined;
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port: Number(m[3]) };
}

const K8S_NAME = {
  re: /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/,
  text: 'a Kubernetes object name (lowercase letters, digits, - and .)',
};
const K8S_NAMESPACE = {
  re: /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/,
  text: 'a Kubernetes namespace name (lowercase letters, digits and -)',
};
/** A notification receiver: an http(s) URL, `slack+` in front for Slack's format. */
export const NOTIFY_URL = {
  re: /^(?:slack\+)?https?:\/\/[^\s/]+\S*$/,
  text: 'an http(s) URL, or slack+https://… for a Slack-compatible webhook',
};
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const OPTIONS = {
  stateDir: {
    flag: '--state <dir>',
    env: 'BPA_STATE_DIR',
    default: '.bpa-state',
    kind: 'string',
    description: 'state directory: applied state, journal, cluster directories',
  } as OptionSpec<string>,
  flavour: {
    flag: '--flavour <flavour>',
    env: 'BPA_FLAVOUR',
    site: ['installer', 'flavour'],
    default: 'kud',
    kind: 'string',
    choices: ['kud', 'kubespray'],
    description: 'inventory (hosts.ini) flavour and default installer commands',
  } as OptionSpec<string>,
  prune: {
    flag: '--prune',
    env: 'BPA_PRUNE',
    site: ['prune'],
    default: false,
    kind: 'boolean',
    description: 'allow remove-nodes and remove-packages',
  } as OptionSpec<boolean>,
  inventoryDir: {
    flag: '--inventory <dir>',
    env: 'BPA_INVENTORY_DIR',
    default: '',
    kind: 'string',
    description:
      'read BareMetalHost/HardwareData documents from this directory instead of the site',
  } as OptionSpec<string>,
  kubeconfig: {
    flag: '--kubeconfig <file>',
    env: 'BPA_KUBECONFIG',
    default: '',
    kind: 'string',
    description:
      'list BareMetalHosts from the Kubernetes API with this kubeconfig (KUBECONFIG or in-cluster config otherwise, when the Site says source: kubernetes)',
  } as OptionSpec<string>,
  namespaces: {
    flag: '--inventory-namespace <ns...>',
    deprecatedFlag: '--namespace <ns...>',
    env: 'BPA_NAMESPACES',
    site: ['inventory', 'namespaces'],
    default: [],
    kind: 'list',
    pattern: K8S_NAMESPACE,
    description: 'namespaces to list BareMetalHosts in (default: all)',
  } as OptionSpec<string[]>,
  leases: {
    flag: '--leases <file...>',
    env: 'BPA_LEASES',
    site: ['leases', 'files'],
    default: [],
    kind: 'list',
    description:
      'DHCP lease files (ISC dhcpd, dnsmasq, Kea CSV), anywhere on this machine; a Site names only files inside the site',
  } as OptionSpec<string[]>,
  ipOrder: {
    flag: '--ip-order <sources>',
    env: 'BPA_IP_ORDER',
    site: ['leases', 'ipOrder'],
    default: ['lease', 'inventory'],
    kind: 'list',
    choices: ['lease', 'inventory'],
    description: 'where node addresses come from, first match wins (comma-separated)',
  } as OptionSpec<string[]>,
  maxParallelHosts: {
    flag: '--max-parallel-hosts <n>',
    env: 'BPA_MAX_PARALLEL_HOSTS',
    site: ['concurrency', 'maxParallelHosts'],
    default: 10,
    kind: 'integer',
    min: 1,
    max: 1024,
    description: 'hosts worked on at once',
  } as OptionSpec<number>,
  installerMode: {
    flag: '--installer-mode <mode>',
    env: 'BPA_INSTALLER_MODE',
    site: ['installer', 'mode'],
    default: 'local',
    kind: 'string',
    choices: ['local', 'job'],
    description:
      'run the installer as a local process or as a Kubernetes Job in the bootstrap cluster',
  } as OptionSpec<string>,
  installerCommand: {
    flag: '--installer-command <template>',
    env: 'BPA_INSTALLER_COMMAND',
    site: ['installer', 'command'],
    runsCode: true,
    default: '',
    kind: 'string',
    description:
      'provision command; placeholders {cluster} {clusterDir} {inventory} {plugins} {nodes} {podSubnet} (default per flavour, see docs)',
  } as OptionSpec<string>,
  scaleCommand: {
    flag: '--scale-command <template>',
    env: 'BPA_SCALE_COMMAND',
    site: ['installer', 'scaleCommand'],
    runsCode: true,
    default: '',
    kind: 'string',
    description: 'add-nodes command, run for the new nodes only ({nodes})',
  } as OptionSpec<string>,
  addonCommand: {
    flag: '--addon-command <template>',
    env: 'BPA_ADDON_COMMAND',
    site: ['installer', 'addonCommand'],
    runsCode: true,
    default: '',
    kind: 'string',
    description: 'install-plugins command, run once per added plugin ({plugins})',
  } as OptionSpec<string>,
  removeCommand: {
    flag: '--remove-command <template>',
    env: 'BPA_REMOVE_COMMAND',
    site: ['installer', 'removeCommand'],
    runsCode: true,
    default: '',
    kind: 'string',
    description: 'remove-nodes command, run for the removed nodes only ({nodes})',
  } as OptionSpec<string>,
  resetCommand: {
    flag: '--reset-command <template>',
    env: 'BPA_RESET_COMMAND',
    default: '',
    kind: 'string',
    description:
      'remove-cluster command, run when a whole cluster leaves the site with pruning allowed: resets every node of the inventory',
  } as OptionSpec<string>,
  upgradeCommand: {
    flag: '--upgrade-command <template>',
    env: 'BPA_UPGRADE_COMMAND',
    default: '',
    kind: 'string',
    description:
      'upgrade-cluster command, run when kubernetesVersion changes ({nodes}: the nodes already in the cluster)',
  } as OptionSpec<string>,
  kubesprayDir: {
    flag: '--kubespray-dir <dir>',
    env: 'BPA_KUBESPRAY_DIR',
    default: '',
    kind: 'string',
    pattern: {
      re: /^[^\s\p{Cc}]*$/u,
      text: 'a directory path without spaces',
    },
    description:
      'Kubespray checkout whose playbooks and ansible.cfg the installer commands run ({kubesprayDir}); in job mode, its path inside the installer image',
  } as OptionSpec<string>,
  installerTimeout: {
    flag: '--installer-timeout <seconds>',
    env: 'BPA_INSTALLER_TIMEOUT',
    site: ['installer', 'timeoutSeconds'],
    default: 7200,
    kind: 'integer',
    min: 1,
    max: 86400,
    description: 'seconds an installer run may take before it is stopped',
  } as OptionSpec<number>,
  installerImage: {
    flag: '--installer-image <image>',
    env: 'BPA_INSTALLER_IMAGE',
    site: ['installer', 'image'],
    runsCode: true,
    default: '',
    kind: 'string',
    pattern: {
      re: /^(?:[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511})?$/,
      text: 'a container image reference, e.g. registry.example/kud-installer:2.1',
    },
    description: 'container image of the installer Job (job mode)',
  } as OptionSpec<string>,
  sshUser: {
    flag: '--ssh-user <user>',
    env: 'BPA_SSH_USER',
    site: ['ssh', 'user'],
    default: 'root',
    kind: 'string',
    pattern: { re: /^[a-z_][a-z0-9_-]{0,31}$/, text: 'a Linux user name' },
    description: 'user bpa and the installer log in as on the nodes',
  } as OptionSpec<string>,
  sshPort: {
    flag: '--ssh-port <port>',
    env: 'BPA_SSH_PORT',
    site: ['ssh', 'port'],
    default: 22,
    kind: 'integer',
    min: 1,
    max: 65535,
    description: 'SSH port of the nodes',
  } as OptionSpec<number>,
  sshKey: {
    flag: '--ssh-key <file>',
    env: 'BPA_SSH_KEY',
    default: '',
    kind: 'string',
    description: "bpa's private SSH key (default: <state>/ssh/id_ed25519, generated on first use)",
  } as OptionSpec<string>,
  bootstrapCredentials: {
    flag: '--bootstrap-credentials <file>',
    env: 'BPA_BOOTSTRAP_CREDENTIALS',
    default: '',
    kind: 'string',
    description:
      "file with the nodes' default username/password, used once to install bpa's key (never in the site repository)",
  } as OptionSpec<string>,
  sopsAgeKeyFile: {
    flag: '--sops-age-key-file <file>',
    env: 'BPA_SOPS_AGE_KEY_FILE',
    default: '',
    kind: 'string',
    description:
      "age identities (AGE-SECRET-KEY-1… lines, as age-keygen writes them) that decrypt the site's SOPS-encrypted Secrets; mode 0600",
  } as OptionSpec<string>,
  sopsAgeSecret: {
    flag: '--sops-age-secret <name>',
    env: 'BPA_SOPS_AGE_SECRET',
    default: '',
    kind: 'string',
    pattern: K8S_NAME,
    description:
      "a Secret of the bootstrap cluster (its namespace) whose keys ending in .agekey hold age identities for the site's SOPS files (Flux's convention)",
  } as OptionSpec<string>,
  bootstrapKubeconfig: {
    flag: '--bootstrap-kubeconfig <file>',
    env: 'BPA_BOOTSTRAP_KUBECONFIG',
    default: '',
    kind: 'string',
    description:
      'kubeconfig of the bootstrap cluster: kubeconfig Secrets, node ConfigMaps and installer Jobs go there (in-cluster config when running in a pod)',
  } as OptionSpec<string>,
  namespace: {
    flag: '--bootstrap-namespace <ns>',
    env: 'BPA_NAMESPACE',
    default: 'bpa-system',
    kind: 'string',
    pattern: K8S_NAMESPACE,
    description: 'namespace of Secrets, ConfigMaps and Jobs in the bootstrap cluster',
  } as OptionSpec<string>,
  stateClaim: {
    flag: '--state-claim <name>',
    env: 'BPA_STATE_CLAIM',
    default: 'bpa-state',
    kind: 'string',
    pattern: K8S_NAME,
    description: "PersistentVolumeClaim of bpa's state, mounted by installer Jobs (job mode)",
  } as OptionSpec<string>,
  sshKeySecret: {
    flag: '--ssh-key-secret <name>',
    env: 'BPA_SSH_KEY_SECRET',
    site: ['ssh', 'keySecret'],
    default: 'bpa-ssh-key',
    kind: 'string',
    pattern: K8S_NAME,
    description: "Secret with bpa's SSH private key, mounted by installer Jobs (job mode)",
  } as OptionSpec<string>,
  source: {
    flag: '--source <source>',
    env: 'BPA_SOURCE',
    default: 'git',
    kind: 'string',
    choices: ['git', 'kubernetes'],
    description:
      'where serve takes the site from: git (--repo, or --watch DIR), or kubernetes (operator mode: the Site, Cluster, Provisioning and Software objects of --watch-namespace, as kubectl, Flux or Argo CD applied them)',
  } as OptionSpec<string>,
  watchNamespaces: {
    flag: '--watch-namespace <ns...>',
    env: 'BPA_WATCH_NAMESPACES',
    default: [],
    kind: 'list',
    pattern: K8S_NAMESPACE,
    description:
      'with --source kubernetes: the namespaces whose bpa objects are the site (default: the bootstrap namespace, --bootstrap-namespace)',
  } as OptionSpec<string[]>,
  repoUrl: {
    flag: '--repo <url>',
    env: 'BPA_REPO_URL',
    default: '',
    kind: 'string',
    description:
      'site repository to follow: https://…, or over SSH ssh://git@host[:port]/path.git or git@host:path.git (with --git-ssh-key and --git-known-hosts)',
  } as OptionSpec<string>,
  ref: {
    flag: '--ref <ref>',
    env: 'BPA_REF',
    default: 'main',
    kind: 'string',
    pattern: {
      re: /^(?!-)[^\s\p{Cc}~^:?*[\\]+$/u,
      text: 'a branch, tag or commit (no spaces or ~^:?*[\\)',
    },
    description: 'branch, tag or commit of the site repository',
  } as OptionSpec<string>,
  path: {
    flag: '--path <path>',
    env: 'BPA_PATH',
    default: '.',
    kind: 'string',
    description: 'site directory inside the repository',
  } as OptionSpec<string>,
  statusBranch: {
    flag: '--status-branch <branch>',
    env: 'BPA_STATUS_BRANCH',
    default: '',
    kind: 'string',
    pattern: {
      re: /^(?:(?!-)[^\s\p{Cc}~^:?*[\\]+)?$/u,
      text: 'a branch name (no spaces or ~^:?*[\\)',
    },
    description: 'push status commits to this branch instead of the followed one',
  } as OptionSpec<string>,
  gitUsername: {
    flag: '--git-username <user>',
    env: 'BPA_GIT_USERNAME',
    default: '',
    kind: 'string',
    description: 'user for HTTP basic auth to the repository',
  } as OptionSpec<string>,
  gitTokenFile: {
    flag: '--git-token-file <file>',
    env: 'BPA_GIT_TOKEN_FILE',
    default: '',
    kind: 'string',
    description:
      'file holding the token or password for the repository (BPA_GIT_TOKEN works too; never logged)',
  } as OptionSpec<string>,
  gitSshKey: {
    flag: '--git-ssh-key <file>',
    env: 'BPA_GIT_SSH_KEY',
    default: '',
    kind: 'string',
    description:
      'deploy key (a private key file, mode 600) for a repository over SSH; in the cluster, a Secret mounted as a file',
  } as OptionSpec<string>,
  gitKnownHosts: {
    flag: '--git-known-hosts <file>',
    env: 'BPA_GIT_KNOWN_HOSTS',
    default: '',
    kind: 'string',
    description:
      "known_hosts file with the SSH repository server's host key; an unknown or changed host key is refused",
  } as OptionSpec<string>,
  interval: {
    flag: '--interval <duration>',
    env: 'BPA_INTERVAL',
    default: '5m',
    kind: 'duration',
    min: 10_000,
    max: 7 * 86_400_000,
    description:
      'how often to poll the repository (e.g. 30s, 5m, 1h; at least 10s); jittered by 10%',
  } as OptionSpec<string>,
  resyncInterval: {
    flag: '--resync-interval <duration>',
    env: 'BPA_RESYNC_INTERVAL',
    default: '1h',
    kind: 'duration',
    min: 60_000,
    max: 30 * 86_400_000,
    description:
      'how often to reconcile fully (nodes, packages) even when the repository did not change (at least 1m)',
  } as OptionSpec<string>,
  listen: {
    flag: '--listen <addr>',
    env: 'BPA_LISTEN',
    default: ':8080',
    kind: 'string',
    check: (v) =>
      parseListen(v) ? undefined : 'expected [host]:port, e.g. :8080, 127.0.0.1:8080 or [::1]:8080',
    description: 'address of the HTTP server: health, readiness, metrics, webhook, status API',
  } as OptionSpec<string>,
  webhookSecretFile: {
    flag: '--webhook-secret-file <file>',
    env: 'BPA_WEBHOOK_SECRET_FILE',
    default: '',
    kind: 'string',
    description: 'file holding the webhook HMAC secret; without one, POST /hooks/git is disabled',
  } as OptionSpec<string>,
  apiTokenFile: {
    flag: '--api-token-file <file>',
    env: 'BPA_API_TOKEN_FILE',
    default: '',
    kind: 'string',
    description:
      'file holding the bearer token of the control API (POST /api/v1/suspend, /api/v1/resume); without one, those routes are disabled',
  } as OptionSpec<string>,
  kubeStatus: {
    flag: '--kube-status',
    env: 'BPA_KUBE_STATUS',
    default: true,
    kind: 'boolean',
    negatable: true,
    description:
      "serve: keep the site's Site, Cluster, Provisioning and Software objects, their status and Events in the bootstrap namespace (on when the bootstrap cluster is configured or bpa runs in it; --no-kube-status turns it off)",
  } as OptionSpec<boolean>,
  leaderElect: {
    flag: '--leader-elect',
    env: 'BPA_LEADER_ELECT',
    default: false,
    kind: 'boolean',
    description: 'elect a leader with a coordination.k8s.io Lease, so only one replica applies',
    guard: true,
  } as OptionSpec<boolean>,
  verifySignatures: {
    flag: '--verify-signatures',
    env: 'BPA_VERIFY_SIGNATURES',
    default: false,
    kind: 'boolean',
    description:
      'apply only commits signed by a trusted key (OpenPGP: --trusted-keys, SSH: --allowed-signers); others are rejected',
    guard: true,
  } as OptionSpec<boolean>,
  trustedKeys: {
    flag: '--trusted-keys <file>',
    env: 'BPA_TRUSTED_KEYS',
    default: '',
    kind: 'string',
    description: 'OpenPGP public keys (gpg --export [--armor]) trusted to sign site commits',
  } as OptionSpec<string>,
  allowedSigners: {
    flag: '--allowed-signers <file>',
    env: 'BPA_ALLOWED_SIGNERS',
    default: '',
    kind: 'string',
    description: 'OpenSSH allowed_signers file of SSH keys trusted to sign site commits',
  } as OptionSpec<string>,
  allowSiteCommands: {
    flag: '--allow-site-commands',
    env: 'BPA_ALLOW_SITE_COMMANDS',
    default: false,
    kind: 'boolean',
    description:
      'let the Site document set what runs on this machine (installer commands and image) and any package mirror: whoever can push to the site can then run code here',
  } as OptionSpec<boolean>,
  packageMirrors: {
    flag: '--package-mirrors <url...>',
    env: 'BPA_PACKAGE_MIRRORS',
    default: [],
    kind: 'list',
    pattern: {
      re: /^[a-z][a-z0-9+.-]*:\/\/[^\s/]+\S*$/,
      text: 'a URL prefix such as http://mirror.site.example/ubuntu',
    },
    description:
      'apt repositories (URL prefixes, e.g. http://mirror.site.example/ubuntu) a Site packageMirror may name without --allow-site-commands',
  } as OptionSpec<string[]>,
  planHash: {
    flag: '--plan-hash <hash>',
    env: 'BPA_PLAN_HASH',
    default: '',
    kind: 'string',
    pattern: { re: /^[0-9a-f]{6,64}$/, text: '6 to 64 lowercase hex digits of a plan hash' },
    description: 'apply only if the current plan has this hash (or a prefix of it)',
    guard: true,
  } as OptionSpec<string>,
  fromStatus: {
    flag: '--from-status',
    env: 'BPA_FROM_STATUS',
    default: false,
    kind: 'boolean',
    description:
      "plan against the site's status/ (the inventory and applied state bpa serve last reported) instead of observing; the default when the site has status/inventory.yaml and no inventory or lease source is given (BPA_FROM_STATUS=false: never)",
  } as OptionSpec<boolean>,
  requireApprovedPlan: {
    flag: '--require-approved-plan',
    env: 'BPA_REQUIRE_APPROVED_PLAN',
    default: false,
    kind: 'boolean',
    description:
      'apply a revision only when its commit carries the trailer Bpa-Approved-Plan: <hash> of the plan bpa computes for it (bpa plan -o markdown prints it); otherwise report Blocked',
    guard: true,
  } as OptionSpec<boolean>,
  approvalExempt: {
    flag: '--approval-exempt <kinds>',
    env: 'BPA_APPROVAL_EXEMPT',
    default: ['fix-drift'],
    kind: 'list',
    // The action kinds of plan/types.ts ACTION_ORDER (config sits below plan).
    choices: [
      'provision-cluster',
      'upgrade-cluster',
      'add-nodes',
      'remove-nodes',
      'remove-cluster',
      'reconfigure-cluster',
      'install-plugins',
      'install-packages',
      'upgrade-packages',
      'remove-packages',
      'fix-drift',
    ],
    description:
      'with --require-approved-plan, the actions applied without an approved plan when a plan has only these (comma-separated; empty: none)',
    emptyAllowed: true,
  } as OptionSpec<string[]>,
  ignoreWindows: {
    flag: '--ignore-windows',
    env: 'BPA_IGNORE_WINDOWS',
    default: false,
    kind: 'boolean',
    description:
      'bpa apply only: apply now even outside the maintenance windows (logged, and said in the plan and the report)',
  } as OptionSpec<boolean>,
  logLevel: {
    flag: '--log-level <level>',
    env: 'BPA_LOG_LEVEL',
    default: 'info',
    kind: 'string',
    choices: LOG_LEVELS,
    description: 'log level',
  } as OptionSpec<string>,
  uiTokenFile: {
    flag: '--ui-token-file <file>',
    env: 'BPA_UI_TOKEN_FILE',
    default: '',
    kind: 'string',
    description:
      'file holding the token the status page asks for (login form or bearer token); without one the page is open on a loopback --listen and off on any other',
    guard: true,
  } as OptionSpec<string>,
  uiInsecureNoToken: {
    flag: '--ui-insecure-no-token',
    env: 'BPA_UI_INSECURE_NO_TOKEN',
    default: false,
    kind: 'boolean',
    description:
      'serve the status page without a token on a non-loopback --listen (only behind a proxy that authenticates)',
  } as OptionSpec<boolean>,
  uiUrl: {
    flag: '--ui-url <url>',
    env: 'BPA_UI_URL',
    default: '',
    kind: 'string',
    pattern: { re: /^(?:https?:\/\/[^\s/]+\/?\S*)?$/, text: 'an http(s) URL' },
    description:
      'the URL people open the status page at, for the links in notifications (default: the --listen address)',
  } as OptionSpec<string>,
  notifyUrls: {
    flag: '--notify-url <url...>',
    env: 'BPA_NOTIFY_URLS',
    default: [],
    kind: 'list',
    pattern: NOTIFY_URL,
    description:
      'receivers of a JSON event on every phase change, failure, halted rollout, drift and rejected revision; slack+https://… for a Slack-compatible incoming webhook',
  } as OptionSpec<string[]>,
  notifyUrlFile: {
    flag: '--notify-url-file <file>',
    env: 'BPA_NOTIFY_URL_FILE',
    default: '',
    kind: 'string',
    description:
      'file holding more receivers, one URL a line, for URLs that are secrets themselves (Slack webhooks)',
  } as OptionSpec<string>,
  notifySecretFile: {
    flag: '--notify-secret-file <file>',
    env: 'BPA_NOTIFY_SECRET_FILE',
    default: '',
    kind: 'string',
    description:
      'file holding the secret events are signed with (X-Bpa-Signature-256: sha256=HMAC of the body)',
    guard: true,
  } as OptionSpec<string>,
  artifactsTokenFile: {
    flag: '--artifacts-token-file <file>',
    env: 'BPA_ARTIFACTS_TOKEN_FILE',
    default: '',
    kind: 'string',
    description:
      'file holding the bearer token of the artifact upload API (/api/v1/artifacts); without one, uploads are disabled',
  } as OptionSpec<string>,
  artifactsMaxMib: {
    flag: '--artifacts-max-mib <MiB>',
    env: 'BPA_ARTIFACTS_MAX_MIB',
    default: 16384,
    kind: 'integer',
    min: 1,
    max: 1_048_576,
    description: 'largest artifact upload accepted, in MiB (larger: 413)',
  } as OptionSpec<number>,
  aptSigningKey: {
    flag: '--apt-signing-key <file>',
    env: 'BPA_APT_SIGNING_KEY',
    default: '',
    kind: 'string',
    description:
      "OpenPGP secret key (no passphrase) that signs bpa's apt repository (InRelease, Release.gpg); nodes then use signed-by= instead of [trusted=yes]",
    guard: true,
  } as OptionSpec<string>,
  artifactsUrl: {
    flag: '--artifacts-url <url>',
    env: 'BPA_ARTIFACTS_URL',
    default: '',
    kind: 'string',
    pattern: {
      re: /^(?:https?:\/\/[A-Za-z0-9.:[\]-]+(?:\/[A-Za-z0-9._~/-]*)?)?$/,
      text: 'an http(s) URL of bpa serve as the nodes reach it, e.g. http://172.22.0.2:8080',
    },
    description:
      'where the nodes reach bpa serve (its artifacts and apt repository), for a Site packageMirror: {bpa: true}',
  } as OptionSpec<string>,
  registryUrl: {
    flag: '--registry-url <url>',
    env: 'BPA_REGISTRY_URL',
    default: '',
    kind: 'string',
    pattern: {
      re: /^(?:https?:\/\/[A-Za-z0-9.:[\]-]+)?$/,
      text: 'an http(s) URL of the site registry as the nodes reach it, e.g. http://172.22.0.2:5000',
    },
    description:
      "where the nodes reach the site's container registry (the distribution registry beside bpa), for a Site registryMirror",
  } as OptionSpec<string>,
} as const;

export type OptionName = keyof typeof OPTIONS;
type ValueOf<K extends OptionName> = (typeof OPTIONS)[K] extends OptionSpec<infer T> ? T : never;
export type Config = { [K in OptionName]: ValueOf<K> } & {
  sources: Partial<Record<OptionName, SettingSource>>;
};

/**
 * A command's settings, resolved with the Site document's spec: `undefined` before the site
 * is read (the operator's settings alone), the spec once it is valid.
 */
export type ConfigFor = (site: Record<string, unknown> | undefined) => Config;

/**
 * Resolves settings. `flags` are commander's raw values (undefined when not given: strings,
 * arrays of strings for variadic flags, true for switches), `env` the environment, `site` the
 * Site document's spec (or undefined). Every value is checked, whatever its source.
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
  const siteRunsCode =
    flags['allowSiteCommands'] !== undefined
      ? checkValue('allowSiteCommands', flags['allowSiteCommands'], 'flag') === true
      : env[OPTIONS.allowSiteCommands.env]
        ? checkValue('allowSiteCommands', env[OPTIONS.allowSiteCommands.env], 'env') === true
        : false;
  for (const name of names) {
    const spec = OPTIONS[name] as OptionSpec<unknown>;
    let value: unknown = spec.default;
    let source: SettingSource = 'default';
    const fromSite =
      spec.site && (!spec.runsCode || siteRunsCode) ? dig(site, spec.site) : undefined;
    if (fromSite !== undefined && fromSite !== null) {
      value = checkValue(name, fromSite, 'site');
      source = 'site';
    }
    const fromEnv = env[spec.env];
    // An empty variable is one left unset by a template or a shell: the default, unless the
    // setting guards something (checkValue then refuses it).
    if (fromEnv !== undefined && (fromEnv !== '' || spec.guard)) {
      value = checkValue(name, fromEnv, 'env');
      source = 'env';
    }
    const fromFlag = flags[name];
    if (fromFlag !== undefined) {
      value = checkValue(name, fromFlag, 'flag');
      source = 'flag';
    }
    out[name] = value;
    sources[name] = source;
  }
  return { ...(out as Omit<Config, 'sources'>), sources } as Config;
}

/** Where a value came from, as the person who set it would say it. */
export function describeSource(name: OptionName, source: SettingSource): string {
  const spec = OPTIONS[name] as OptionSpec<unknown>;
  switch (source) {
    case 'flag':
      return `the flag ${spec.flag.split(' ')[0]}`;
    case 'env':
      return `the environment variable ${spec.env}`;
    case 'site':
      return `the Site document, spec.${(spec.site ?? []).join('.')}`;
    default:
      return 'the default';
  }
}

/** The values a setting accepts, in words (for errors and --help). */
export function allowedText(spec: OptionSpec<unknown>): string {
  if (spec.choices)
    return `${spec.kind === 'list' ? 'a comma-separated list of' : 'one of'} ${spec.choices.join(', ')}`;
  switch (spec.kind) {
    case 'boolean':
      return 'true or false (also 1/0, yes/no, on/off)';
    case 'integer':
      return `an integer from ${spec.min ?? '…'} to ${spec.max ?? '…'}`;
    case 'duration':
      return `a duration such as 30s, 5m or 1h, from ${formatDuration(spec.min ?? 0)} to ${formatDuration(spec.max ?? Infinity)}`;
    default:
      return spec.pattern?.text ?? 'a string';
  }
}

/**
 * Checks one value of a setting and returns it typed. Strings (flags, environment) are parsed;
 * Site values are already typed by YAML and are checked as they are.
 */
export function checkValue(name: OptionName, raw: unknown, source: SettingSource): unknown {
  const spec = OPTIONS[name] as OptionSpec<unknown>;
  const fail = (why: string): never => {
    const shown =
      typeof raw === 'string' ? JSON.stringify(raw) : (JSON.stringify(raw) ?? String(raw));
    throw new ConfigError(
      `setting ${name}: ${shown} from ${describeSource(name, source)} ${why}; allowed: ${allowedText(spec)}`,
      source,
    );
  };
  // A flag given nothing is a variable that was meant to be set (`--plan-hash "$APPROVED"`),
  // never a request for the default: the default is had by leaving the flag out.
  if (
    isEmpty(raw) &&
    !spec.emptyAllowed &&
    (source === 'flag' || (source === 'env' && spec.guard === true))
  ) {
    fail(
      spec.guard
        ? `is empty, which would turn this safeguard off: give a value, or leave the ${source === 'flag' ? 'flag out' : 'variable unset'} to go without it`
        : 'is empty: give a value, or leave the flag out for the default',
    );
  }
  let value: unknown;
  switch (spec.kind) {
    case 'boolean':
      if (typeof raw === 'boolean') value = raw;
      else if (typeof raw === 'string' && /^(1|true|yes|on)$/i.test(raw)) value = true;
      else if (typeof raw === 'string' && /^(0|false|no|off)$/i.test(raw)) value = false;
      else fail('is not a boolean');
      break;
    case 'integer': {
      const n =
        typeof raw === 'number'
          ? raw
          : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw)
            ? Number(raw)
            : NaN;
      if (!Number.isSafeInteger(n)) fail('is not an integer');
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max))
        fail('is out of range');
      value = n;
      break;
    }
    case 'duration': {
      if (typeof raw !== 'string') fail('is not a duration');
      let ms = NaN;
      try {
        ms = parseDuration(raw as string);
      } catch {
        fail('is not a duration');
      }
      if (spec.min !== undefined && ms < spec.min)
        fail(`is shorter than the minimum of ${formatDuration(spec.min)}`);
      if (spec.max !== undefined && ms > spec.max)
        fail(`is longer than the maximum of ${formatDuration(spec.max)}`);
      value = (raw as string).trim();
      break;
    }
    case 'list': {
      const items = Array.isArray(raw)
        ? raw.flatMap((x) => (typeof x === 'string' ? splitList(x) : [x]))
        : typeof raw === 'string'
          ? splitList(raw)
          : fail('is not a list');
      for (const item of items as unknown[]) {
        if (typeof item !== 'string' || item === '')
          fail('has an item that is not a non-empty string');
        if (spec.choices && !spec.choices.includes(item as string))
          fail(`has ${JSON.stringify(item)}, which is not allowed`);
        if (spec.pattern && !spec.pattern.re.test(item as string))
          fail(`has ${JSON.stringify(item)}, which is not ${spec.pattern.text}`);
      }
      if (new Set(items as string[]).size !== (items as string[]).length)
        fail('lists an item twice');
      value = items;
      break;
    }
    default: {
      if (typeof raw !== 'string') fail('is not a string');
      const text = raw as string;
      if (/\p{Cc}/u.test(text)) fail('contains a control character');
      if (spec.choices && !spec.choices.includes(text)) fail('is not allowed');
      if (spec.pattern && !spec.pattern.re.test(text)) fail('does not match');
      value = text;
    }
  }
  const why = spec.check?.(value);
  if (why !== undefined) fail(`is not usable: ${why}`);
  return value;
}

/** An empty string, or a list of them: nothing given. */
function isEmpty(raw: unknown): boolean {
  if (typeof raw === 'string') return raw.trim() === '';
  return Array.isArray(raw) && raw.every((x) => typeof x === 'string' && splitList(x).length === 0);
}

const splitList = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return 'no limit';
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

function dig(obj: Record<string, unknown> | undefined, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
