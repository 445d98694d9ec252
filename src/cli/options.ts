import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import {
  OPTIONS,
  allowedText,
  resolveConfig,
  type Config,
  type OptionName,
  type OptionSpec,
} from '../config/options.js';

/** A command's settings, resolved from its flags, the environment and the Site document. */
export type ResolveConfig = (
  opts: Record<string, unknown>,
  site: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
) => Config;

/**
 * Adds registry options to a command; returns a function that resolves them after parsing.
 * Flags are taken as given and checked by the registry, like the environment's and the Site's
 * values, so a bad value gets the same CONFIG_INVALID error whatever its source.
 */
export function addConfigOptions(
  cmd: CommandUnknownOpts,
  names: readonly OptionName[],
): ResolveConfig {
  const attrs = new Map<OptionName, string[]>();
  for (const name of names) {
    const spec = OPTIONS[name] as OptionSpec<unknown>;
    const opt = new Option(spec.flag, `${spec.description}${helpDetail(spec)} [env ${spec.env}]`);
    cmd.addOption(opt);
    if (spec.negatable)
      cmd.addOption(new Option(`--no-${opt.name()}`, `turn ${spec.flag.split(' ')[0]} off`));
    attrs.set(name, [opt.attributeName()]);
    if (spec.deprecatedFlag) attrs.get(name)?.push(addDeprecatedFlag(cmd, spec));
  }
  return (opts, site, env) => {
    const flags: Record<string, unknown> = {};
    for (const [name, [attr, old]] of attrs)
      flags[name] = opts[attr as string] ?? (old && opts[old]);
    return resolveConfig(names, flags, env, site);
  };
}

/** The earlier flag of a setting: hidden, working, and noted on stderr when used. */
function addDeprecatedFlag(cmd: CommandUnknownOpts, spec: OptionSpec<unknown>): string {
  const old = new Option(spec.deprecatedFlag as string).hideHelp();
  cmd.addOption(old);
  const name = old.long ?? old.flags;
  let noted = false;
  // Fired for each value of a variadic flag: noted once.
  cmd.on(`option:${old.name()}`, () => {
    if (noted) return;
    noted = true;
    const now = spec.flag.split(' ')[0] as string;
    cmd.configureOutput().writeErr?.(`bpa: ${name} is deprecated; use ${now}\n`);
  });
  return old.attributeName();
}

function helpDetail(spec: OptionSpec<unknown>): string {
  if (spec.kind === 'boolean') return '';
  const parts: string[] = [];
  if (spec.choices || spec.kind === 'integer' || spec.kind === 'duration')
    parts.push(allowedText(spec));
  const d = spec.default;
  if (d !== '' && !(Array.isArray(d) && d.length === 0))
    parts.push(`default ${Array.isArray(d) ? d.join(',') : String(d)}`);
  return parts.length ? ` (${parts.join('; ')})` : '';
}
