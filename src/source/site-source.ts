import { lstat, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';
import { StalledError } from '../util/errors.js';
import { STATUS_DIR } from './site-path.js';
import type { HistoryEntry } from './history.js';
import type { Problem } from '../util/problem.js';

/** Operator mode: one object of the site as the cluster has it: what finalizers and status writes address. */
export interface SiteObjectRef {
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  generation?: number;
  resourceVersion: string;
  labels: Readonly<Record<string, string>>;
  finalizers: readonly string[];
  /** Set once the object is being deleted: it is then no part of the site. */
  deletionTimestamp?: string;
  /** What of the spec bpa reads from the object: `provisioningCR`, `softwareCR`, `deletionPolicy`. */
  spec: Readonly<Record<string, unknown>>;
}

/**
 * Operator mode: a BareMetalHost or HardwareData as the watch keeps it, with only what the
 * plan reads of it (observe/inventory/hosts.ts reads nothing else).
 */
export interface WatchedMetal3Object {
  kind: 'BareMetalHost' | 'HardwareData';
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  origin: string;
}

/** Where a reconcile reads the site from and writes its reports to. */
export interface SiteSource {
  describe(): string;
  /** A directory watched while it is edited (serve --watch), not a repository. */
  readonly watched?: boolean;
  /** Brings the site up to date; returns its directory, revision and input digest. */
  sync(): Promise<{ siteDir: string; revision: string; digest: string }>;
  /** Throws (StalledError) when the revision may not be applied: an unsigned or untrusted commit. */
  verify?(revision: string): Promise<void>;
  /** Whether the revision carries a signature at all (bpa's own status commits do not). */
  signed?(revision: string): Promise<boolean>;
  /**
   * The commit that brought the site's input of `revision`, with its message (for its
   * trailers): `revision` itself when it carries a Bpa-Approved-Plan trailer or changed the
   * input, else the first commit below it that did (a commit of status/ only, or outside the
   * site, inherits). Undefined when the source has no commits (a directory).
   */
  inputCommit?(revision: string): Promise<{ commit: string; message: string } | undefined>;
  /**
   * The files the last sync wrote, by site-relative path, with their git blob ids and stat:
   * a file still so on disk need not be read to be known (load/cache.ts).
   */
  checkedOut?(): Promise<
    ReadonlyMap<string, { oid: string; size: number; mtimeMs: number; ino: number }>
  >;
  /**
   * Places problems in the source's own terms (operator mode: the object and field path
   * instead of the file bpa wrote it to); without it, problems get the file's line and column.
   */
  placeProblems?(problems: Problem[]): Problem[];
  /** The cluster's objects the site was last read from (operator mode), for their status. */
  siteObjects?(): SiteObjectRef[];
  /**
   * Operator mode: the clusters whose objects have the errors, and every site file of those
   * clusters, so that the others go on without them; undefined when an error cannot be put on
   * one cluster (a Site object, a problem without an object).
   */
  isolate?(problems: readonly Problem[]): { clusters: string[]; files: Set<string> } | undefined;
  /**
   * Operator mode: the BareMetalHosts and HardwareData of `namespaces` (empty: all) from the
   * watch's cache, as a controller reads its informers' caches instead of listing at every
   * reconcile; undefined when the watch does not cover exactly those namespaces, or metal3's
   * API is not served (the inventory then lists them itself, and says why it cannot).
   */
  watchedInventory?(namespaces: readonly string[]): readonly WatchedMetal3Object[] | undefined;
  /** Operator mode: sets an object's finalizers (bpa adds and removes only its own). */
  setFinalizers?(ref: SiteObjectRef, finalizers: string[]): Promise<void>;
  /**
   * Operator mode: an object whose deletion is held because removing its cluster failed says
   * so in its status (Ready False and Stalled True, with the failure's code and message).
   */
  setDeletionStalled?(ref: SiteObjectRef, reason: string, message: string): Promise<void>;
  /** Previous reports, by repository-relative path under the site (`status/x.yaml`). */
  previousReports(siteDir: string): Promise<Map<string, unknown>>;
  /**
   * The reports as text, by site-relative path, as the revision (or the status branch) holds
   * them now: compared with what bpa last wrote, to find someone else's edit of status/.
   */
  reportTexts?(siteDir: string): Promise<Map<string, string>>;
  /** The recent commits bpa has of the site's branch, newest first (a repository only). */
  history?(limit: number): Promise<HistoryEntry[]>;
  /**
   * Writes the reports (site-relative paths; null removes one); returns a commit id when one
   * was made.
   */
  publish(
    siteDir: string,
    files: ReadonlyMap<string, string | null>,
    message: string,
  ): Promise<string | undefined>;
}

export function statusNotDirectory(link: boolean): StalledError {
  return new StalledError(
    'STATUS_PATH_TAKEN',
    `the site has ${link ? 'a symbolic link' : 'a file'} named "${STATUS_DIR}" where bpa writes its reports (${STATUS_DIR}/); bpa does not remove it, and writes no report until it is renamed or removed`,
  );
}

/** The reports under `<siteDir>/status/`, by site-relative path, as text. */
export async function readReportTexts(siteDir: string): Promise<Map<string, string>> {
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

/**
 * Reports parsed as plain data. With js-yaml's YAML 1.2 core schema (what `yaml` writes them
 * in) rather than `yaml`'s document model: status/inventory.yaml lists every host, and for
 * 10,000 hosts `yaml` held over 350 MB of syntax nodes at once while parsing it.
 */
export function parseReport(text: string): unknown {
  return load(text, { schema: CORE_SCHEMA });
}

export function parseReports(texts: ReadonlyMap<string, string>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [path, text] of texts) {
    try {
      out.set(path, parseReport(text));
    } catch {
      // A damaged report is simply rewritten.
    }
  }
  return out;
}

/**
 * The reports that differ from what the branch has (null: remove), keyed by their path in
 * the repository: what a status commit writes.
 */
export function changedReports(
  previous: ReadonlyMap<string, string>,
  files: ReadonlyMap<string, string | null>,
  sitePath: string,
): Map<string, string | null> {
  const changed = new Map<string, string | null>();
  for (const [path, text] of files) {
    if (text === null ? previous.has(path) : previous.get(path) !== text)
      changed.set(sitePath ? `${sitePath}/${path}` : path, text);
  }
  return changed;
}

/** The branch status commits go to: the status branch, else the branch followed. */
export function statusBranchOf(opts: { statusBranch?: string; ref: string }): string {
  return opts.statusBranch || (opts.ref.startsWith('refs/heads/') ? opts.ref.slice(11) : opts.ref);
}
