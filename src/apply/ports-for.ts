import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { exportPublicKey } from '../artifacts/apt-signer.js';
import { executionSettings, kubesprayDirOf } from '../config/execution.js';
import type { Config } from '../config/options.js';
import type { Plan } from '../plan/index.js';
import type { BootstrapCredentials } from '../ssh/bootstrap.js';
import type { SiteSecretValues } from '../sops/values.js';
import { SECRET_USES, secretRef } from '../validate/secrets.js';
import { readCredentialsFile, readSecretCredentials } from '../ssh/credentials.js';
import type { OpenSsh } from '../ssh/session.js';
import type { StateStore } from '../state/store.js';
import { StalledError } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import { SshAccess, targetOf } from './access.js';
import { KNOWN_HOSTS_FILE } from './installer/ansible-env.js';
import { checkCommands, LocalInstaller } from './installer/port.js';
import { SshPackages } from './packages/ssh-packages.js';
import { SshRegistry } from './registry/ssh-registry.js';
import type { ApplyPorts, InstallerPath, PublishPort } from './ports.js';
import { FilePublisher } from './publish-files.js';

export interface RealPortsInput {
  cfg: Config;
  /** The Site document's spec. */
  site: Record<string, unknown>;
  /** The site's decrypted Secrets (reconcile/site-secrets.ts). */
  secrets?: SiteSecretValues;
  plan: Plan;
  store: StateStore;
  ssh: OpenSsh;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Live installer output lines. */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
}

/** The real ports the configuration names: SSH, an installer process or Job, publishing. */
export async function realPorts(input: RealPortsInput): Promise<Omit<ApplyPorts, 'facts'>> {
  const { cfg, site, plan, store, ssh } = input;
  const { keys, options: sshOptions, pool } = ssh;
  // Exactly what the plan (and its hash) says bpa will run.
  const settings = plan.settings ?? executionSettings(cfg, site);
  const commands = settings.installer.commands;
  const kubesprayDir = kubesprayDirOf(cfg);
  await checkCommands(commands, {
    paths: installerPaths(plan),
    kubesprayDir,
    checkoutHere: cfg.installerMode !== 'job',
    extraVars: settings.installerVariables !== undefined,
  });
  const bootstrapKube = await kubeConfigFor(cfg, input.env);
  if (cfg.installerMode === 'job' && !bootstrapKube) {
    throw new StalledError(
      'INSTALLER_MODE_UNSUPPORTED',
      'installer mode "job" needs the bootstrap cluster: give --bootstrap-kubeconfig, or run bpa in the cluster',
    );
  }
  if (cfg.installerMode === 'job' && !cfg.installerImage) {
    throw new StalledError(
      'INSTALLER_IMAGE_MISSING',
      'installer mode "job" needs an installer image (Site spec.installer.image or --installer-image)',
    );
  }
  const publish: PublishPort = bootstrapKube
    ? new (await import('./publish-kube.js')).KubePublisher(bootstrapKube, cfg.namespace)
    : new FilePublisher((c) => store.clusterDir(c));
  // Rolling changes drain through each cluster's own API: the client loads only for them.
  const rolling = plan.clusters.some((c) => c.rollout && c.actions.length);
  const rollout = rolling
    ? await Promise.all([import('./rollout/kube-nodes.js'), import('./rollout/kubeconfig-of.js')])
    : undefined;
  const JobInstaller =
    cfg.installerMode === 'job'
      ? (await import('./installer/job-port.js')).JobInstaller
      : undefined;
  const sudo = cfg.sshUser !== 'root';
  const variables =
    settings.installerVariables !== undefined
      ? {
          variables: () =>
            secretOrFail(
              input.secrets,
              settings.installerVariables as string,
              'installer.variables',
            ),
        }
      : {};
  return {
    ...(rollout
      ? {
          nodes: new rollout[0].KubeNodeOps({
            kubeconfig: rollout[1].kubeconfigOf(bootstrapKube, cfg.namespace, (c) =>
              store.clusterDir(c),
            ),
            log: input.log,
          }),
          healthCommand: async (_cluster, node, argv, timeoutMs) => {
            await pool.run(targetOf(node, cfg.sshUser, cfg.sshPort), [...argv], {
              sudo,
              timeoutMs,
            });
          },
        }
      : {}),
    access: new SshAccess({
      pool,
      ssh: sshOptions,
      user: cfg.sshUser,
      port: cfg.sshPort,
      publicKeyPath: keys.publicKey,
      bootstrap: bootstrapCredentials(cfg, site, bootstrapKube, input.secrets),
      knownHostsFile: (c) => join(store.clusterDir(c), KNOWN_HOSTS_FILE),
      maxParallelHosts: cfg.maxParallelHosts,
      log: input.log,
    }),
    installer:
      JobInstaller && bootstrapKube
        ? new JobInstaller({
            kc: bootstrapKube,
            namespace: cfg.namespace,
            image: cfg.installerImage,
            commands,
            kubesprayDir,
            user: cfg.sshUser,
            timeoutSeconds: cfg.installerTimeout,
            stateClaim: cfg.stateClaim,
            sshKeySecret: cfg.sshKeySecret,
            ...variables,
            onLine: input.onLine,
            signal: input.signal,
          })
        : new LocalInstaller({
            commands,
            ...variables,
            timeoutMs: cfg.installerTimeout * 1000,
            privateKey: keys.privateKey,
            user: cfg.sshUser,
            kubesprayDir,
            log: input.log,
            onLine: input.onLine,
            signal: input.signal,
          }),
    publish,
    packages: new SshPackages({
      pool,
      user: cfg.sshUser,
      port: cfg.sshPort,
      maxParallelHosts: cfg.maxParallelHosts,
      packageMirror: settings.packageMirror,
      ...(settings.packageMirrorKey === 'bpa'
        ? { packageMirrorKey: await bpaAptKey(cfg.aptSigningKey) }
        : {}),
      timeoutMs: 15 * 60_000,
      log: input.log,
    }),
    registry: new SshRegistry({
      pool,
      user: cfg.sshUser,
      port: cfg.sshPort,
      maxParallelHosts: cfg.maxParallelHosts,
      log: input.log,
      auth: (mirror) => {
        const name = mirror.credentials?.secret;
        if (name === undefined) return undefined;
        const v = secretOrFail(input.secrets, name, 'registryMirror.credentials');
        return Buffer.from(`${v['username'] ?? ''}:${v['password'] ?? ''}`).toString('base64');
      },
    }),
  };
}

