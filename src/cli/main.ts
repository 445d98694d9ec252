import { readFileSync } from 'node:fs';
import { Command, CommanderError } from '@commander-js/extra-typings';
import { BpaError, ConfigError, UsageError, messageOf } from '../util/errors.js';
import { sanitize } from '../util/redact.js';
import { printable } from '../util/printable.js';
import { EXIT, type Io } from './io.js';
import { registerApply } from './apply/index.js';
import { registerDiff } from './diff/index.js';
import { registerCompletion } from './completion/index.js';
import { addExamples } from './examples.js';
import { registerPlan } from './plan/index.js';
import { registerServe } from './serve/index.js';
import { registerStatus } from './status/index.js';
import { registerValidate } from './validate/index.js';

/**
 * bpa's version, from package.json: its one place. The file is two levels up from both
 * src/cli/main.ts and dist/cli/main.js, and the image ships it beside dist/.
 */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

class ExitSignal {
  constructor(readonly code: number) {}
}

/**
 * Runs the bpa CLI with `argv` (without node and script) and resolves to the exit code.
 * Commands write through `io`, so tests can run them in-process too. A command that fails
 * throws; the error is printed here, once, as one line naming its code.
 */
export async function main(
  argv: string[],
  io: Io = processIo(),
  env: NodeJS.ProcessEnv = process.env,
  now: () => number = Date.now,
): Promise<number> {
  const code = await run(argv, io, env, now);
  // Output that could not be written fails the command, whatever it did after writing.
  return outputFailed ? EXIT.failed : code;
}

async function run(
  argv: string[],
  io: Io,
  env: NodeJS.ProcessEnv,
  now: () => number,
): Promise<number> {
  const program = new Command('bpa')
    .description('GitOps reconciler for bare-metal edge sites')
    .version(version())
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  const commandIo: Io = {
    ...io,
    exit: (code) => {
      throw new ExitSignal(code);
    },
  };
  let command = 'bpa';
  let json = false;
  program.hook('preAction', (_program, action) => {
    command = `bpa ${action.name()}`;
    const o: { output?: unknown; format?: unknown } = action.opts();
    json = o.output === 'json' || o.format === 'json';
  });
  registerValidate(program, commandIo, env);
  registerPlan(program, commandIo, env, now);
  registerDiff(program, commandIo, env, now);
  registerApply(program, commandIo, env, now);
  registerServe(program, commandIo, env);
  registerStatus(program, commandIo);
  registerCompletion(program, commandIo);
  addExamples(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err: unknown) {
    if (err instanceof ExitSignal) return err.code;
    // commander has printed its own message (unknown option, missing argument…).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return reportError(err, command, json, io);
  }
}

/** Prints a failed command's error as one line (and as JSON for -o json); returns the exit code. */
function reportError(err: unknown, command: string, json: boolean, io: Io): number {
  const e =
    err instanceof BpaError
      ? err
      : new BpaError(
          'INTERNAL_ERROR',
          `${messageOf(err)} (this is a bug in bpa: please report it with the command line)`,
        );
  const usage = e instanceof UsageError || (e instanceof ConfigError && e.source === 'flag');
  if (json) io.out(JSON.stringify({ error: e.toJSON() }, null, 2) + '\n');
  const hint = usage ? ` (run ${command} --help)` : '';
  io.err(`${command}: ${e.code}: ${oneLine(sanitize(e.message))}${hint}\n`);
  return usage ? EXIT.usage : EXIT.failed;
}

/** Messages stay on one line, and nothing in them can drive the terminal. */
function oneLine(text: string): string {
  return printable(text.replace(/\r?\n/g, ' '));
}

/** The process's standard streams, made once: each gets one error listener. */
let standardIo: Io | undefined;

function processIo(): Io {
  return (standardIo ??= {
    out: writer(process.stdout),
    err: writer(process.stderr),
    exit: (code) => {
      process.exitCode = code;
    },
  });
}

/** Whether writing to a standard stream failed for another reason than its reader leaving. */
let outputFailed = false;

/**
 * Writes to a standard stream until it fails. When its reader goes away (`bpa plan -o json |
 * head`), what follows is dropped and the command ends as it would have; any other failure
 * is one line on stderr and exit code 1. Never an unhandled error with a stack trace.
 */
function writer(stream: NodeJS.WriteStream): (s: string) => void {
  let closed = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    closed = true;
    if (err.code === 'EPIPE') return;
    // Before main returns, it returns 1; after, the exit code is set here.
    outputFailed = true;
    process.exitCode = EXIT.failed;
    if (stream !== process.stderr) {
      process.stderr.write(`bpa: cannot write to standard output: ${err.code ?? err.message}\n`);
    }
  });
  return (s) => {
    if (!closed) stream.write(s);
  };
}
