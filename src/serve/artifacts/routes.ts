/**
 * The artifact routes of `bpa serve`:
 * - `/api/v1/artifacts…` (bearer token): upload (PUT), list and read records (GET), DELETE;
 * - `/artifacts/…` (no token: the provisioning network and Ironic read these over plain
 *   HTTP): images and files with their `.sha256sum` / `.md5sum` beside them, and the apt
 *   repository under `/artifacts/apt/`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AptRepository } from '../../artifacts/apt-repo.js';
import { POOL } from '../../artifacts/apt-index.js';
import {
  CHECKSUM_SUFFIXES,
  isArtifactKind,
  nameProblem,
  parseSha256,
  type ArtifactKind,
} from '../../artifacts/names.js';
import { UploadError, type ArtifactMeta, type ArtifactStore } from '../../artifacts/store.js';
import type { Logger } from '../../util/log.js';
import { requireBearer } from '../auth.js';
import type { GuessLimiter } from '../guess-limit.js';
import type { RouteSet } from '../http.js';
import { sendJson } from '../respond.js';
import { sendBuffer, sendPath } from './send-file.js';

export interface ArtifactRoutesOptions {
  store: ArtifactStore;
  apt: AptRepository;
  /** The upload API's bearer token; without one, `/api/v1/artifacts` does not exist (404). */
  token?: string;
  /** Counts wrong tokens: the guess limit of this token (each secret has its own). */
  limiter: GuessLimiter;
  maxBytes: number;
  /** An upload that sends nothing for this long is cut off (60 s). */
  idleTimeoutMs?: number;
  log: Logger;
}

const API = '/api/v1/artifacts';
const PUBLIC = '/artifacts/';

export function artifactRoutes(opts: ArtifactRoutesOptions): RouteSet[] {
  const log = opts.log.child({ component: 'artifacts' });
  const routes: RouteSet[] = [
    { path: PUBLIC, handlers: { GET: (req, res, path) => download(opts, req, res, path) } },
  ];
  const token = opts.token;
  if (token) {
    const guarded =
      (fn: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void> | void) =>
      (req: IncomingMessage, res: ServerResponse, path: string) =>
        requireBearer(req, res, token, opts.limiter, 'bpa-artifacts')
          ? fn(req, res, path)
          : undefined;
    routes.push(
      {
        path: API,
        handlers: {
          GET: guarded((req, res) => {
            const kind = new URL(req.url ?? '/', 'http://bpa.invalid').searchParams.get('kind');
            if (kind !== null && !isArtifactKind(kind))
              return sendJson(res, 400, {
                error: 'bad_kind',
                message: `kind ${JSON.stringify(kind)} is not one of images, packages, files`,
              });
            sendJson(res, 200, { artifacts: opts.store.list(kind ?? undefined).map(describe) });
          }),
        },
      },
      {
        path: `${API}/`,
        handlers: {
          PUT: guarded((req, res, path) => upload(opts, log, req, res, path)),
          GET: guarded((req, res, path) => {
            const target = parseTarget(req, res, path);
            if (!target) return;
            const meta = opts.store.get(target.kind, target.name);
            if (meta) sendJson(res, 200, describe(meta));
            else notFound(res, `${target.kind}/${target.name}`);
          }),
          DELETE: guarded(async (req, res, path) => {
            req.resume();
            const target = parseTarget(req, res, path);
            if (!target) return;
            if (await opts.store.delete(target.kind, target.name)) {
              log.info({ kind: target.kind, name: target.name }, 'artifact deleted');
              res.writeHead(204).end();
            } else notFound(res, `${target.kind}/${target.name}`);
          }),
        },
      },
    );
  }
  return routes;
}

/** What the API says of an artifact, with the URL nodes download it from. */
function describe(m: ArtifactMeta): Record<string, unknown> {
  return {
    kind: m.kind,
    name: m.name,
    size: m.size,
    sha256: m.sha256,
    ...(m.md5 ? { md5: m.md5 } : {}),
    uploadedAt: m.uploadedAt,
    url:
      m.kind === 'packages' ? `/artifacts/apt/${POOL}/${m.name}` : `/artifacts/${m.kind}/${m.name}`,
    ...(m.deb
      ? { package: m.deb.package, version: m.deb.version, architecture: m.deb.architecture }
      : {}),
  };
}

/** `{kind}/{name}` after the API prefix, checked; answers 400/404 itself when it is not one. */
function parseTarget(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): { kind: ArtifactKind; name: string } | undefined {
  const rest = path.slice(API.length + 1).split('/');
  const [kind, raw, ...more] = rest;
  if (!kind || !isArtifactKind(kind) || raw === undefined || more.length) {
    refuse(req, res, 404, {
      error: 'not_found',
      message: `expected ${API}/{images|packages|files}/{name}`,
    });
    return undefined;
  }
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    refuse(req, res, 400, { error: 'bad_name', message: 'the name is not valid percent-encoding' });
    return undefined;
  }
  const problem = nameProblem(kind, name);
  if (problem) {
    refuse(req, res, 400, { error: 'bad_name', message: `${JSON.stringify(name)}: ${problem}` });
    return undefined;
  }
  return { kind, name };
}

