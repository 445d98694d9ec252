/**
 * POSIX shell quoting for commands bpa sends to a remote shell (sshd runs them through the
 * user's login shell). Values are validated before they get here; quoting is the second layer,
 * so that even a value that slipped through can only ever be one literal argument.
 */
import { StalledError } from './errors.js';

// Characters no POSIX shell gives a meaning to, anywhere in a word. `=` is left out on purpose:
// a first word like `A=b` would be taken as a variable assignment instead of a command.
const PLAIN = /^[A-Za-z0-9_@%+:,./-]+$/;

/** One argument as a single shell word that the shell turns back into exactly `arg`. */
export function quote(arg: string): string {
  if (arg.includes('\0')) {
    // No shell or exec() can carry a NUL; refusing beats silently truncating the argument.
    throw new StalledError('SHELL_ARGUMENT_INVALID', 'a command argument contains a NUL byte');
  }
  if (arg === '') return "''";
  if (PLAIN.test(arg)) return arg;
  // Inside single quotes every byte is literal except `'` itself: end the quote, add an
  // escaped quote, open a new one.
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A command line from argv, each argument quoted. */
export function command(argv: readonly string[]): string {
  if (argv.length === 0) throw new StalledError('SHELL_ARGUMENT_INVALID', 'an empty command');
  return argv.map(quote).join(' ');
}
