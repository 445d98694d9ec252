/** Exit codes shared by every command. */
export const EXIT = { ok: 0, invalid: 1, usage: 2, changes: 2 } as const;

/** The CLI's window on the process, so commands can be run in-process by tests. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  exit(code: number): void;
}
