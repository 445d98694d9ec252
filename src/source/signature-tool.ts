/**
 * The tools that check commit signatures (gpg, gpgv, ssh-keygen), run the same way: no shell,
 * a minimal environment (HOME pointed at a scratch directory, so neither gpg nor ssh-keygen
 * finds the user's configuration), and a timeout. A non-zero exit is a verdict and is
 * returned; only a tool that could not run or did not finish is an ExecError.
 */
import { join } from 'node:path';
import { ExecError } from '../util/exec-error.js';
import { messageOf } from '../util/errors.js';
import { SpawnError, runProcess } from '../util/run-process.js';
import { command } from '../util/shell-quote.js';

export interface ToolResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** gpg and ssh-keygen work on a few hundred bytes; anything slower than this is stuck. */
const TOOL_TIMEOUT_MS = 30_000;

export async function runTool(
  cmd: string,
  args: string[],
  tmp: string,
  input?: Buffer,
): Promise<ToolResult> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    GNUPGHOME: join(tmp, 'gnupg'),
    LC_ALL: 'C',
  };
  const line = command([cmd, ...args]);
  let result;
  try {
    result = await runProcess([cmd, ...args], {
      cwd: tmp,
      env,
      input,
      timeoutMs: TOOL_TIMEOUT_MS,
      killGraceMs: 0,
    });
  } catch (err: unknown) {
    if (err instanceof SpawnError && err.code === 'ENOENT') {
      throw new ExecError({
        cmd: line,
        exitCode: 127,
        stderr: `${cmd}: command not found`,
        message: `${cmd} is not installed: it is needed to verify commit signatures`,
        cause: err,
      });
    }
    throw new ExecError({ cmd: line, exitCode: null, stderr: messageOf(err), cause: err });
  }
  const { exitCode, stdout, stderr } = result;
  if (exitCode !== null && !result.timedOut) return { exitCode, stdout, stderr };
  throw new ExecError({
    cmd: line,
    exitCode: null,
    signal: result.signal,
    timedOut: result.timedOut,
    timeoutMs: TOOL_TIMEOUT_MS,
    stdout,
    stderr,
  });
}

/** The last non-empty line of a tool's output, for messages. */
export function lastLine(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return (lines[lines.length - 1] ?? 'no output').trim();
}
