/**
 * Sends a stored file the way download clients expect: a strong ETag (the content's sha256),
 * `If-None-Match` (304), single `Range` requests (206, 416) with `If-Range`, and HEAD.
 * Ironic, curl and apt resume or check downloads with these.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';

export interface Sendable {
  etag: string;
  size: number;
  contentType: string;
  lastModified?: Date;
}

/** A single byte range of `size`, inclusive; 'unsatisfiable', or undefined to send it all. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges, or another unit: the whole file is a valid answer.
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  // No byte of an empty file can be asked for (RFC 9110 §14.1.2): a range of it is a 416.
  if (size === 0) return 'unsatisfiable';
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

function headers(file: Sendable): Record<string, string | number> {
  return {
    etag: file.etag,
    'accept-ranges': 'bytes',
    'content-type': file.contentType,
    'cache-control': 'no-cache',
    ...(file.lastModified ? { 'last-modified': file.lastModified.toUTCString() } : {}),
  };
}

/** The status and body range a request gets for `file`. */
function plan(
  req: IncomingMessage,
  file: Sendable,
): { status: 200 | 206 | 304 | 416; start: number; end: number } {
  const none = req.headers['if-none-match'];
  if (none && none.split(',').some((t) => t.trim() === file.etag || t.trim() === '*'))
    return { status: 304, start: 0, end: -1 };
  const ifRange = req.headers['if-range'];
  const range =
    ifRange === undefined || ifRange === file.etag
      ? parseRange(req.headers.range, file.size)
      : undefined;
  if (range === 'unsatisfiable') return { status: 416, start: 0, end: -1 };
  if (range) return { status: 206, ...range };
  return { status: 200, start: 0, end: file.size - 1 };
}

/** Sends an in-memory body (the apt index, checksum files). */
export function sendBuffer(
  req: IncomingMessage,
  res: ServerResponse,
  file: Sendable & { body: Buffer },
): void {
  const p = plan(req, file);
  writeHead(res, file, p);
  res.end(
    p.status === 200 || p.status === 206 ? file.body.subarray(p.start, p.end + 1) : undefined,
  );
}

/**
 * Sends a file from disk. It is opened before anything is answered, so a file removed
 * meanwhile is a 404 (the caller's), and one removed while it is sent is still sent whole.
 * A symbolic link is not followed (a 404 too): what is served is only what was stored, never
 * a file elsewhere on bpa's machine that a link in the state volume points at.
 */
export async function sendPath(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  file: Sendable,
): Promise<boolean> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    if (!(await fh.stat()).isFile()) {
      await fh.close();
      return false;
    }
  } catch {
    return false;
  }
  try {
    const p = plan(req, file);
    writeHead(res, file, p);
    if (req.method === 'HEAD' || (p.status !== 200 && p.status !== 206) || p.end < p.start) {
      res.end();
      return true;
    }
    await pipeline(fh.createReadStream({ start: p.start, end: p.end, autoClose: false }), res);
    return true;
  } finally {
    await fh.close();
  }
}

function writeHead(
  res: ServerResponse,
  file: Sendable,
  p: { status: number; start: number; end: number },
): void {
  const h = headers(file);
  if (p.status === 416) {
    res.writeHead(416, { ...h, 'content-range': `bytes */${file.size}`, 'content-length': 0 });
  } else if (p.status === 304) {
    res.writeHead(304, h);
  } else if (p.status === 206) {
    res.writeHead(206, {
      ...h,
      'content-range': `bytes ${p.start}-${p.end}/${file.size}`,
      'content-length': p.end - p.start + 1,
    });
  } else {
    res.writeHead(200, { ...h, 'content-length': file.size });
  }
}
