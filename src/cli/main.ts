import { Command, CommanderError } from 'commander';
import { EXIT, type Io } from './io.js';
import { registerApply } from './apply/index.js';
import { registerPlan } from './plan/index.js';
import { registerServe } from './serve/index.js';
import { registerValidate } from './validate/index.js';

const VERSION = '0.1.0';

class ExitSignal {
  constructor(readonly code: number) {}
}

/**
 * Runs the bpa CLI with `argv` (without node and script) and resolves to the exit code.
 * Commands write through `io`, so tests can run them in-process too.
 */
export async function main(
  argv: string[],
  io: Io = processIo(),
  env: NodeJS.ProcessEnv = process.env,
  now: () => number = Date.now,
): Promise<number> {
  const program = new Command('bpa')
    .description('GitOps reconciler for bare-metal edge sites')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  const commandIo: Io = {
    ...io,
    exit: (code) => {
      throw new ExitSignal(code);
    },
  };
  registerValidate(program, commandIo, env);
  registerPlan(program, commandIo, env, now);
  registerApply(program, commandIo, env, now);
  registerServe(program, commandIo, env);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err: unknown) {
    if (err instanceof ExitSignal) return err.code;
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.err(`bpa: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.usage;
  }
}

function processIo(): Io {
  return {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    exit: (code) => {
      process.exitCode = code;
    },
  };
}
