/**
 * Every error code bpa raises at run time (not the site problems of validate/codes.ts), with
 * its default retry decision, what it means and what to do. One list: BpaError accepts only
 * these codes, the docs page docs/errors.md is generated from it (a test checks it is
 * current), and `-o json` and the status reports carry these codes.
 *
 * Retry kinds (Flux's model): stalled — needs a person, retrying the same input is pointless;
 * waiting — retry after a known delay; transient — retry with backoff.
 */
/** How a failure is retried; see the module comment. */
export type RetryKind = 'stalled' | 'waiting' | 'transient';

export interface RuntimeCodeInfo {
  retry: RetryKind;
  /** The area of bpa that raises it, for the docs. */
  area: Area;
  summary: string;
  fix: string;
}

export type Area =
  | 'command line and configuration'
  | 'site source (git)'
  | 'signatures'
  | 'state directory'
  | 'inventory and Kubernetes'
  | 'SSH'
  | 'processes and commands'
  | 'installer'
  | 'packages'
  | 'publishing'
  | 'reconcile and serve'
  | 'artifacts';

const cli: Area = 'command line and configuration';
const git: Area = 'site source (git)';
const sig: Area = 'signatures';
const state: Area = 'state directory';
const kube: Area = 'inventory and Kubernetes';
const ssh: Area = 'SSH';
const proc: Area = 'processes and commands';
const inst: Area = 'installer';
const pkg: Area = 'packages';
const pub: Area = 'publishing';
const rec: Area = 'reconcile and serve';
const art: Area = 'artifacts';

