import type { OptionName } from '../config/options.js';

/**
 * The settings a plan is computed from. `bpa plan` takes exactly these and `bpa apply` takes
 * them too, so the two compute the same plan and the same hash from the same command line.
 */
export const PLAN_OPTIONS = [
  'stateDir',
  'flavour',
  'prune',
  'inventoryDir',
  'kubeconfig',
  'namespaces',
  'leases',
  'ipOrder',
  'maxParallelHosts',
  'installerMode',
  'installerCommand',
  'scaleCommand',
  'addonCommand',
  'removeCommand',
  'resetCommand',
  'upgradeCommand',
  'kubesprayDir',
  'installerImage',
  'sshUser',
  'sshPort',
  'sshKey',
  'allowSiteCommands',
  'packageMirrors',
  'artifactsUrl',
  'aptSigningKey',
  'registryUrl',
] as const satisfies readonly OptionName[];

/** apply, reconcile and serve: the plan's settings, and those of acting on it. */
export const APPLY_OPTIONS = [
  ...PLAN_OPTIONS,
  'installerTimeout',
  'bootstrapCredentials',
  'sopsAgeKeyFile',
  'sopsAgeSecret',
  'bootstrapKubeconfig',
  'namespace',
  'stateClaim',
  'sshKeySecret',
  'logLevel',
] as const satisfies readonly OptionName[];

/** reconcile --repo and serve: following a repository, checking its commits, the resync. */
export const REPO_OPTIONS = [
  'repoUrl',
  'ref',
  'path',
  'statusBranch',
  'gitUsername',
  'gitTokenFile',
  'gitSshKey',
  'gitKnownHosts',
  'resyncInterval',
  'verifySignatures',
  'trustedKeys',
  'allowedSigners',
  'requireApprovedPlan',
  'approvalExempt',
] as const satisfies readonly OptionName[];
