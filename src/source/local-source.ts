import { lstat, mkdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { STATUS_DIR } from './site-path.js';
import {
  parseReports,
  readReportTexts,
  statusNotDirectory,
  type SiteSource,
} from './site-source.js';

/** A site directory on disk (development: `bpa serve --watch DIR`); reports are written into it. */
export class LocalSource implements SiteSource {
  /** A directory being edited, not a repository: plaintext site Secrets are only a warning. */
  readonly watched = true;

  /**
   * `digestOf` names the site's input as it reads it (the load stage's files and their
   * contents): the digest is the revision, so an edit outside that input changes nothing.
   */
  constructor(
    private readonly dir: string,
    private readonly digestOf: (dir: string) => Promise<string>,
  ) {}

  describe(): string {
    return resolve(this.dir);
  }

  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    const digest = await this.digestOf(this.dir);
    return { siteDir: this.dir, revision: digest, digest };
  }

  async previousReports(siteDir: string): Promise<Map<string, unknown>> {
    return parseReports(await readReportTexts(siteDir));
  }

  async publish(
    siteDir: string,
    files: ReadonlyMap<string, string | null>,
  ): Promise<string | undefined> {
    // A file or a link where status/ belongs is the site's: reported, never replaced or followed.
    const existing = await lstat(join(siteDir, STATUS_DIR)).catch(() => undefined);
    if (existing && !existing.isDirectory()) throw statusNotDirectory(existing.isSymbolicLink());
    await mkdir(join(siteDir, STATUS_DIR), { recursive: true });
    for (const [path, text] of files) {
      const target = join(siteDir, path);
      if (text === null) {
        await rm(target, { force: true });
        continue;
      }
      const old = await readFile(target, 'utf8').catch(() => undefined);
      if (old !== text) await writeFileAtomic(target, text, 0o644);
    }
    return undefined;
  }
}
