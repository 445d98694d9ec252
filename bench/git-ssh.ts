/**
 * The SSH transport (the system git over OpenSSH, src/source/ssh-git-source.ts) against a real
 * sshd on loopback serving the repository through git-shell, next to native git on the same
 * URL with the same ssh options: the bench repository of bench/git.ts (2,000 files, 5,000
 * commits), site path sites/bench.
 *   (a) a shallow clone: bpa's SshGitSource.sync() into an empty state directory, against
 *       `git clone --depth 1 --branch main`;
 *   (b) a no-op poll (remote unchanged): SshGitSource.sync() on the warm cache, against
 *       `git fetch --depth 1 origin main` in the native clone.
 * Medians of 5. Needs root (sshd). Run: npx tsx bench/git-ssh.ts
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sshCommand } from '../src/source/git-cli.js';
import { SshGitSource } from '../src/source/ssh-git-source.js';
import { startGitServer } from '../test/fakes/git-server.js';
import { cannotRunGitSshd, startGitSshd } from '../test/fakes/git-sshd.js';
import { buildSiteRepo, median } from './git.js';

const RUNS = 5;

function git(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('git', args, { cwd, env }, (err, _o, stderr) =>
      err ? reject(new Error(`git ${args[0]}: ${stderr}`)) : resolve(),
    ),
  );
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const ms = (xs: number[]): string =>
  `median ${median(xs).toFixed(0)} ms (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`;

async function main(): Promise<void> {
  const why = cannotRunGitSshd();
  if (why) {
    console.log(`skipped: ${why}`);
    return;
  }
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-bench-ssh-'));
  const server = await startGitServer();
  const sshd = await startGitSshd(tmp);
  try {
    const repo = await buildSiteRepo(server, 'bench');
    const bare = (await server.git('bench', ['rev-parse', '--absolute-git-dir'])).trim();
    const url = sshd.url(bare);
    console.log(
      `repository: ${repo.files} files, ${repo.commits} commits; over ssh via git-shell at ${url}`,
    );
    const access = { key: sshd.clientKey, knownHosts: sshd.knownHosts };
    const env = { ...process.env, GIT_SSH_COMMAND: sshCommand(access), LC_ALL: 'C' };

    const bpaClone: number[] = [];
    const nativeClone: number[] = [];
    const bpaPoll: number[] = [];
    const nativePoll: number[] = [];
    let warm: SshGitSource | undefined;
    let nativeDir = '';
    for (let i = 0; i < RUNS; i++) {
      const state = await mkdtemp(join(tmp, 'state-'));
      const source = new SshGitSource({
        url,
        ref: 'main',
        path: 'sites/bench',
        stateDir: state,
        access,
      });
      bpaClone.push(await timed(() => source.sync()));
      warm = source;
      const dir = join(tmp, `native-${i}`);
      nativeClone.push(
        await timed(() =>
          git(['clone', '--quiet', '--depth', '1', '--branch', 'main', url, dir], tmp, env),
        ),
      );
      nativeDir = dir;
    }
    for (let i = 0; i < RUNS; i++) {
      bpaPoll.push(await timed(() => (warm as SshGitSource).sync()));
      nativePoll.push(
        await timed(() =>
          git(['fetch', '--quiet', '--depth', '1', 'origin', 'main'], nativeDir, env),
        ),
      );
    }
    console.log(`(a) shallow clone, bpa (SshGitSource.sync, sparse site path): ${ms(bpaClone)}`);
    console.log(
      `    shallow clone, native git clone --depth 1:                 ${ms(nativeClone)}`,
    );
    console.log(`(b) no-op poll, bpa (fetch + rev-parse + digest):              ${ms(bpaPoll)}`);
    console.log(`    no-op poll, native git fetch --depth 1:                    ${ms(nativePoll)}`);
  } finally {
    await sshd.stop();
    await server.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
