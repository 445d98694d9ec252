import { Option, type Command } from 'commander';
import {
  OPTIONS,
  resolveConfig,
  type Config,
  type OptionName,
  type OptionSpec,
} from '../config/options.js';

/** Adds registry options to a command; returns a function that resolves them after parsing. */
export function addConfigOptions(
  cmd: Command,
  names: readonly OptionName[],
): (
  opts: Record<string, unknown>,
  site: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
) => Config {
  const attrs = new Map<OptionName, string>();
  for (const name of names) {
    const spec = OPTIONS[name] as OptionSpec<unknown>;
    const opt = new Option(spec.flag, `${spec.description} [env ${spec.env}]`);
    if (spec.choices) opt.choices(spec.choices);
    // Values are parsed like the environment's; variadic lists and switches come as they are.
    if (spec.flag.includes('<') && !spec.flag.includes('...'))
      opt.argParser((v: string) => spec.parse(v));
    cmd.addOption(opt);
    attrs.set(name, opt.attributeName());
  }
  return (opts, site, env) => {
    const flags: Record<string, unknown> = {};
    for (const [name, attr] of attrs) flags[name] = opts[attr];
    return resolveConfig(names, flags, env, site);
  };
}
