import { main } from '../../../src/cli/main.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output (the same code path as bin/bpa). */
export async function runCli(args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    out: (s) => {
      stdout += s;
    },
    err: (s) => {
      stderr += s;
    },
    exit: () => undefined,
  });
  return { code, stdout, stderr };
}

export interface JsonProblem {
  code: string;
  severity: 'error' | 'warning' | 'notice';
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

/** `bpa validate --format json DIR`, parsed; file paths made relative to DIR. */
export async function validateJson(
  dir: string,
): Promise<{ code: number; valid: boolean; problems: JsonProblem[] }> {
  const r = await runCli(['validate', '--format', 'json', dir]);
  if (r.code === 2) throw new Error(`usage error: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { valid: boolean; problems: JsonProblem[] };
  const { relative, resolve } = await import('node:path');
  const problems = out.problems.map((p) => ({
    ...p,
    file: p.file === undefined ? undefined : relative(dir, resolve(p.file)),
  }));
  return { code: r.code, valid: out.valid, problems };
}
