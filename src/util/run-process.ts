/**
 * The one way bpa runs a program on its own machine (gpg, ssh-keygen, ssh-keyscan, an
 * installer): argv, never a shell; a timeout; an abort signal; output captured and, when
 * asked, passed on line by line. A program that ends, however it ends, is a result for the
 * caller to judge; only one that cannot be started is an error (SpawnError), which the caller
 * turns into its own (INSTALLER_NOT_FOUND, a tool that is not installed…).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { killProcessGroup } from './proc.js';

export interface ProcessOptions {
  cwd?: string;
  /** The whole environment of the program (default: bpa's own). */
  env?: NodeJS.ProcessEnv;
  /** Written to the program's stdin, which is then closed (default: no stdin). */
  input?: string | Uint8Array;
  /** Ended after this long; the result says timedOut. */
  timeoutMs: number;
  /** Ended when this fires; the result says aborted. */
  signal?: AbortSignal;
  /**
   * Started as the leader of a new process group, so that ending it (a timeout, an abort)
   * ends everything it started too: an installer and its ansible forks.
   */
  group?: boolean;
  /** Between SIGTERM and SIGKILL when the program is ended (default 5 s; 0: SIGKILL at once). */
  killGraceMs?: number;
  /** Each line of output as it arrives, stdout and stderr alike. */
  onLine?: (line: string) => void;
  /** Keep the output in the result (default); off for programs that print more than is read. */
  capture?: boolean;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** The output, when captured (at most the last MAX_CAPTURE bytes of each stream). */
  stdout: string;
  stderr: string;
  durationMs: number;
}

export interface RunningProcess {
  readonly pid: number;
  /** Ends the program (its group, when started as one): SIGTERM, then SIGKILL after the grace. */
  kill(): void;
  /** Resolves when the program has ended and its output is read. */
  readonly ended: Promise<ProcessResult>;
}

/** The program could not be started: `code` is the system's reason (ENOENT, EACCES…). */
export class SpawnError extends Error {
  override readonly name = 'SpawnError';
  constructor(
    readonly program: string,
    readonly code: string | undefined,
    cause: Error,
  ) {
    super(`${program} could not be started: ${cause.message}`, { cause });
  }
}

const MAX_CAPTURE = 1 << 20;
// Output still arriving after the program ended comes from a process it left behind holding
// the pipe; it is not waited for longer than this.
const DRAIN_MS = 2_000;

/** Runs a program to its end; see startProcess. */
export async function runProcess(
  argv: readonly string[],
  opts: ProcessOptions,
): Promise<ProcessResult> {
  return (await startProcess(argv, opts)).ended;
}

/**
 * Starts a program and resolves once it runs (throwing SpawnError when it cannot start), for
 * callers that need its PID while it runs (to record it, to end it).
 */
export async function startProcess(
  argv: readonly string[],
  opts: ProcessOptions,
): Promise<RunningProcess> {
  const [program, ...args] = argv;
  if (program === undefined || program === '') throw new Error('runProcess: empty argv');
  opts.signal?.throwIfAborted();
  const startedAt = Date.now();
  const child = await spawned(program, args, opts);
  const pid = child.pid as number;
  const grace = opts.killGraceMs ?? 5_000;
  const capture = opts.capture ?? true;
  const out = { stdout: new Capture(), stderr: new Capture() };
  if (capture) {
    child.stdout?.on('data', (d: Buffer) => out.stdout.add(d));
    child.stderr?.on('data', (d: Buffer) => out.stderr.add(d));
  }
  const readers: Interface[] = [];
  if (opts.onLine) {
    for (const stream of [child.stdout, child.stderr]) {
      const rl = createInterface({ input: stream as NodeJS.ReadableStream, crlfDelay: Infinity });
      rl.on('line', (line) => {
        try {
          opts.onLine?.(line);
        } catch {
          // A failing display callback must not cut the program's output short.
        }
      });
      readers.push(rl);
    }
  }
  const drained = Promise.all(
    [child.stdout, child.stderr].map(
      (s) => new Promise<void>((res) => (s && !s.readableEnded ? s.once('close', res) : res())),
    ),
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('exit', (code, signal) => res({ code, signal })),
  );
  if (opts.input !== undefined) {
    // A program that fails before reading its input closes the pipe; its exit says why.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.input);
  }

  let timedOut = false;
  let aborted = false;
  let killing: Promise<unknown> | undefined;
  const kill = (): void => {
    killing ??= opts.group ? killProcessGroup(pid, grace) : killChild(child, grace, exited);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    kill();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const ended = (async (): Promise<ProcessResult> => {
    const { code, signal } = await exited;
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    // Whatever the ended program left in its group is ended with it.
    if (killing) await killing;
    const late = setTimeout(() => {
      for (const rl of readers) rl.close();
      for (const s of [child.stdout, child.stderr]) s?.destroy();
    }, DRAIN_MS);
    await drained;
    clearTimeout(late);
    return {
      exitCode: code,
      signal,
      timedOut,
      aborted,
      stdout: out.stdout.text(),
      stderr: out.stderr.text(),
      durationMs: Date.now() - startedAt,
    };
  })();
  return { pid, kill, ended };
}

function spawned(program: string, args: string[], opts: ProcessOptions): Promise<ChildProcess> {
  return new Promise((res, rej) => {
    const child = spawn(program, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: opts.group === true,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.once('spawn', () => res(child));
    child.once('error', (err: NodeJS.ErrnoException) =>
      rej(new SpawnError(program, err.code, err)),
    );
  });
}

/** SIGTERM, then SIGKILL after the grace; resolves once the child has exited. */
async function killChild(
  child: ChildProcess,
  graceMs: number,
  exited: Promise<unknown>,
): Promise<void> {
  child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  if (graceMs <= 0) return void (await exited);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** The last MAX_CAPTURE bytes of a stream. */
class Capture {
  private chunks: Buffer[] = [];
  private bytes = 0;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > MAX_CAPTURE && this.chunks.length > 1) {
      this.bytes -= (this.chunks.shift() as Buffer).length;
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
