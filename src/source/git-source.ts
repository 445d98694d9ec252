import { join } from 'node:path';
import { sourceCacheDir } from './cache-dir.js';
import { STATUS_DIR, normalizeSitePath } from './site-path.js';
import {
  changedReports,
  parseReports,
  readReportTexts,
  statusBranchOf,
  type SiteSource,
} from './site-source.js';
import type { HistoryEntry } from './history.js';
import type { GitAuth, RepoOptions } from './types.js';

export interface GitSourceOptions {
  url: string;
  ref: string;
  path: string;
  stateDir: string;
  auth?: GitAuth;
  /** Push status commits here instead of the followed branch. */
  statusBranch?: string;
  /** Require commits signed by these keys. */
  trust?: { openpgpKeys?: string; allowedSigners?: string };
  author?: { name: string; email: string };
}

/** Commits fetched below a revision when looking for the one that brought its input. */
const DEEPEN = 50;

/** A branch (tag, commit) of a site repository over HTTP(S); reports are committed and pushed. */
export class GitSource implements SiteSource {
  private readonly dir: string;
  private readonly sitePath: string;

  constructor(private readonly opts: GitSourceOptions) {
    this.dir = sourceCacheDir(opts.stateDir, opts.url);
    this.sitePath = normalizeSitePath(opts.path);
  }

  describe(): string {
    return `${this.opts.url.replace(/\/\/[^@/]*@/, '//')}#${this.opts.ref}:${this.sitePath || '.'}`;
  }

  private repo(): RepoOptions {
    const repo = { url: this.opts.url, ref: this.opts.ref, dir: this.dir, auth: this.opts.auth };
    // Only the site's files are kept and checked out, whatever else the repository holds.
    return { ...repo, path: this.sitePath };
  }

  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    // isomorphic-git loads only for a repository source.
    const { inputDigest, syncRepo } = await import('./git.js');
    const { revision } = await syncRepo(this.repo());
    const digest = await inputDigest(this.dir, revision.commit, this.sitePath);
    return { siteDir: join(this.dir, this.sitePath), revision: revision.commit, digest };
  }

  async checkedOut(): Promise<
    Map<string, { oid: string; size: number; mtimeMs: number; ino: number }>
  > {
    const { checkedOutFiles } = await import('./site-checkout.js');
    return checkedOutFiles(this.dir, this.sitePath);
  }

  /** With a status branch, the reports are read from it: the followed branch has none. */
  async previousReports(siteDir: string): Promise<Map<string, unknown>> {
    return parseReports(await this.reportTexts(siteDir));
  }

  async reportTexts(siteDir: string): Promise<Map<string, string>> {
    if (!this.opts.statusBranch) return readReportTexts(siteDir);
    const { readBranchDir } = await import('./read-branch.js');
    const dir = this.sitePath ? `${this.sitePath}/${STATUS_DIR}` : STATUS_DIR;
    const files = await readBranchDir(this.repo(), this.opts.statusBranch, dir);
    return new Map(
      [...files]
        .filter(([name]) => name.endsWith('.yaml'))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, text]) => [`${STATUS_DIR}/${name}`, text]),
    );
  }

  async history(limit: number): Promise<HistoryEntry[]> {
    const [{ readHistory }, { PUSH_REF }] = await Promise.all([
      import('./history.js'),
      import('./git-push.js'),
    ]);
    // The followed branch as fetched, and the status commits bpa pushed on top of it.
    return readHistory(this.dir, [PUSH_REF, 'HEAD'], limit);
  }

  async signed(revision: string): Promise<boolean> {
    const [{ default: git }, fs] = await Promise.all([import('isomorphic-git'), import('node:fs')]);
    const { commit } = await git.readCommit({ fs, dir: this.dir, oid: revision });
    return Boolean(commit.gpgsig);
  }

  async inputCommit(revision: string): Promise<{ commit: string; message: string } | undefined> {
    const { localInputCommit } = await import('./input-commit.js');
    // The cache is shallow: the history below the revision is fetched once, when needed.
    return localInputCommit(this.dir, this.sitePath, revision, async () => {
      const [{ fetchWhole }, { httpClient }, { remoteFor }] = await Promise.all([
        import('./transport.js'),
        import('./http-client.js'),
        import('./remote.js'),
      ]);
      const repo = this.repo();
      const link = { remote: remoteFor(repo.url, repo.auth), http: httpClient(undefined) };
      await fetchWhole(link, this.dir, revision, DEEPEN);
    });
  }

  async verify(revision: string): Promise<void> {
    if (!this.opts.trust) return;
    const { verifyCommit } = await import('./verify.js');
    await verifyCommit(this.dir, revision, this.opts.trust);
  }

  async publish(
    siteDir: string,
    files: ReadonlyMap<string, string | null>,
    message: string,
  ): Promise<string | undefined> {
    const changed = changedReports(await this.reportTexts(siteDir), files, this.sitePath);
    if (!changed.size) return undefined;
    const { commitAndPush } = await import('./git-push.js');
    const result = await commitAndPush(this.repo(), {
      files: Object.fromEntries(changed),
      message,
      author: this.opts.author ?? { name: 'bpa', email: 'bpa@bpa.akraino.org' },
      branch: statusBranchOf(this.opts),
    });
    return result.commit;
  }
}