export const RUNTIME_CODES = {
  // --- command line and configuration
  USAGE: {
    retry: 'stalled',
    area: cli,
    summary:
      'the command line is wrong: an unknown command or flag, a missing or extra argument, flags that cannot go together',
    fix: 'run `bpa <command> --help` for the flags and arguments of the command',
  },
  CONFIG_INVALID: {
    retry: 'stalled',
    area: cli,
    summary:
      'a setting has a value bpa does not accept, from a flag, a BPA_* environment variable or the Site document',
    fix: 'the message names the setting, where the value came from and the values allowed; fix it there',
  },
  PATH_NOT_FOUND: {
    retry: 'stalled',
    area: cli,
    summary: 'the site path given to bpa does not exist',
    fix: 'give an existing site directory or a single YAML file',
  },
  PATH_UNREADABLE: {
    retry: 'stalled',
    area: cli,
    summary: 'the site path given to bpa exists but cannot be read',
    fix: 'check the permissions of the path',
  },
  SITE_INVALID: {
    retry: 'stalled',
    area: cli,
    summary: 'the site has errors, so nothing was applied',
    fix: 'run `bpa validate` on the site and fix every error it lists',
  },
  STATUS_INVENTORY_MISSING: {
    retry: 'stalled',
    area: cli,
    summary:
      'bpa plan --from-status found no status/inventory.yaml in the site: bpa serve writes it on a full reconcile',
    fix: 'wait for the controller to report (or check that the site path is the one bpa serve follows), or plan without --from-status',
  },
  PLAN_NOT_APPROVED: {
    retry: 'stalled',
    area: rec,
    summary:
      'serve --require-approved-plan: the commit that brought the revision carries no Bpa-Approved-Plan trailer, and the plan changes something; nothing was applied',
    fix: 'review the plan (site.yaml shows it, bpa plan -o markdown prints it with the trailer), then push a commit whose message ends with the trailer line',
  },
  PLAN_CHANGED: {
    retry: 'stalled',
    area: rec,
    summary:
      'serve --require-approved-plan: the revision carries a Bpa-Approved-Plan trailer, but the plan bpa computes now has another hash (the world or the site changed since the review); nothing was applied',
    fix: 'review the current plan in status/site.yaml (or bpa plan), then push a commit carrying its hash in the trailer',
  },
  PLAN_HASH_MISMATCH: {
    retry: 'stalled',
    area: cli,
    summary:
      'apply --plan-hash was given, and the current plan has another hash: something changed since the plan was reviewed',
    fix: 'run `bpa plan` again, review what changed, and apply with the new hash',
  },
  NO_SOURCE: {
    retry: 'stalled',
    area: cli,
    summary: 'no site was named: neither a repository nor a directory',
    fix: 'give --repo URL (with --ref and --path), or a site directory',
  },
  LISTEN_INVALID: {
    retry: 'stalled',
    area: cli,
    summary: 'the --listen address is not [host]:port',
    fix: 'use for example :8080 or 127.0.0.1:8080',
  },
  LISTEN_FAILED: {
    retry: 'stalled',
    area: cli,
    summary:
      'bpa serve cannot listen on the address given (in use, or not an address of this machine)',
    fix: 'choose another port or address with --listen',
  },
  SECRET_FILE_UNREADABLE: {
    retry: 'stalled',
    area: cli,
    summary: 'a file named in the configuration to hold a secret (webhook secret) cannot be read',
    fix: 'check the path and the permissions of the file (mounted Secrets: check the volume)',
  },
  INTERNAL_ERROR: {
    retry: 'transient',
    area: cli,
    summary: 'something failed that bpa did not expect: a bug in bpa',
    fix: 'run again with --log-level debug and report the output with the command line',
  },

  // --- site source (git)
  GIT_URL_INVALID: {
    retry: 'stalled',
    area: git,
    summary: 'the repository URL is not a valid URL',
    fix: 'give an http:// or https:// URL of the site repository',
  },
  GIT_URL_UNSUPPORTED: {
    retry: 'stalled',
    area: git,
    summary: 'the repository URL uses a scheme bpa cannot fetch',
    fix: 'use the repository over http:// or https://',
  },
  GIT_TOKEN_UNREADABLE: {
    retry: 'stalled',
    area: git,
    summary: 'the file named by --git-token-file cannot be read',
    fix: 'check the path and permissions (in Kubernetes: the mounted Secret)',
  },
  GIT_AUTH: {
    retry: 'stalled',
    area: git,
    summary:
      'the git server refused the credentials (HTTP 401 or 403), or, over SSH, the deploy key',
    fix: 'check --git-username and the token (or, over SSH, that the deploy key is registered); read access is needed, and write access for status commits',
  },
  GIT_REPO_NOT_FOUND: {
    retry: 'stalled',
    area: git,
    summary: 'there is no git repository at the URL (HTTP 404)',
    fix: 'check the repository URL',
  },
  GIT_REF_NOT_FOUND: {
    retry: 'stalled',
    area: git,
    summary: 'the branch, tag or commit given with --ref does not exist in the repository',
    fix: 'check --ref',
  },
  GIT_PATH_NOT_FOUND: {
    retry: 'stalled',
    area: git,
    summary: 'the site directory given with --path does not exist at this revision',
    fix: 'check --path, or push a revision that has it',
  },
  GIT_HOST_KEY: {
    retry: 'stalled',
    area: git,
    summary:
      "an SSH repository's server presented a host key that is not in --git-known-hosts (unknown, or changed): bpa never accepts a host key it does not know",
    fix: 'check the server; if its key really changed, put the new key in the known_hosts file (ssh-keyscan, compared with what the git host publishes)',
  },
  GIT_SSH_KEY: {
    retry: 'stalled',
    area: git,
    summary:
      'the deploy key for an SSH repository cannot be used: missing, unreadable, not a private key, or readable by others',
    fix: 'give a private key file readable only by bpa (chmod 600) with --git-ssh-key, or mount the Secret with defaultMode 0400',
  },
  GIT_UNAVAILABLE: {
    retry: 'transient',
    area: git,
    summary: 'the git server is unreachable or answered with a server error',
    fix: 'bpa retries with backoff; check the server and the network if it lasts',
  },
  GIT_PUSH_REJECTED: {
    retry: 'transient',
    area: git,
    summary:
      'the status commit was rejected because the branch moved; bpa re-creates it on the new head, and this is raised only when that kept failing',
    fix: 'bpa retries on the next reconcile; check for a process pushing to the branch in a loop',
  },
  GIT_PUSH_DECLINED: {
    retry: 'stalled',
    area: git,
    summary: 'the git server declined the status push (a protected branch, a hook)',
    fix: "allow bpa's user to push to the branch, or set --status-branch to a branch it may push to",
  },
  GIT_CACHE_INVALID: {
    retry: 'stalled',
    area: git,
    summary: "the repository cache in the state directory is not bpa's",
    fix: 'move the directory named in the message away; bpa clones again',
  },
  GIT_FAILED: {
    retry: 'transient',
    area: git,
    summary: 'a git operation failed for another reason',
    fix: 'read the message; bpa retries with backoff',
  },
  STATUS_PATH_TAKEN: {
    retry: 'stalled',
    area: git,
    summary:
      'the site has a file or a symbolic link named status where bpa writes its reports (status/); bpa never removes it and writes no report',
    fix: 'rename or remove that file in the repository',
  },
  REVISION_REJECTED: {
    retry: 'stalled',
    area: git,
    summary: 'the revision was not applied: it has site errors or failed signature checks',
    fix: 'fix the errors listed in status/site.yaml and push a new revision',
  },

  // --- signatures
  COMMIT_UNSIGNED: {
    retry: 'stalled',
    area: sig,
    summary: 'signatures are required (--verify-signatures) and the commit is not signed',
    fix: 'push a commit signed with a trusted OpenPGP or SSH key',
  },
  COMMIT_SIGNATURE_UNTRUSTED: {
    retry: 'stalled',
    area: sig,
    summary: 'the commit is signed, but not by a trusted key, or the signature does not verify',
    fix: 'sign with a key listed in --trusted-keys or --allowed-signers, or add the key there',
  },
  SIGNATURE_TRUST_MISSING: {
    retry: 'stalled',
    area: sig,
    summary: 'a commit is signed with a kind of key for which no trusted keys are configured',
    fix: 'give --trusted-keys (OpenPGP) or --allowed-signers (SSH)',
  },

  // --- state directory
  STATE_DIR_INVALID: {
    retry: 'stalled',
    area: state,
    summary:
      'the state directory (--state, BPA_STATE_DIR) is not a directory: a file, a device such as /dev/null, or a path through a file',
    fix: 'give --state a directory, or a path where bpa can create one',
  },
  STATE_LOCKED: {
    retry: 'waiting',
    area: state,
    summary: 'another bpa process holds the lock of the state directory',
    fix: 'wait for it to finish; a lock whose owner died is taken over automatically',
  },
  STATE_LOCK_LOST: {
    retry: 'transient',
    area: state,
    summary: 'this process lost the state lock while working (another bpa took it over)',
    fix: 'make sure only one bpa uses a state directory; the work is resumed from the journal',
  },
  STATE_LOCK_FAILED: {
    retry: 'transient',
    area: state,
    summary:
      "the state directory's lock could not be taken for another reason than another bpa holding it",
    fix: 'check that the state directory exists and is writable by bpa',
  },
  STATE_CORRUPT: {
    retry: 'stalled',
    area: state,
    summary: 'an applied-state file in the state directory cannot be read',
    fix: 'move the file named in the message away; under reconcile the state is rebuilt from the status reports',
  },
  STATE_BAD_NAME: {
    retry: 'stalled',
    area: state,
    summary: 'a cluster name cannot be used as a directory of the state',
    fix: 'cluster names are RFC 1123 names; rename the cluster',
  },
  JOURNAL_CORRUPT: {
    retry: 'stalled',
    area: state,
    summary: "a cluster's journal cannot be read",
    fix: 'move the journal file named in the message away; steps are then re-run (they are idempotent)',
  },

  // --- inventory and Kubernetes
  NO_KUBECONFIG: {
    retry: 'stalled',
    area: kube,
    summary: 'a Kubernetes API is needed and no kubeconfig was found',
    fix: 'pass --kubeconfig (or --bootstrap-kubeconfig), set KUBECONFIG, or run in a cluster',
  },
  KUBECONFIG_INVALID: {
    retry: 'stalled',
    area: kube,
    summary: 'the kubeconfig cannot be read or is not a valid kubeconfig',
    fix: 'check the file named in the message (kubectl --kubeconfig FILE get ns should work)',
  },
  INVENTORY_UNAVAILABLE: {
    retry: 'transient',
    area: kube,
    summary:
      'BareMetalHosts cannot be listed from the Kubernetes API: a refused connection, 401, 403 (RBAC), 404 (the metal3 API is not served), a configured namespace that does not exist, or a server error',
    fix: "the message says which: check the credentials, grant list on baremetalhosts and hardwaredata (and get on namespaces) to bpa's service account, install metal3's CRDs, or fix spec.inventory.namespaces (BPA_NAMESPACES, --inventory-namespace); server errors are retried",
  },
  SITE_OBJECTS_UNAVAILABLE: {
    retry: 'transient',
    area: kube,
    summary:
      'operator mode (--source kubernetes): the Site, Cluster, Provisioning and Software objects of the watched namespaces are not listed yet, or their watch cannot be re-established',
    fix: "check bpa's connection to the bootstrap cluster and its RBAC (get, list, watch on the bpa.akraino.org kinds in each --watch-namespace); bpa keeps retrying, and /readyz fails meanwhile",
  },
  KUBE_API_ERROR: {
    retry: 'transient',
    area: kube,
    summary: 'a request to the bootstrap cluster failed',
    fix: 'read the message; bpa retries with backoff',
  },
  KUBE_STATUS_FAILED: {
    retry: 'transient',
    area: kube,
    summary:
      "the site's objects, their status or Events could not be written to the bootstrap cluster (--kube-status); the reconcile itself is not affected",
    fix: "the message says which request failed; a 403 names the grant deploy/rbac.yaml gives bpa's service account; bpa writes them again at the next reconcile",
  },
  LEADER_CONFIG: {
    retry: 'stalled',
    area: kube,
    summary: 'leader election is misconfigured',
    fix: 'read the message',
  },
  LEADERSHIP_LOST: {
    retry: 'transient',
    area: kube,
    summary: 'this replica stopped being the leader during a reconcile',
    fix: 'nothing: the new leader resumes from the journal',
  },

  // --- Site secrets (SOPS)
  SOPS_AGE_MISSING: {
    retry: 'stalled',
    area: cli,
    summary:
      "the site has SOPS-encrypted files and the age program is not installed on bpa's machine",
    fix: "install Debian's age package (bpa's image has it)",
  },
  SOPS_KEY_UNREADABLE: {
    retry: 'stalled',
    area: cli,
    summary:
      'the age key file (--sops-age-key-file) or Secret (--sops-age-secret) cannot be read, holds no AGE-SECRET-KEY line, or can be read by other users',
    fix: 'check the path or Secret named in the message; chmod 600 a key file',
  },
  SITE_SECRETS_INVALID: {
    retry: 'stalled',
    area: rec,
    summary:
      'a SOPS file of the site does not decrypt or verify (tampered, or for no key bpa has): nothing was applied',
    fix: 'see the problems (file:line) in the report; re-encrypt the file with sops for a recipient bpa has the key of',
  },

  // --- SSH
  SSH_KEY_MISSING: {
    retry: 'stalled',
    area: ssh,
    summary: "bpa's SSH private key file does not exist",
    fix: 'check --ssh-key, or leave it out to use the key bpa generates in the state directory',
  },
  SSH_KEY_INVALID: {
    retry: 'stalled',
    area: ssh,
    summary: "bpa's SSH private key cannot be used (not a key, or protected by a passphrase)",
    fix: 'give an unencrypted private key with --ssh-key',
  },
  SSH_PUBLIC_KEY_INVALID: {
    retry: 'stalled',
    area: ssh,
    summary: "bpa's public key (next to the private key) is missing or not a public key",
    fix: 'put the matching .pub file next to the private key',
  },
  SSH_KEYGEN_FAILED: {
    retry: 'stalled',
    area: ssh,
    summary: 'bpa could not generate its SSH key pair',
    fix: 'check that ssh-keygen is installed and the state directory is writable',
  },
  SSH_AUTH: {
    retry: 'stalled',
    area: ssh,
    summary: "the node refused bpa's key (or the bootstrap password)",
    fix: "authorize bpa's public key for the SSH user, or give bootstrap credentials",
  },
  SSH_UNREACHABLE: {
    retry: 'transient',
    area: ssh,
    summary: 'the node cannot be reached over SSH (refused, timed out, no route)',
    fix: 'check that the node is up, its address and the SSH port; bpa retries',
  },
  SSH_CONNECT_FAILED: {
    retry: 'transient',
    area: ssh,
    summary: 'the SSH connection failed for another reason',
    fix: 'read the message; bpa retries',
  },
  SSH_CONNECTION_LOST: {
    retry: 'transient',
    area: ssh,
    summary: 'the SSH connection dropped while a command ran',
    fix: 'bpa retries; the journal makes the step safe to run again',
  },
  SSH_CHANNEL_FAILED: {
    retry: 'transient',
    area: ssh,
    summary: 'a command could not be started on an open SSH connection',
    fix: "check the node's sshd limits (MaxSessions); bpa retries",
  },
  SSH_ACCESS_FAILED: {
    retry: 'transient',
    area: ssh,
    summary: 'bpa could not get SSH access to some nodes of a cluster',
    fix: 'the message lists each node and why',
  },
  HOST_KEY_CHANGED: {
    retry: 'stalled',
    area: ssh,
    summary: 'a node offers another host key than the one bpa pinned: nothing is run on it',
    fix: "compare the new fingerprint on the node's console, then remove the pinned entry named in the message",
  },
  HOST_KEY_REJECTED: {
    retry: 'stalled',
    area: ssh,
    summary: "ssh (run by the installer) refused a host key that is not in bpa's known hosts",
    fix: 'let bpa reach the node first (it pins the key), or check the key as for HOST_KEY_CHANGED',
  },
  KNOWN_HOSTS_UNREADABLE: {
    retry: 'stalled',
    area: ssh,
    summary: "bpa's pinned host keys file cannot be read",
    fix: 'check the permissions of the file named in the message',
  },
  KNOWN_HOSTS_INVALID: {
    retry: 'stalled',
    area: ssh,
    summary: "bpa's pinned host keys file is not valid",
    fix: 'move the file away; keys are pinned again on first use',
  },
  CREDENTIALS_MISSING: {
    retry: 'stalled',
    area: ssh,
    summary: 'the bootstrap credentials (file or Secret) do not exist',
    fix: 'create the file or Secret named in the message',
  },
  CREDENTIALS_INVALID: {
    retry: 'stalled',
    area: ssh,
    summary: 'the bootstrap credentials have no username or password',
    fix: 'write username: and password: in the file or Secret',
  },
  CREDENTIALS_INSECURE: {
    retry: 'stalled',
    area: ssh,
    summary: 'the bootstrap credentials file can be read by other users',
    fix: 'chmod 600 the file',
  },
  CREDENTIALS_FORBIDDEN: {
    retry: 'stalled',
    area: ssh,
    summary: 'bpa may not read the bootstrap credentials Secret (RBAC)',
    fix: "grant get on that Secret to bpa's service account",
  },
  BOOTSTRAP_FAILED: {
    retry: 'transient',
    area: ssh,
    summary: "installing bpa's key with the bootstrap credentials failed",
    fix: 'read the message; check the credentials and the user',
  },
  BOOTSTRAP_USER_MISMATCH: {
    retry: 'stalled',
    area: ssh,
    summary: 'the bootstrap credentials are for another user than the SSH user',
    fix: 'use credentials of the SSH user, or change --ssh-user',
  },

  // --- processes and commands (ExecError classifies them from how the process ended)
  SHELL_ARGUMENT_INVALID: {
    retry: 'stalled',
    area: proc,
    summary: 'a remote command would contain a NUL byte or be empty',
    fix: 'a value in the site or configuration is not usable in a command; read the message',
  },
  COMMAND_FAILED: {
    retry: 'transient',
    area: proc,
    summary: 'a local command exited non-zero for a reason bpa does not recognise',
    fix: 'read the stderr tail in the message',
  },
  REMOTE_COMMAND_FAILED: {
    retry: 'transient',
    area: proc,
    summary: 'a command on a node exited non-zero for a reason bpa does not recognise',
    fix: 'read the stderr tail in the message',
  },
  COMMAND_TIMEOUT: {
    retry: 'transient',
    area: proc,
    summary:
      'a command did not finish within its time limit and was stopped with its process group',
    fix: 'check the node (load, a hung apt); bpa retries',
  },
  COMMAND_KILLED: {
    retry: 'transient',
    area: proc,
    summary: 'a command was killed by a signal',
    fix: 'check what killed it (OOM killer, an operator)',
  },
  COMMAND_NOT_FOUND: {
    retry: 'stalled',
    area: proc,
    summary: 'a program bpa runs is not installed (locally or on the node)',
    fix: 'install it; the message names it',
  },
  PERMISSION_DENIED: {
    retry: 'stalled',
    area: proc,
    summary: 'a command was refused permission (not root, a read-only file system)',
    fix: 'check the SSH user and its sudo rights',
  },
  SUDO_DENIED: {
    retry: 'stalled',
    area: proc,
    summary: 'the SSH user may not run the command with passwordless sudo',
    fix: 'give the SSH user NOPASSWD sudo, or log in as root',
  },
  SUDO_UNAVAILABLE: {
    retry: 'stalled',
    area: proc,
    summary: 'sudo is not installed on the node and the SSH user is not root',
    fix: 'install sudo, or log in as root',
  },
  CONNECTION_FAILED: {
    retry: 'transient',
    area: proc,
    summary: 'a command failed because a network connection failed',
    fix: 'bpa retries; check the network if it lasts',
  },
  DISK_FULL: {
    retry: 'stalled',
    area: proc,
    summary: 'a disk is full',
    fix: 'free space on the machine or node named in the message',
  },

  // --- installer
  INSTALLER_COMMAND_INVALID: {
    retry: 'stalled',
    area: inst,
    summary: 'an installer command template is empty, unbalanced or uses an unknown placeholder',
    fix: 'fix the template; see docs/apply.md for the placeholders',
  },
  KUBESPRAY_DIR_MISSING: {
    retry: 'stalled',
    area: inst,
    summary:
      'an installer command runs Kubespray ({kubesprayDir}), but no Kubespray checkout is configured',
    fix: 'clone Kubespray (git clone -b v2.23.3 https://github.com/kubernetes-sigs/kubespray) and give its directory with --kubespray-dir or BPA_KUBESPRAY_DIR, or configure commands that do not use {kubesprayDir}',
  },
  KUBESPRAY_DIR_INVALID: {
    retry: 'stalled',
    area: inst,
    summary:
      'the --kubespray-dir directory is not a Kubespray checkout: its ansible.cfg or a playbook a command runs is missing',
    fix: 'point --kubespray-dir at the top of a Kubespray checkout (the directory holding ansible.cfg and cluster.yml)',
  },
  INSTALLER_PATH_UNSUPPORTED: {
    retry: 'stalled',
    area: inst,
    summary:
      'an installer path was asked for that has no command (the kubespray flavour has no add-on command)',
    fix: 'configure the command (e.g. --addon-command), or remove what asks for it (KUDPlugins)',
  },
  INSTALLER_NOT_FOUND: {
    retry: 'stalled',
    area: inst,
    summary: "the installer command's program does not exist",
    fix: 'install it, or fix the command template',
  },
  INSTALLER_NOT_EXECUTABLE: {
    retry: 'stalled',
    area: inst,
    summary: "the installer command's program is not executable",
    fix: 'chmod +x it, or fix the command template',
  },
  INSTALLER_CWD_MISSING: {
    retry: 'stalled',
    area: inst,
    summary: 'the cluster directory the installer runs in does not exist',
    fix: 'check the state directory',
  },
  INSTALLER_START_FAILED: {
    retry: 'transient',
    area: inst,
    summary: 'the installer process could not be started',
    fix: 'read the message',
  },
  INSTALLER_LOG_FAILED: {
    retry: 'transient',
    area: inst,
    summary: "the installer's log file could not be written",
    fix: 'check the space and permissions of the state directory',
  },
  INSTALLER_FAILED: {
    retry: 'transient',
    area: inst,
    summary: 'the installer exited non-zero',
    fix: "read the installer's log (the report names its id: the status page shows it, GET /api/v1/logs/<id> serves it, and it is <state>/clusters/<cluster>/logs/<file>); the next run resumes from the journal",
  },
  INSTALLER_TIMEOUT: {
    retry: 'transient',
    area: inst,
    summary: 'the installer ran longer than the installer timeout and was stopped',
    fix: 'raise --installer-timeout, or find what hangs in the log',
  },
  INSTALLER_ABORTED: {
    retry: 'transient',
    area: inst,
    summary: 'the installer was stopped because bpa is shutting down',
    fix: 'nothing: the step stays journaled as interrupted and is resumed on the next start',
  },
  INSTALLER_MODE_UNSUPPORTED: {
    retry: 'stalled',
    area: inst,
    summary: 'installer mode job needs the bootstrap cluster, and there is none',
    fix: 'give --bootstrap-kubeconfig, run bpa in the cluster, or use installer mode local',
  },
  INSTALLER_IMAGE_MISSING: {
    retry: 'stalled',
    area: inst,
    summary: 'installer mode job needs an installer image',
    fix: 'give --installer-image or Site spec.installer.image',
  },
  INSTALLER_JOB_API: {
    retry: 'transient',
    area: inst,
    summary: 'the installer Job could not be created, read or deleted',
    fix: "read the message; check bpa's RBAC in the bootstrap namespace",
  },
  INSTALLER_VARS_SECRET: {
    retry: 'transient',
    area: inst,
    summary:
      "the Secret that carries an installer Job's variables (Site installer.variables) could not be created, read or deleted",
    fix: 'read the message; bpa needs create, get and delete on secrets in the bootstrap namespace (deploy/rbac.yaml)',
  },
  INSTALLER_VARS_SECRET_CONFLICT: {
    retry: 'stalled',
    area: inst,
    summary:
      "a Secret with the name of an installer Job's variables Secret (<job>-vars) exists and was not created by bpa",
    fix: 'delete or rename that Secret',
  },
  INSTALLER_JOB_CONFLICT: {
    retry: 'stalled',
    area: inst,
    summary: "a Job with the installer Job's name exists and was not created by bpa",
    fix: 'delete or rename that Job',
  },
  INSTALLER_JOB_DELETING: {
    retry: 'waiting',
    area: inst,
    summary: 'an earlier installer Job of the same work is still being deleted',
    fix: 'nothing: bpa waits and retries',
  },
  INSTALLER_JOB_DETACHED: {
    retry: 'transient',
    area: inst,
    summary: 'bpa lost track of a running installer Job',
    fix: 'bpa adopts the Job again on the next run',
  },
  INSTALLER_JOB_UNREACHABLE: {
    retry: 'transient',
    area: inst,
    summary: 'the bootstrap cluster did not answer while bpa watched the installer Job',
    fix: 'bpa adopts the Job again on the next run',
  },
  HOSTS_INI_INVALID: {
    retry: 'stalled',
    area: inst,
    summary:
      'bpa refused to write an inventory from a value that is not a valid name or address (a check that validation normally makes first)',
    fix: 'run `bpa validate`; if it passes, report this as a bug with the site',
  },
  KUBECONFIG_MISSING: {
    retry: 'stalled',
    area: inst,
    summary: 'the installer finished but left no kubeconfig in the cluster directory',
    fix: "check that the installer writes artifacts/admin.conf (KUD's layout) in the cluster directory",
  },

  // --- packages
  DPKG_LOCKED: {
    retry: 'waiting',
    area: pkg,
    summary: 'another apt or dpkg run holds the lock on the node',
    fix: 'nothing: bpa waits and retries',
  },
  PACKAGE_NOT_FOUND: {
    retry: 'stalled',
    area: pkg,
    summary: "a package (or the version asked for) is not available from the node's apt sources",
    fix: 'check the name and version, or the package mirror',
  },
  PACKAGE_VERIFY_FAILED: {
    retry: 'transient',
    area: pkg,
    summary: 'after apt-get, dpkg-query shows another version than the one asked for',
    fix: 'read the message; a pin or a hold on the node may stop the change',
  },
  PACKAGES_FAILED: {
    retry: 'transient',
    area: pkg,
    summary: 'package changes failed on some nodes of a cluster',
    fix: 'the message lists each node and why; the others were changed',
  },
  FACTS_FAILED: {
    retry: 'transient',
    area: pkg,
    summary: 'installed package versions could not be read from a node',
    fix: 'read the message; the node is reported as unreachable',
  },

  // --- publishing
  PUBLISH_FAILED: {
    retry: 'transient',
    area: pub,
    summary: 'the kubeconfig Secret or the node ConfigMap could not be written',
    fix: "read the message; check bpa's RBAC in the bootstrap namespace",
  },
  PUBLISH_CONFLICT: {
    retry: 'stalled',
    area: pub,
    summary: 'a Secret or ConfigMap with that name exists and was not created by bpa',
    fix: 'delete or rename it',
  },
  PUBLISH_INVALID: {
    retry: 'stalled',
    area: pub,
    summary: 'what the installer left cannot be published (an empty or oversized kubeconfig)',
    fix: 'read the message',
  },

  // --- reconcile and serve
  APPLY_FAILED: {
    retry: 'transient',
    area: rec,
    summary: 'an action failed; the cluster report names the action and the step',
    fix: 'read the error of the failed action in status/<cluster>.yaml',
  },
  APPLY_INTERRUPTED: {
    retry: 'transient',
    area: rec,
    summary:
      'bpa stopped (SIGTERM, a lost leadership) while a step ran; the step stays journaled as interrupted and nothing is reported as failed',
    fix: 'nothing: the next start resumes the step from the journal',
  },
  STEP_FAILED: {
    retry: 'transient',
    area: rec,
    summary: 'a journaled step failed without a more specific code',
    fix: 'read the message',
  },
  RECONCILE_FAILED: {
    retry: 'transient',
    area: rec,
    summary: 'a reconcile failed without a more specific code',
    fix: 'read the message',
  },
  RECONCILE_CRASHED: {
    retry: 'transient',
    area: rec,
    summary: 'a reconcile threw something bpa did not expect (a bug)',
    fix: 'report it with the log',
  },
  SHUTDOWN: {
    retry: 'transient',
    area: rec,
    summary: 'bpa serve is stopping; no new reconcile starts',
    fix: 'nothing',
  },
  STATUS_UNAVAILABLE: {
    retry: 'transient',
    area: rec,
    summary:
      '`bpa status --server` could not read the status API of a running `bpa serve` (refused, timed out, not JSON, an HTTP error)',
    fix: 'check the URL (the address `bpa serve --listen` gives) and that the controller runs',
  },
  STATUS_NOT_FOUND: {
    retry: 'stalled',
    area: rec,
    summary:
      '`bpa status PATH`: the directory has no status reports (status/site.yaml): bpa has not reconciled it yet, or it is not a site',
    fix: 'give the site directory of a checkout that bpa reports to (or --server URL)',
  },

  // --- artifacts
  ARTIFACT_STORE_FAILED: {
    retry: 'stalled',
    area: art,
    summary:
      'bpa serve cannot open or write its artifact store (<state>/artifacts): permissions, a full or read-only volume, a directory of the store that is a symbolic link',
    fix: 'check the state volume: bpa must be able to create and rename files under <state>/artifacts, and the directories under it must be directories, not links',
  },
  APT_SIGNING_KEY_INVALID: {
    retry: 'stalled',
    area: art,
    summary:
      'the --apt-signing-key file holds no OpenPGP secret key gpg can sign with (not a secret key, a passphrase, gpg missing)',
    fix: 'export a secret key without a passphrase: gpg --export-secret-keys --armor KEYID > key.asc',
  },
  REGISTRY_CONFIG_FAILED: {
    retry: 'transient',
    area: art,
    summary:
      "the registry mirror configuration (containerd hosts.toml, Docker daemon.json) could not be written on a node, or a node's daemon.json is not a JSON object bpa can merge into",
    fix: 'the message names the node and the file; an unreachable node is retried by the next reconcile, a broken daemon.json must be fixed on the node',
  },
  DRAIN_FAILED: {
    retry: 'stalled',
    area: rec,
    summary:
      "a node could not be cordoned or drained before its change (a PodDisruptionBudget that allowed no eviction until the drain timeout, a pod that cannot be evicted, an API server with no Eviction API bpa can use, an API error); the node stays cordoned and the cluster's rollout halts",
    fix: 'look at the pods named (kubectl get pdb -A); once they can move, reconcile again: the rollout resumes at that node',
  },
  NODE_NOT_READY: {
    retry: 'stalled',
    area: rec,
    summary:
      'after its change a node did not become Ready (or its health command failed) within the health-check timeout; it stays cordoned and the rollout halts',
    fix: 'look at the node (kubectl describe node, the kubelet log); once it is healthy, reconcile again: bpa checks it again, uncordons it and goes on',
  },
  ROLLOUT_HALTED: {
    retry: 'stalled',
    area: rec,
    summary:
      'a rolling change stopped at a node whose drain, change or health check failed; nodes not yet started were not touched',
    fix: 'fix what the message (on the status page, with the log) names for that node, then reconcile again: finished nodes are not repeated',
  },
  CLUSTER_KUBECONFIG_UNUSABLE: {
    retry: 'stalled',
    area: rec,
    summary:
      'a cluster with rollout set has no usable kubeconfig, so its nodes cannot be cordoned or drained',
    fix: 'check the kubeconfig bpa stored after provisioning (<state>/clusters/<cluster>/kubeconfig, or the Secret <cluster>-kubeconfig)',
  },
  SUSPENSIONS_UNREADABLE: {
    retry: 'stalled',
    area: state,
    summary:
      'the suspensions made through the suspend API (suspended.json in the state directory) cannot be read; nothing is applied until they can',
    fix: 'check the permissions of the file; if it is damaged, look at what it suspended, then fix or remove it',
  },
} as const satisfies Record<string, RuntimeCodeInfo>;

export type RuntimeCode = keyof typeof RUNTIME_CODES;

export function isRuntimeCode(code: string): code is RuntimeCode {
  return Object.prototype.hasOwnProperty.call(RUNTIME_CODES, code);
}

export function runtimeCodeInfo(code: RuntimeCode): RuntimeCodeInfo {
  return RUNTIME_CODES[code];
}
