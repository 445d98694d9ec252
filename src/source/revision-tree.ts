/**
 * A revision of a local git repository as a directory: what `bpa diff BASE HEAD` plans when
 * given revisions rather than directories. The system git writes the tree (`git archive`),
 * tar unpacks it; the repository and its working tree are never touched.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { StalledError } from '../util/errors.js';
import { runProcess } from '../util/run-process.js';
import { normalizeSitePath } from './site-path.js';

/** The commit `rev` names in the repository at `repoDir`, or undefined when it names none. */
export async function resolveRevision(repoDir: string, rev: string): Promise<string | undefined> {
  if (rev.startsWith('-')) return undefined;
  const r = await runProcess(
    ['git', '-C', repoDir, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`],
    {
      timeoutMs: 30_000,
    },
  ).catch(() => undefined);
  const sha = r?.exitCode === 0 ? r.stdout.trim() : '';
  return /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined;
}

/** Writes `sitePath` of `commit` under `dest` (dest/<sitePath>/…); returns that directory. */
export async function exportRevision(
  repoDir: string,
  commit: string,
  sitePath: string,
  dest: string,
): Promise<string> {
  const path = normalizeSitePath(sitePath);
  await mkdir(dest, { recursive: true });
  const archive = spawn(
    'git',
    ['-C', repoDir, 'archive', '--format=tar', commit, '--', path || '.'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const tar = spawn('tar', ['-x', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] });
  archive.stdout.pipe(tar.stdin);
  let errors = '';
  archive.stderr.on('data', (d: Buffer) => (errors += d.toString()));
  tar.stderr.on('data', (d: Buffer) => (errors += d.toString()));
  const exit = (p: ReturnType<typeof spawn>): Promise<number | null> =>
    new Promise((resolve) => {
      p.on('error', () => resolve(-1));
      p.on('close', (code) => resolve(code));
    });
  const [a, t] = await Promise.all([exit(archive), exit(tar)]);
  if (a !== 0 || t !== 0)
    throw new StalledError(
      'PATH_NOT_FOUND',
      `cannot read ${path || 'the repository'} at ${commit.slice(0, 12)}: ${errors.trim().slice(0, 300) || 'git archive failed'}`,
    );
  return path ? `${dest}/${path}` : dest;
}
