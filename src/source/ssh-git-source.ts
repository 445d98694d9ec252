import { createHash } from 'node:crypto';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StalledError, TransientError } from '../util/errors.js';
import { backoff } from '../util/retry.js';
import { GIT_PUSH_REJECTED } from './classify.js';
import { gitCli, type GitRun, type SshAccess } from './git-cli.js';
import { STATUS_DIR, normalizeSitePath } from './site-path.js';
import {
  changedReports,
  parseReports,
  readReportTexts,
  statusBranchOf,
  type SiteSource,
} from './site-source.js';

export interface SshGitSourceOptions {
  url: string;
  ref: string;
  path: string;
  stateDir: string;
  access: SshAccess;
  statusBranch?: string;
  trust?: { openpgpKeys?: string; allowedSigners?: string };
  author?: { name: string; email: string };
  /** Push attempts before GIT_PUSH_REJECTED (default 5). */
  maxPushAttempts?: number;
}

const FETCHED = 'refs/bpa/fetched';
const PUSH_BASE = 'refs/bpa/push-base';
const STATUS = 'refs/bpa/status';
/** Commits fetched below the revision when looking for the one that brought its input. */
const DEEPEN = 50;

/**
 * A branch (tag, commit) of a site repository over SSH, with the system `git` (see
 * git-cli.ts): a shallow fetch of the followed ref into a cache under the state directory,
 * the site's files checked out (sparse: the site path only), and status commits built from
 * objects (a throwaway index, never the checkout) and pushed, re-created on the new head when
 * the push loses a race. The same revision, digest and trailer rules as over HTTP.
 */
export class SshGitSource implements SiteSource {
  private readonly dir: string;
  private readonly sitePath: string;
  private readonly run: GitRun;

  constructor(private readonly opts: SshGitSourceOptions) {
    // One cache per URL, as over HTTP (an SSH URL holds no credential to leave out).
    this.dir = join(
      opts.stateDir,
      'source',
      createHash('sha256').update(opts.url).digest('hex').slice(0, 16),
    );
    this.sitePath = normalizeSitePath(opts.path);
    this.run = { cwd: this.dir, access: opts.access, url: opts.url };
  }

  describe(): string {
    return `${this.opts.url}#${this.opts.ref}:${this.sitePath || '.'}`;
  }

  private git(args: string[], what: string, extra: Parameters<typeof gitCli>[2] = { what }) {
    return gitCli(this.run, args, { ...extra, what });
  }

