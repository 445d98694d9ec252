import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { siteDigest } from '../../src/load/digest.js';
import { DEFAULT_LIMITS } from '../../src/load/limits.js';
import { readSite } from '../../src/load/read-site.js';
import type { SiteSource } from '../../src/source/site-source.js';

export interface FakeCommit {
  message: string;
  /** The report files the commit changed. */
  files: Map<string, string>;
}

/**
 * A site repository as the reconciler sees it, in memory: the site is a directory on disk
 * (the checkout), each distinct content is a revision, and the reports live apart from the
 * checkout, as on a remote branch; every publish that changes them is a commit.
 */
export class FakeSiteSource implements SiteSource {
  readonly commits: FakeCommit[] = [];
  /** The reports as the repository has them now. */
  readonly reports = new Map<string, string>();

  constructor(readonly siteDir: string) {}

  describe(): string {
    return `fake:${this.siteDir}`;
  }

  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    const digest = siteDigest((await readSite(this.siteDir, DEFAULT_LIMITS)).files);
    const revision = createHash('sha1').update(digest).digest('hex');
    return { siteDir: this.siteDir, revision, digest };
  }

  async previousReports(): Promise<Map<string, unknown>> {
    return new Map([...this.reports].map(([path, text]) => [path, parse(text) as unknown]));
  }

  async publish(
    _siteDir: string,
    files: Map<string, string>,
    message: string,
  ): Promise<string | undefined> {
    const changed = new Map([...files].filter(([path, text]) => this.reports.get(path) !== text));
    if (!changed.size) return undefined;
    for (const [path, text] of changed) this.reports.set(path, text);
    this.commits.push({ message, files: changed });
    return createHash('sha1').update(message).digest('hex');
  }

  /** The parsed report of a cluster, as the repository has it. */
  clusterReport(cluster: string): ClusterReport | undefined {
    const text = this.reports.get(`status/${cluster}.yaml`);
    return text === undefined ? undefined : (parse(text) as ClusterReport);
  }
}

export interface ClusterReport {
  status: {
    phase: string;
    conditions: Array<{ type: string; status: string; reason: string; message: string }>;
    nodes: Array<{ name: string; reachable?: boolean; packages?: Record<string, string | null> }>;
    lastOperation?: Array<{
      action: string;
      result: string;
      step?: string;
      code?: string;
      exitCode?: number;
      log?: string;
    }>;
    kubernetesVersion?: string;
    podSubnet?: string | null;
    notes?: string[];
    gate?: { state: string; reason: string; by?: string; opensAt?: string };
    rollout?: { action: string; nodes: Array<{ name: string; state: string }> };
  };
}
