/**
 * Exit codes shared by every command (terraform's -detailed-exitcode, sysexits' EX_USAGE):
 * 0 success, 1 any error, 2 changes (`bpa plan`, `bpa diff`), 64 a wrong command line.
 */
export const EXIT = { ok: 0, failed: 1, changes: 2, usage: 64 } as const;

/** The CLI's window on the process, so commands can be run in-process by tests. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  exit(code: number): void;
}
