/**
 * The installer's command line from an operator's template. The template is split into argv
 * before any value is put in, and the command runs without a shell, so a value can never add
 * an argument or a command. Values are validated all the same: a name that reaches a playbook
 * as `--limit` or `-e` must not be able to start an option or carry a pattern.
 */
import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import { StalledError } from '../../util/errors.js';
import type { InstallerRequest } from '../ports.js';
import { RESERVED_NODE_NAMES } from '../../util/reserved-names.js';

/** What a command template's placeholders stand for: the request, and bpa's own settings. */
export interface InstallerVars extends Omit<InstallerRequest, 'workId'> {
  /** The Kubespray checkout (absolute), when one is configured. */
  kubesprayDir?: string;
  /** The run's 0600 extra-vars file (site Secret installer.variables), when it has one. */
  extraVars?: string;
}

const PLACEHOLDERS = [
  'cluster',
  'clusterDir',
  'inventory',
  'plugins',
  'nodes',
  'podSubnet',
  'kubesprayDir',
  'extraVars',
] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const PLUGIN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// Printable, no whitespace: a path lands in one argument, and a log line shows it unambiguously.
const PATH = /^[^\s\p{Cc}]+$/u;
const CIDR = /^[0-9a-fA-F:.]+\/\d{1,3}$/;

function invalid(message: string): StalledError {
  return new StalledError('INSTALLER_COMMAND_INVALID', message);
}

function checkPath(what: string, value: string): string {
  if (!isAbsolute(value) || !PATH.test(value)) {
    throw invalid(`${what} ${JSON.stringify(value)} must be an absolute path without spaces`);
  }
  return value;
}

function checkList(what: string, values: readonly string[], pattern: RegExp): string {
  for (const v of values) {
    if (!pattern.test(v)) throw invalid(`${what} ${JSON.stringify(v)} is not a valid name`);
  }
  return values.join(',');
}

function values(vars: InstallerVars): Record<Placeholder, () => string> {
  return {
    cluster: () => {
      if (!SUBDOMAIN.test(vars.cluster)) {
        throw invalid(`cluster name ${JSON.stringify(vars.cluster)} is not a valid name`);
      }
      return vars.cluster;
    },
    clusterDir: () => checkPath('cluster directory', vars.clusterDir),
    inventory: () => checkPath('inventory', vars.inventory),
    plugins: () => checkList('plugin', vars.plugins, PLUGIN),
    nodes: () => {
      // An empty limit would let a scale or remove path act on every host of the inventory.
      if (vars.nodes.length === 0) {
        throw invalid('the command uses {nodes} but no nodes were given');
      }
      const reserved = vars.nodes.find((n) => RESERVED_NODE_NAMES.has(n));
      if (reserved !== undefined) {
        throw invalid(
          `node name ${JSON.stringify(reserved)} is an inventory group or pattern name`,
        );
      }
      return checkList('node name', vars.nodes, LABEL);
    },
    podSubnet: () => {
      // An empty value would hand the installer an empty network: refuse, as for {nodes}.
      if (vars.podSubnet === undefined) {
        throw invalid(
          `the command uses {podSubnet} but cluster ${JSON.stringify(vars.cluster)} has no PodSubnet`,
        );
      }
      if (!CIDR.test(vars.podSubnet) || isIP(vars.podSubnet.split('/')[0] ?? '') === 0) {
        throw invalid(`pod subnet ${JSON.stringify(vars.podSubnet)} is not a CIDR`);
      }
      return vars.podSubnet;
    },
    extraVars: () => {
      if (!vars.extraVars)
        throw invalid(
          'the command uses {extraVars} but the Site has no installer.variables Secret',
        );
      return checkPath('extra-vars file', vars.extraVars);
    },
    kubesprayDir: () => {
      if (!vars.kubesprayDir) {
        throw new StalledError(
          'KUBESPRAY_DIR_MISSING',
          'the installer command runs Kubespray ({kubesprayDir}), but no Kubespray checkout is configured: give its directory with --kubespray-dir or BPA_KUBESPRAY_DIR',
        );
      }
      return checkPath('Kubespray directory', vars.kubesprayDir.replace(/(?<=.)\/+$/, ''));
    },
  };
}

/** Whether a command template runs Kubespray from the configured checkout. */
export function usesKubespray(template: string): boolean {
  return template.includes('{kubesprayDir}');
}

const isPlaceholder = (name: string): name is Placeholder =>
  (PLACEHOLDERS as readonly string[]).includes(name);

/**
 * Splits `template` on whitespace into argv, then replaces `{cluster}`, `{clusterDir}`,
 * `{inventory}`, `{plugins}`, `{nodes}` (lists comma-joined), `{podSubnet}` and `{kubesprayDir}` inside each
 * argument. Only the
 * values a template uses are validated, so a cluster template need not be given any nodes.
 */
export function expandCommand(template: string, vars: InstallerVars): string[] {
  const words = template.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) throw invalid('the installer command is empty');
  const get = values(vars);
  return words.map((word, index) => {
    const expanded = word.replace(/\{([^{}]*)\}/g, (_, name: string) => {
      if (!isPlaceholder(name)) {
        const known = PLACEHOLDERS.map((p) => `{${p}}`).join(' ');
        throw invalid(`unknown placeholder {${name}} in the installer command (known: ${known})`);
      }
      return get[name]();
    });
    if (index === 0 && expanded === '') throw invalid('the installer command names no program');
    return expanded;
  });
}
