import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { OPTIONS, type OptionSpec } from '../../config/options.js';

/** What shell completion knows of one flag. */
export interface FlagSpec {
  /** `--output`; with its short form `-o` when it has one. */
  long: string;
  short?: string;
  description: string;
  /** The flag takes a value: one of these, or (empty) a file name. */
  values?: readonly string[];
}

/** What shell completion knows of one command. */
export interface CommandSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** The command takes a positional argument (a path, or a shell for `completion`). */
  argument?: { values?: readonly string[] };
}

/**
 * bpa's commands and their visible flags, read from the commander program itself, so the
 * completion scripts list exactly what `--help` lists (deprecated flags are hidden from both).
 */
export function completionSpec(program: CommandUnknownOpts): CommandSpec[] {
  // Registry settings are checked by the registry, not by commander: their allowed values
  // come from there, and their description without the help's details.
  const registry = new Map<string, OptionSpec<unknown>>();
  for (const spec of Object.values(OPTIONS) as OptionSpec<unknown>[])
    registry.set(spec.flag.split(' ')[0] as string, spec);
  return program.commands.map((cmd) => {
    const help = cmd.createHelp();
    const flags: FlagSpec[] = help
      .visibleOptions(cmd)
      .filter((o) => o.long !== undefined)
      .map((o) => ({
        long: o.long as string,
        ...(o.short ? { short: o.short } : {}),
        description: registry.get(o.long as string)?.description ?? o.description,
        ...(o.required || o.optional
          ? { values: o.argChoices ?? registry.get(o.long as string)?.choices ?? [] }
          : {}),
      }));
    const arg = cmd.registeredArguments[0];
    return {
      name: cmd.name(),
      description: cmd.description(),
      flags,
      ...(arg ? { argument: arg.argChoices ? { values: arg.argChoices } : {} } : {}),
    };
  });
}