/** A decrypted site Secret the plan uses; its absence means the run skipped decryption. */
function secretOrFail(
  secrets: SiteSecretValues | undefined,
  name: string,
  use: string,
): Readonly<Record<string, string>> {
  const v = secrets?.get(name);
  if (!v)
    throw new StalledError(
      'SITE_SECRETS_INVALID',
      `${use}: the site Secret ${JSON.stringify(name)} was not decrypted in this run`,
    );
  return v;
}

/** The public key of bpa's signed apt repository, from the key that signs it. */
async function bpaAptKey(keyFile: string): Promise<string> {
  if (!keyFile)
    throw new StalledError(
      'APT_SIGNING_KEY_INVALID',
      "the plan writes bpa's apt repository key to the nodes, and no --apt-signing-key is configured: plan and apply with the same settings",
    );
  return exportPublicKey(keyFile);
}

const PATH_OF: Partial<Record<Plan['clusters'][number]['actions'][number]['kind'], InstallerPath>> =
  {
    'provision-cluster': 'provision',
    'upgrade-cluster': 'upgrade',
    'reconfigure-cluster': 'provision',
    'add-nodes': 'scale',
    'remove-nodes': 'remove',
    'remove-cluster': 'reset',
    'install-plugins': 'addon',
  };

/** The installer paths a plan runs. */
function installerPaths(plan: Plan): InstallerPath[] {
  const paths = new Set<InstallerPath>();
  for (const c of plan.clusters)
    for (const a of c.actions) {
      const p = PATH_OF[a.kind];
      if (p) paths.add(p);
    }
  return [...paths];
}

/** The bootstrap cluster's client config, when there is one (the client library loads only then). */
async function kubeConfigFor(cfg: Config, env: NodeJS.ProcessEnv): Promise<KubeConfig | undefined> {
  if (!cfg.bootstrapKubeconfig && !env['KUBERNETES_SERVICE_HOST']) return undefined;
  const { loadKubeConfig } = await import('../kube/kubeconfig.js');
  return loadKubeConfig({ file: cfg.bootstrapKubeconfig, env, what: 'the bootstrap cluster' });
}

/**
 * Where the nodes' default credentials come from: a file (--bootstrap-credentials), else the
 * Site's `ssh.bootstrapCredentials` (a SOPS-encrypted Secret of the site, decrypted for this
 * run), else its `ssh.bootstrapCredentialsSecret` read from the bootstrap cluster.
 */
function bootstrapCredentials(
  cfg: Config,
  site: Record<string, unknown>,
  kc: KubeConfig | undefined,
  secrets: SiteSecretValues | undefined,
): (() => Promise<BootstrapCredentials>) | undefined {
  if (cfg.bootstrapCredentials) return () => readCredentialsFile(cfg.bootstrapCredentials);
  const fromSite = secretRef(site, SECRET_USES[0]);
  if (fromSite !== undefined) {
    return () => {
      const { username, password = '' } = secretOrFail(
        secrets,
        fromSite,
        'ssh.bootstrapCredentials',
      );
      return Promise.resolve(username ? { username, password } : { password });
    };
  }
  const secret = (site['ssh'] as { bootstrapCredentialsSecret?: unknown } | undefined)
    ?.bootstrapCredentialsSecret;
  if (typeof secret === 'string' && kc)
    return () => readSecretCredentials(kc, cfg.namespace, secret);
  return undefined;
}
