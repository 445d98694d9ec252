import type { Config } from './options.js';

export interface InstallerCommands {
  provision: string;
  scale: string;
  addon: string;
  remove: string;
}

/**
 * How bpa will act on the nodes, beyond what the site says: the installer commands it runs,
 * the package mirror it writes, the SSH user and port it (and the installer) log in with.
 * Part of the plan and of its hash: a change here changes what would run.
 */
export interface ExecutionSettings {
  installer: { mode: string; image?: string; commands: InstallerCommands };
  packageMirror?: string;
  ssh: { user: string; port: number };
}

/** The commands bpa runs when none are configured, per inventory flavour. */
export function defaultCommands(flavour: string): InstallerCommands {
  const kubespray = {
    provision: 'ansible-playbook -i {inventory} cluster.yml',
    scale: 'ansible-playbook -i {inventory} scale.yml --limit {nodes}',
    addon: 'ansible-playbook -i {inventory} configure-{plugins}.yml',
    remove: 'ansible-playbook -i {inventory} remove-node.yml -e node={nodes}',
  };
  return flavour === 'kud'
    ? { ...kubespray, provision: 'installer --cluster {cluster} --plugins {plugins}' }
    : kubespray;
}

/** The installer commands of a configuration: the configured ones, else the flavour's. */
export function installerCommands(cfg: Config): InstallerCommands {
  const d = defaultCommands(cfg.flavour);
  return {
    provision: cfg.installerCommand || d.provision,
    scale: cfg.scaleCommand || d.scale,
    addon: cfg.addonCommand || d.addon,
    remove: cfg.removeCommand || d.remove,
  };
}

export function executionSettings(
  cfg: Config,
  site: Record<string, unknown> | undefined,
): ExecutionSettings {
  const mirror = site?.['packageMirror'];
  return {
    installer: {
      mode: cfg.installerMode,
      ...(cfg.installerMode === 'job' ? { image: cfg.installerImage } : {}),
      commands: installerCommands(cfg),
    },
    ...(typeof mirror === 'string' ? { packageMirror: mirror } : {}),
    ssh: { user: cfg.sshUser, port: cfg.sshPort },
  };
}