/**
 * Answers before the body is read (a bad name or header, too large). The rest of the body is
 * read and dropped for a moment, so that a small one does not turn the close into a reset
 * the client sees instead of the answer; a large one is cut off.
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: object): void {
  res.setHeader('connection', 'close');
  req.resume();
  sendJson(res, status, body);
  res.once('finish', () => {
    if (req.readableEnded) return;
    setTimeout(() => req.destroy(), 1_000).unref();
  });
}

async function upload(
  opts: ArtifactRoutesOptions,
  log: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const target = parseTarget(req, res, path);
  if (!target) return;
  const header = req.headers['x-checksum-sha256'];
  const sha256 = parseSha256(typeof header === 'string' ? header : undefined);
  if (!sha256)
    return refuse(req, res, 400, {
      error: 'checksum_required',
      message: 'give the sha256 of the body (64 hex digits) in the X-Checksum-Sha256 header',
    });
  const length = Number(req.headers['content-length'] ?? NaN);
  if (length > opts.maxBytes)
    return refuse(req, res, 413, {
      error: 'too_large',
      message: `the body is ${length} bytes, more than the limit of ${opts.maxBytes} (--artifacts-max-mib)`,
    });
  const idle = opts.idleTimeoutMs ?? 60_000;
  req.setTimeout(idle, () => req.destroy(new Error(`nothing received for ${idle} ms`)));
  // Only the body's arrival is timed: checking and storing it may take longer.
  req.once('end', () => req.setTimeout(0));
  try {
    const { outcome, meta, notDerived } = await opts.store.put(target.kind, target.name, req, {
      sha256,
      maxBytes: opts.maxBytes,
    });
    // Stored, so 201/200 as for any upload; the store logged the index's failure as an error.
    const warning = notDerived
      ? `${target.kind}/${target.name} is stored, but the apt index was not rebuilt (${notDerived}): apt sees the change once the index is rebuilt, at the next change or when bpa serve starts`
      : undefined;
    log.info(
      {
        kind: meta.kind,
        name: meta.name,
        size: meta.size,
        sha256,
        outcome,
        ...(warning ? { warning } : {}),
      },
      'artifact stored',
    );
    const body: Record<string, unknown> = { ...describe(meta), ...(warning ? { warning } : {}) };
    res.setHeader('location', body['url'] as string);
    sendJson(res, outcome === 'unchanged' ? 200 : 201, body);
  } catch (err: unknown) {
    if (!(err instanceof UploadError)) throw err;
    // A full disk is the operator's to fix, not the client's: logged as an error.
    const level = err.reason === 'no-space' ? 'error' : 'warn';
    log[level]({ kind: target.kind, name: target.name, reason: err.reason }, err.message);
    if (err.reason === 'aborted') return void req.destroy();
    const status = err.reason === 'too-large' ? 413 : err.reason === 'no-space' ? 507 : 400;
    const error = {
      checksum: 'checksum_mismatch',
      'too-large': 'too_large',
      invalid: 'invalid',
      'no-space': 'insufficient_storage',
    }[err.reason];
    if (req.readableEnded) sendJson(res, status, { error, message: err.message });
    else refuse(req, res, status, { error, message: err.message });
  }
}

function notFound(res: ServerResponse, what: string): void {
  sendJson(res, 404, { error: 'not_found', message: `no artifact ${what}` });
}

/** GET /artifacts/{images|files}/{name}[.sha256sum|.md5sum], /artifacts/apt/… */
async function download(
  opts: ArtifactRoutesOptions,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  req.resume();
  let parts: string[];
  try {
    parts = path.slice(PUBLIC.length).split('/').map(decodeURIComponent);
  } catch {
    return notFound(res, path);
  }
  const [area, ...rest] = parts;
  if (area === 'apt') {
    if (rest.length === 1 && rest[0]) {
      const file = opts.apt.file(rest[0]);
      if (file) return sendBuffer(req, res, { ...file, size: file.body.length });
    } else if (rest.length === 2 && rest[0] === POOL && rest[1]) {
      const meta = opts.store.get('packages', rest[1]);
      if (meta && (await sendBlob(opts, req, res, meta, 'application/vnd.debian.binary-package')))
        return;
    }
    return notFound(res, path);
  }
  if ((area !== 'images' && area !== 'files') || rest.length !== 1 || !rest[0])
    return notFound(res, path);
  const name = rest[0];
  const suffix = CHECKSUM_SUFFIXES.find((s) => name.endsWith(s));
  const meta = opts.store.get(area, suffix ? name.slice(0, -suffix.length) : name);
  if (!meta) return notFound(res, `${area}/${name}`);
  if (suffix) {
    // Missing content is missing for its checksum files too, as for the artifact itself.
    if (!(await opts.store.hasContent(meta))) return notFound(res, `${area}/${name}`);
    // The format of sha256sum/md5sum, which Ironic reads too: "<hash>  <file name>".
    const hash = suffix === '.md5sum' ? await opts.store.md5Of(area, meta.name) : meta.sha256;
    if (!hash) return notFound(res, `${area}/${name}`);
    const body = Buffer.from(`${hash}  ${meta.name}\n`);
    return sendBuffer(req, res, {
      body,
      size: body.length,
      etag: `"${suffix.slice(1)}-${meta.sha256}"`,
      contentType: 'text/plain; charset=utf-8',
      lastModified: new Date(meta.uploadedAt),
    });
  }
  if (!(await sendBlob(opts, req, res, meta, 'application/octet-stream')))
    return notFound(res, `${area}/${name}`);
}

function sendBlob(
  opts: ArtifactRoutesOptions,
  req: IncomingMessage,
  res: ServerResponse,
  meta: ArtifactMeta,
  contentType: string,
): Promise<boolean> {
  return sendPath(req, res, opts.store.blobPath(meta.sha256), {
    etag: `"${meta.sha256}"`,
    size: meta.size,
    contentType,
    lastModified: new Date(meta.uploadedAt),
  });
}
