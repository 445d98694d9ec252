import { Argument, type Command } from '@commander-js/extra-typings';
import type { Io } from '../io.js';
import { EXIT } from '../io.js';
import { completionScript, SHELLS } from './scripts.js';
import { completionSpec } from './spec.js';

/** `bpa completion bash|zsh|fish`: the shell completion script, on stdout. */
export function registerCompletion(program: Command, io: Io): void {
  program
    .command('completion')
    .description('print the shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell) => {
      io.out(completionScript(shell, completionSpec(program)));
      io.exit(EXIT.ok);
    });
}
