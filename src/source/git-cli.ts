/**
 * The system `git` over SSH: isomorphic-git has no SSH transport, and OpenSSH's client is what
 * every git host's deploy keys are made for. Every command gets an environment that makes ssh
 * use only the configured key and the configured known_hosts file, refuse an unknown or
 * changed host key, and never prompt.
 */
import { StalledError, TransientError, type BpaError } from '../util/errors.js';
import { runProcess, SpawnError } from '../util/run-process.js';
import { quote } from '../util/shell-quote.js';
import { sanitize } from '../util/redact.js';
import {
  GIT_AUTH,
  GIT_FAILED,
  GIT_REF_NOT_FOUND,
  GIT_REPO_NOT_FOUND,
  GIT_UNAVAILABLE,
} from './classify.js';

export interface SshAccess {
  /** The deploy key (a private key file). */
  key: string;
  /** known_hosts with the server's key: the only host keys accepted. */
  knownHosts: string;
  connectTimeoutSec?: number;
}

export const GIT_HOST_KEY = 'GIT_HOST_KEY';
export const GIT_SSH_KEY = 'GIT_SSH_KEY';

/** GIT_SSH_COMMAND: runs through a shell, so every path is quoted. */
export function sshCommand(access: SshAccess): string {
  return [
    'ssh',
    '-F',
    '/dev/null',
    '-i',
    quote(access.key),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    `UserKnownHostsFile=${quote(access.knownHosts)}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'UpdateHostKeys=no',
    '-o',
    'BatchMode=yes',
    '-o',
    `ConnectTimeout=${access.connectTimeoutSec ?? 15}`,
    '-o',
    'ServerAliveInterval=15',
  ].join(' ');
}

export interface GitRun {
  cwd: string;
  access: SshAccess;
  /** The repository URL, for messages. */
  url: string;
  timeoutMs?: number;
}

/** Runs git; returns stdout, or throws a classified error. */
export async function gitCli(
  run: GitRun,
  args: readonly string[],
  opts: { input?: string; env?: Record<string, string>; what: string } = { what: 'git' },
): Promise<string> {
  let result;
  try {
    result = await runProcess(['git', ...args], {
      cwd: run.cwd,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? '/',
        LC_ALL: 'C',
        GIT_TERMINAL_PROMPT: '0',
        GIT_SSH_COMMAND: sshCommand(run.access),
        GIT_CONFIG_NOSYSTEM: '1',
        ...opts.env,
      },
      ...(opts.input !== undefined ? { input: opts.input } : {}),
      timeoutMs: run.timeoutMs ?? 120_000,
    });
  } catch (err: unknown) {
    if (err instanceof SpawnError)
      throw new StalledError(
        GIT_FAILED,
        `${opts.what}: the git program cannot be run (${err.code ?? err.message}); install git`,
      );
    throw err;
  }
  if (result.exitCode === 0) return result.stdout;
  throw classifyGitCli(result.stderr, result.timedOut, opts.what, run);
}

/** What a failed git (and ssh under it) said, as a bpa error with a retry decision. */
export function classifyGitCli(
  stderr: string,
  timedOut: boolean,
  what: string,
  run: GitRun,
): BpaError {
  const text = sanitize(stderr.trim()).split('\n').slice(-4).join(' / ').slice(0, 600);
  const where = run.url;
  if (timedOut)
    return new TransientError(GIT_UNAVAILABLE, `${what}: ${where} did not answer in time`);
  if (
    /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed|No \S+ host key is known/i.test(
      stderr,
    )
  ) {
    const changed = /HAS CHANGED/i.test(stderr);
    return new StalledError(
      GIT_HOST_KEY,
      `${what}: ${where}: the server's host key is ${changed ? 'not the one in' : 'not in'} ${run.access.knownHosts}; bpa does not accept host keys it does not know (${text})`,
    );
  }
  if (
    /UNPROTECTED PRIVATE KEY FILE|Load key .*: (invalid format|Permission denied|No such file)|no such identity/i.test(
      stderr,
    )
  ) {
    return new StalledError(
      GIT_SSH_KEY,
      `${what}: the deploy key ${run.access.key} cannot be used (${text}); it must be a private key readable by bpa and by no one else (chmod 600)`,
    );
  }
  if (/Permission denied \(|Authentication failed|publickey/i.test(stderr)) {
    return new StalledError(
      GIT_AUTH,
      `${what}: ${where} refused the deploy key ${run.access.key} (${text})`,
    );
  }
  if (/couldn't find remote ref|not our ref|no such ref|invalid refspec/i.test(stderr)) {
    return new StalledError(GIT_REF_NOT_FOUND, `${what}: ${where}: ${text}`);
  }
  if (
    /does not appear to be a git repository|not a git repository|Repository not found|No such file or directory/i.test(
      stderr,
    )
  ) {
    return new StalledError(GIT_REPO_NOT_FOUND, `${what}: no git repository at ${where} (${text})`);
  }
  if (
    /Could not resolve|Connection refused|Connection timed out|Connection reset|Connection closed|No route to host|Network is unreachable|kex_exchange|Broken pipe|unexpected disconnect|early EOF|hung up/i.test(
      stderr,
    )
  ) {
    return new TransientError(GIT_UNAVAILABLE, `${what}: ${where} is unreachable (${text})`);
  }
  return new TransientError(GIT_FAILED, `${what}: ${text || 'git failed'}`);
}
