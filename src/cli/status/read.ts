import { parse } from 'yaml';
import type { ClusterStatusDoc, SiteStatusDoc } from '../../report/status.js';
import { readReportTexts } from '../../source/site-source.js';
import { STATUS_DIR } from '../../source/site-path.js';
import { StalledError, TransientError, UsageError, messageOf } from '../../util/errors.js';
import { sanitize } from '../../util/redact.js';

/** What `bpa status` shows: the reports, from a running controller or a site directory. */
export interface StatusView {
  /** Where the reports were read: the status API's URL, or the status directory. */
  from: string;
  site?: SiteStatusDoc;
  clusters: ClusterStatusDoc[];
  /** What the controller is doing (only from --server). */
  controller?: ControllerState;
}

export interface ControllerState {
  running: boolean;
  lastResult?: string;
  lastFinishedAt?: string;
  nextRunAt?: string;
  consecutiveFailures: number;
  error?: { code: string; message: string };
}

/** GET <server>/api/v1/status of a running `bpa serve`. */
export async function readFromServer(server: string, timeoutMs = 10_000): Promise<StatusView> {
  let url: URL;
  try {
    url = new URL('/api/v1/status', server);
  } catch {
    throw new UsageError(`--server ${JSON.stringify(sanitize(server))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server ${sanitize(server)}: expected an http(s) URL`);
  const shown = sanitize(url.toString());
  let body: unknown;
  try {
    const res = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      headers: { accept: 'application/json' },
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = await res.json();
  } catch (err: unknown) {
    // fetch says only "fetch failed"; what failed is in its cause (ECONNREFUSED, bad port).
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new TransientError(
      'STATUS_UNAVAILABLE',
      `cannot read ${shown}: ${sanitize(cause?.code ?? cause?.message ?? messageOf(err))}`,
    );
  }
  return fromApi(body, shown);
}

/** The status API's document → the reports and what the controller is doing. */
export function fromApi(body: unknown, from: string): StatusView {
  const doc = (body ?? {}) as {
    status?: { site?: SiteStatusDoc; clusters?: ClusterStatusDoc[] } | null;
    lastReconcile?: {
      result?: string;
      finishedAt?: string;
      error?: { code: string; message: string } | null;
    } | null;
    running?: boolean;
    nextRunAt?: string | null;
    consecutiveFailures?: number;
  };
  if (typeof doc !== 'object' || !('running' in doc))
    throw new TransientError('STATUS_UNAVAILABLE', `${from} is not the status API of bpa serve`);
  const last = doc.lastReconcile ?? undefined;
  return {
    from,
    site: doc.status?.site,
    clusters: doc.status?.clusters ?? [],
    controller: {
      running: doc.running === true,
      ...(last?.result ? { lastResult: last.result } : {}),
      ...(last?.finishedAt ? { lastFinishedAt: last.finishedAt } : {}),
      ...(doc.nextRunAt ? { nextRunAt: doc.nextRunAt } : {}),
      consecutiveFailures: doc.consecutiveFailures ?? 0,
      ...(last?.error ? { error: { code: last.error.code, message: last.error.message } } : {}),
    },
  };
}

/** The reports under `<siteDir>/status/`, as committed by bpa. */
export async function readFromDir(siteDir: string): Promise<StatusView> {
  const texts = await readReportTexts(siteDir);
  const from = `${siteDir.replace(/\/+$/, '') || '.'}/${STATUS_DIR}`;
  if (!texts.has(`${STATUS_DIR}/site.yaml`))
    throw new StalledError(
      'STATUS_NOT_FOUND',
      `${from}/site.yaml does not exist: bpa has not reported on ${siteDir} (give a site directory, or --server URL)`,
    );
  const view: StatusView = { from, clusters: [] };
  for (const [path, text] of texts) {
    let doc: unknown;
    try {
      doc = parse(text);
    } catch (err: unknown) {
      throw new StalledError(
        'STATUS_NOT_FOUND',
        `${siteDir}/${path} is not YAML: ${messageOf(err).split('\n')[0]}`,
      );
    }
    const kind = (doc as { kind?: unknown } | null)?.kind;
    if (kind === 'SiteStatus') view.site = doc as SiteStatusDoc;
    else if (kind === 'ClusterStatus') view.clusters.push(doc as ClusterStatusDoc);
  }
  view.clusters.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  return view;
}

/** Everything is Ready: the site, each cluster, and (from a controller) its last reconcile. */
export function allReady(view: StatusView): boolean {
  if (view.site?.status.phase !== 'Ready') return false;
  if (!view.clusters.every((c) => c.status.phase === 'Ready')) return false;
  const result = view.controller?.lastResult;
  return result === undefined || !['failed', 'rejected', 'interrupted'].includes(result);
}
