import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Config } from '../config/options.js';
import type { GitAuth } from '../source/git.js';
import { StalledError } from '../util/errors.js';
import { siteDigest } from '../load/digest.js';
import { DEFAULT_LIMITS } from '../load/limits.js';
import { readSite } from '../load/read-site.js';
import { GitSource } from '../source/git-source.js';
import { SshGitSource } from '../source/ssh-git-source.js';
import { isSshUrl } from '../source/ssh-url.js';
import { LocalSource } from '../source/local-source.js';
import type { SiteSource } from '../source/site-source.js';

/** Git credentials from the configuration: a token file or BPA_GIT_TOKEN, never the command line. */
export async function gitAuth(cfg: Config, env: NodeJS.ProcessEnv): Promise<GitAuth | undefined> {
  let token = env['BPA_GIT_TOKEN'] || undefined;
  if (cfg.gitTokenFile) {
    try {
      token = (await readFile(cfg.gitTokenFile, 'utf8')).trim();
    } catch (err: unknown) {
      throw new StalledError(
        'GIT_TOKEN_UNREADABLE',
        `cannot read the git token file ${cfg.gitTokenFile}: ${(err as { code?: string }).code ?? String(err)}`,
      );
    }
  }
  if (!token && !cfg.gitUsername) return undefined;
  return cfg.gitUsername ? { username: cfg.gitUsername, password: token } : { token };
}

/** The site source a configuration names: a repository (--repo) or a local directory. */
export async function sourceFor(
  cfg: Config,
  env: NodeJS.ProcessEnv,
  localDir: string | undefined,
): Promise<SiteSource> {
  if (cfg.repoUrl) {
    const trust = cfg.verifySignatures
      ? {
          openpgpKeys: cfg.trustedKeys || undefined,
          allowedSigners: cfg.allowedSigners || undefined,
        }
      : undefined;
    if (isSshUrl(cfg.repoUrl)) return sshSource(cfg, trust);
    return new GitSource({
      url: cfg.repoUrl,
      ref: cfg.ref,
      path: cfg.path,
      stateDir: cfg.stateDir,
      auth: await gitAuth(cfg, env),
      statusBranch: cfg.statusBranch || undefined,
      trust,
    });
  }
  if (localDir) return localSource(localDir);
  throw new StalledError(
    'NO_SOURCE',
    'no site: give --repo URL (with --ref and --path), or a directory',
  );
}

/** A repository over SSH: a deploy key and the server's host key are required, never guessed. */
function sshSource(
  cfg: Config,
  trust: { openpgpKeys?: string; allowedSigners?: string } | undefined,
): SshGitSource {
  const missing = [
    ...(cfg.gitSshKey ? [] : ['--git-ssh-key (BPA_GIT_SSH_KEY): the deploy key']),
    ...(cfg.gitKnownHosts
      ? []
      : ["--git-known-hosts (BPA_GIT_KNOWN_HOSTS): a known_hosts file with the server's host key"]),
  ];
  if (missing.length)
    throw new StalledError(
      'CONFIG_INVALID',
      `the repository ${cfg.repoUrl} is reached over SSH, which needs ${missing.join(' and ')}`,
    );
  return new SshGitSource({
    url: cfg.repoUrl,
    ref: cfg.ref,
    path: cfg.path,
    stateDir: cfg.stateDir,
    access: { key: resolve(cfg.gitSshKey), knownHosts: resolve(cfg.gitKnownHosts) },
    statusBranch: cfg.statusBranch || undefined,
    trust,
  });
}

/**
 * A site directory on disk as a source (`bpa serve --watch DIR`): its revision is the digest
 * of the files the load stage reads, so only an edit to the site's input is a new revision.
 */
export function localSource(dir: string): LocalSource {
  return new LocalSource(dir, async (d) => siteDigest((await readSite(d, DEFAULT_LIMITS)).files));
}