  /** The cache: a repository whose only remote is the site's, checking out the site path. */
  private async ensureRepo(): Promise<void> {
    const ok = await stat(join(this.dir, '.git', 'HEAD')).catch(() => undefined);
    if (ok) return;
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true });
    await this.git(['init', '--quiet'], 'git init');
    await this.git(['remote', 'add', 'origin', this.opts.url], 'git remote');
    // Signatures and trailers are read with isomorphic-git, which needs no config beyond this.
    if (this.sitePath)
      await this.git(
        ['sparse-checkout', 'set', '--no-cone', `/${this.sitePath}/`],
        'git sparse-checkout',
      );
  }

  private refspec(): string {
    const ref = this.opts.ref;
    // A commit id is fetched as itself; a branch or tag by its name (git finds refs/heads/…).
    return /^[0-9a-f]{40}$/.test(ref) ? ref : `+${ref}:${FETCHED}`;
  }

  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    await this.ensureRepo();
    const what = `fetching ${this.opts.ref} from ${this.opts.url}`;
    await this.git(['fetch', '--quiet', '--no-tags', '--depth=1', 'origin', this.refspec()], what);
    const target = /^[0-9a-f]{40}$/.test(this.opts.ref) ? 'FETCH_HEAD' : FETCHED;
    const commit = (await this.git(['rev-parse', '--verify', `${target}^{commit}`], what)).trim();
    const head = (
      await this.git(['rev-parse', '--verify', '--quiet', 'HEAD'], what).catch(() => '')
    ).trim();
    if (head !== commit) {
      await this.git(
        ['checkout', '--quiet', '--force', '--detach', commit],
        `checking out ${commit}`,
      );
    }
    const { inputDigest } = await import('./git.js');
    const digest = await inputDigest(this.dir, commit, this.sitePath);
    return { siteDir: join(this.dir, this.sitePath), revision: commit, digest };
  }

  async previousReports(siteDir: string): Promise<Map<string, unknown>> {
    return parseReports(await this.reportTexts(siteDir));
  }

  /** With a status branch, the reports are read from it: the followed branch has none. */
  async reportTexts(siteDir: string): Promise<Map<string, string>> {
    const branch = this.opts.statusBranch;
    if (!branch) return readReportTexts(siteDir);
    const out = new Map<string, string>();
    const fetched = await this.fetchBranch(branch, STATUS);
    if (!fetched) return out;
    const dir = this.sitePath ? `${this.sitePath}/${STATUS_DIR}/` : `${STATUS_DIR}/`;
    const names = (
      await this.git(['ls-tree', '--name-only', `${STATUS}:${dir}`], 'reading reports').catch(
        () => '',
      )
    )
      .split('\n')
      .filter((n) => n.endsWith('.yaml'))
      .sort();
    for (const name of names)
      out.set(
        `${STATUS_DIR}/${name}`,
        await this.git(['show', `${STATUS}:${dir}${name}`], 'reading reports'),
      );
    return out;
  }

  /** Fetches a branch into `into`; false when the remote has no such branch. */
  private async fetchBranch(branch: string, into: string): Promise<boolean> {
    const listed = await this.git(
      ['ls-remote', '--heads', 'origin', `refs/heads/${branch}`],
      `listing ${branch}`,
    );
    if (!listed.trim()) return false;
    await this.git(
      ['fetch', '--quiet', '--no-tags', '--depth=1', 'origin', `+refs/heads/${branch}:${into}`],
      `fetching ${branch}`,
    );
    return true;
  }

  async signed(revision: string): Promise<boolean> {
    const [{ default: git }, fs] = await Promise.all([import('isomorphic-git'), import('node:fs')]);
    const { commit } = await git.readCommit({ fs, dir: this.dir, oid: revision });
    return Boolean(commit.gpgsig);
  }

  async verify(revision: string): Promise<void> {
    if (!this.opts.trust) return;
    const { verifyCommit } = await import('./verify.js');
    await verifyCommit(this.dir, revision, this.opts.trust);
  }

  async inputCommit(revision: string): Promise<{ commit: string; message: string } | undefined> {
    const { localInputCommit } = await import('./input-commit.js');
    return localInputCommit(this.dir, this.sitePath, revision, async () => {
      await this.git(
        ['fetch', '--quiet', '--no-tags', `--deepen=${DEEPEN}`, 'origin', this.refspec()],
        `fetching the history below ${revision.slice(0, 12)}`,
      );
    });
  }

  async publish(
    siteDir: string,
    files: ReadonlyMap<string, string | null>,
    message: string,
  ): Promise<string | undefined> {
    const changed = [...changedReports(await this.reportTexts(siteDir), files, this.sitePath)];
    if (!changed.length) return undefined;
    const branch = statusBranchOf(this.opts);
    const attempts = this.opts.maxPushAttempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      const commit = await this.statusCommit(branch, changed, message);
      if (commit === undefined) return undefined;
      try {
        await this.git(
          ['push', '--quiet', 'origin', `${commit}:refs/heads/${branch}`],
          `pushing the status commit to ${branch}`,
        );
        return commit;
      } catch (err: unknown) {
        const text = err instanceof Error ? err.message : String(err);
        // Someone pushed in between: re-create the commit on the new head.
        const raced = /non-fast-forward|fetch first|rejected|stale info|failed to update ref/i.test(
          text,
        );
        if (!raced) throw err;
        if (attempt >= attempts)
          throw new TransientError(
            GIT_PUSH_REJECTED,
            `the status commit was rejected ${attempts} times: ${branch} kept moving (${text.slice(0, 300)})`,
          );
        await new Promise((r) => setTimeout(r, backoff(200, 5_000)(attempt)));
      }
    }
  }

  /**
   * A commit of `files` on the remote head of `branch` (or, for a status branch that does not
   * exist yet, an orphan holding only them), built in a throwaway index; undefined when the
   * head already holds that content.
   */
  private async statusCommit(
    branch: string,
    files: ReadonlyArray<readonly [string, string | null]>,
    message: string,
  ): Promise<string | undefined> {
    const exists = await this.fetchBranch(branch, PUSH_BASE);
    if (!exists && !this.opts.statusBranch)
      throw new StalledError('GIT_REF_NOT_FOUND', `branch ${branch} is not on ${this.opts.url}`);
    const index = join(this.dir, '.git', `bpa-index-${process.pid}`);
    const env = { GIT_INDEX_FILE: index };
    const what = 'building the status commit';
    try {
      await this.git(exists ? ['read-tree', PUSH_BASE] : ['read-tree', '--empty'], what, {
        env,
        what,
      });
      for (const [path, text] of files) {
        if (text === null) {
          await this.git(['update-index', '--force-remove', '--', path], what, { env, what });
          continue;
        }
        const blob = (
          await this.git(['hash-object', '-w', '--stdin'], what, { input: text, what })
        ).trim();
        await this.git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], what, {
          env,
          what,
        });
      }
      const tree = (await this.git(['write-tree'], what, { env, what })).trim();
      if (exists) {
        const before = (await this.git(['rev-parse', `${PUSH_BASE}^{tree}`], what)).trim();
        if (before === tree) return undefined;
      }
      const author = this.opts.author ?? { name: 'bpa', email: 'bpa@bpa.akraino.org' };
      const who = {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_COMMITTER_NAME: author.name,
        GIT_COMMITTER_EMAIL: author.email,
      };
      const args = ['commit-tree', tree, ...(exists ? ['-p', PUSH_BASE] : []), '-F', '-'];
      return (await this.git(args, what, { input: message, env: who, what })).trim();
    } finally {
      await rm(index, { force: true });
    }
  }
}
