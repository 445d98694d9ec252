import { lstat, mkdir, readFile, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_LIMITS } from '../load/limits.js';
import { siteDigest } from '../load/digest.js';
import { readSite } from '../load/read-site.js';
import { STATUS_DIR } from '../report/status.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { sourceCacheDir } from '../source/cache-dir.js';
import { normalizeSitePath } from '../source/site-path.js';
import type { GitAuth, RepoOptions } from '../source/types.js';
import { StalledError } from '../util/errors.js';

/** Where a reconcile reads the site from and writes its reports to. */
export interface SiteSource {
  describe(): string;
  /** Brings the site up to date; returns its directory, revision and input digest. */
  sync(): Promise<{ siteDir: string; revision: string; digest: string }>;
  /** Throws (StalledError) when the revision may not be applied: an unsigned or untrusted commit. */
  verify?(revision: string): Promise<void>;
  /** Whether the revision carries a signature at all (bpa's own status commits do not). */
  signed?(revision: string): Promise<boolean>;
  /** Previous reports, by repository-relative path under the site (`status/x.yaml`). */
  previousReports(siteDir: string): Promise<Map<string, unknown>>;
  /** Writes the reports (site-relative paths); returns a commit id when one was made. */
  publish(
    siteDir: string,
    files: Map<string, string>,
    message: string,
  ): Promise<string | undefined>;
}

/** A site directory on disk (development: `bpa serve --watch DIR`); reports are written into it. */
export class LocalSource implements SiteSource {
  constructor(private readonly dir: string) {}

  describe(): string {
    return resolve(this.dir);
  }

  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    const read = await readSite(this.dir, DEFAULT_LIMITS);
    const digest = siteDigest(read.files);
    return { siteDir: this.dir, revision: digest, digest };
  }

  async previousReports(siteDir: string): Promise<Map<string, unknown>> {
    return parseReports(await readReportTexts(siteDir));
  }

  async publish(siteDir: string, files: Map<string, string>): Promise<string | undefined> {
    // A file or a link where status/ belongs is the site's: reported, never replaced or followed.
    const existing = await lstat(join(siteDir, STATUS_DIR)).catch(() => undefined);
    if (existing && !existing.isDirectory()) throw statusNotDirectory(existing.isSymbolicLink());
    await mkdir(join(siteDir, STATUS_DIR), { recursive: true });
    for (const [path, text] of files) {
      const target = join(siteDir, path);
      const old = await readFile(target, 'utf8').catch(() => undefined);
      if (old !== text) await writeFileAtomic(target, text, 0o644);
    }
    return undefined;
  }
}

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
    const { inputDigest, syncRepo } = await import('../source/git.js');
    const { revision } = await syncRepo(this.repo());
    const digest = await inputDigest(this.dir, revision.commit, this.sitePath);
    return { siteDir: join(this.dir, this.sitePath), revision: revision.commit, digest };
  }

  /** With a status branch, the reports are read from it: the followed branch has none. */
  async previousReports(siteDir: string): Promise<Map<string, unknown>> {
    return parseReports(await this.reportTexts(siteDir));
  }

  private async reportTexts(siteDir: string): Promise<Map<string, string>> {
    if (!this.opts.statusBranch) return readReportTexts(siteDir);
    const { readBranchDir } = await import('../source/read-branch.js');
    const dir = this.sitePath ? `${this.sitePath}/${STATUS_DIR}` : STATUS_DIR;
    const files = await readBranchDir(this.repo(), this.opts.statusBranch, dir);
    return new Map(
      [...files]
        .filter(([name]) => name.endsWith('.yaml'))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, text]) => [`${STATUS_DIR}/${name}`, text]),
    );
  }

  async signed(revision: string): Promise<boolean> {
    const [{ default: git }, fs] = await Promise.all([import('isomorphic-git'), import('node:fs')]);
    const { commit } = await git.readCommit({ fs, dir: this.dir, oid: revision });
    return Boolean(commit.gpgsig);
  }

  async verify(revision: string): Promise<void> {
    if (!this.opts.trust) return;
    const { verifyCommit } = await import('../source/verify.js');
    await verifyCommit(this.dir, revision, this.opts.trust);
  }

  async publish(
    siteDir: string,
    files: Map<string, string>,
    message: string,
  ): Promise<string | undefined> {
    const previous = await this.reportTexts(siteDir);
    const changed: Record<string, string> = {};
    for (const [path, text] of files) {
      if (previous.get(path) !== text)
        changed[this.sitePath ? `${this.sitePath}/${path}` : path] = text;
    }
    if (!Object.keys(changed).length) return undefined;
    const branch =
      this.opts.statusBranch ||
      (this.opts.ref.startsWith('refs/heads/') ? this.opts.ref.slice(11) : this.opts.ref);
    const { commitAndPush } = await import('../source/git-push.js');
    const result = await commitAndPush(this.repo(), {
      files: changed,
      message,
      author: this.opts.author ?? { name: 'bpa', email: 'bpa@bpa.akraino.org' },
      branch,
    });
    return result.commit;
  }
}

export function statusNotDirectory(link: boolean): StalledError {
  return new StalledError(
    'STATUS_PATH_TAKEN',
    `the site has ${link ? 'a symbolic link' : 'a file'} named "${STATUS_DIR}" where bpa writes its reports (${STATUS_DIR}/); bpa does not remove it, and writes no report until it is renamed or removed`,
  );
}

/** The reports under `<siteDir>/status/`, by site-relative path, as text. */
async function readReportTexts(siteDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  // Only a real directory: a link named status could lead anywhere on this machine.
  const dir = await lstat(join(siteDir, STATUS_DIR)).catch(() => undefined);
  if (!dir?.isDirectory()) return out;
  let names: string[];
  try {
    names = await readdir(join(siteDir, STATUS_DIR));
  } catch {
    return out;
  }
  for (const name of names.filter((n) => n.endsWith('.yaml')).sort()) {
    const text = await readFile(join(siteDir, STATUS_DIR, name), 'utf8').catch(() => undefined);
    if (text !== undefined) out.set(`${STATUS_DIR}/${name}`, text);
  }
  return out;
}

function parseReports(texts: ReadonlyMap<string, string>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [path, text] of texts) {
    try {
      out.set(path, parse(text));
    } catch {
      // A damaged report is simply rewritten.
    }
  }
  return out;
}
