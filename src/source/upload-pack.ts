/**
 * The fetch half of git's smart HTTP protocol (version 1), spoken directly so that the pack a
 * server sends goes to a file as it arrives instead of into memory: a pack holds every blob
 * of the snapshot, the repository's large files included, and git has no server-side path
 * filter that every server supports.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { Errors, type GitHttpResponse } from 'isomorphic-git';
import type { BpaHttpClient } from './http-client.js';
import { FLUSH, PktReader, pktLine } from './pkt-line.js';
import type { AdvertisedRef } from './refs.js';
import type { Link } from './remote.js';

const SERVICE = 'git-upload-pack';
const AGENT = 'agent=bpa';

export interface Advertisement {
  refs: AdvertisedRef[];
  capabilities: Set<string>;
}

/** GET info/refs: every ref the server has, and what its upload-pack can do. */
export async function advertise(link: Link): Promise<Advertisement> {
  const res = await link.http.request({
    method: 'GET',
    url: `${link.remote.url}/info/refs?service=${SERVICE}`,
    headers: { ...link.remote.headers(), 'user-agent': 'git/bpa' },
  });
  await checkStatus(res);
  if (res.headers?.['content-type'] !== `application/x-${SERVICE}-advertisement`) {
    const text = await bodyText(res, 512);
    throw new Errors.SmartHttpError(text.slice(0, 80), text);
  }
  const reader = new PktReader(res.body ?? emptyBody());
  const first = await reader.next();
  if (!first || first.toString('utf8').trimEnd() !== `# service=${SERVICE}`) {
    throw new Errors.SmartHttpError('', 'no service announcement');
  }
  const refs = new Map<string, AdvertisedRef>();
  let capabilities = new Set<string>();
  let line: Buffer | null | undefined;
  // The announcement is followed by a flush, then the refs up to the next flush.
  while ((line = await reader.next()) === null);
  for (; line; line = await reader.next()) {
    let text = line.toString('utf8').replace(/\n$/, '');
    const nul = text.indexOf('\0');
    if (nul >= 0) {
      capabilities = new Set(
        text
          .slice(nul + 1)
          .split(' ')
          .filter(Boolean),
      );
      text = text.slice(0, nul);
    }
    const [oid = '', name = ''] = text.split(' ');
    if (name === 'capabilities^{}') continue;
    if (name.endsWith('^{}')) {
      const tag = refs.get(name.slice(0, -3));
      if (tag) tag.peeled = oid;
    } else refs.set(name, { ref: name, oid });
  }
  return { refs: [...refs.values()], capabilities };
}

export interface PackRequest {
  wants: string[];
  haves: string[];
  /** Commits the local repository holds without their parents (.git/shallow). */
  shallows: string[];
  /** History depth to fetch; undefined fetches everything reachable. */
  depth?: number;
}

export interface PackResponse {
  /** Commits the server made shallow (their parents were not sent). */
  shallow: string[];
  /** Commits that are no longer shallow: their parents came with this pack. */
  unshallow: string[];
  /** Whether a pack was received (a server sends none when nothing is new). */
  received: boolean;
}

/**
 * POSTs a fetch request and writes the pack the server answers with to `packFile`, verifying
 * its trailing checksum. Memory use is one pkt-line (64 KiB) at a time, whatever the pack's size.
 */
export async function fetchPack(
  link: Link,
  capabilities: Set<string>,
  req: PackRequest,
  packFile: string,
): Promise<PackResponse> {
  const caps = ['side-band-64k', 'ofs-delta', 'no-progress', AGENT].filter(
    (c) => c === AGENT || capabilities.has(c),
  );
  if (!capabilities.has('side-band-64k') && !capabilities.has('side-band')) {
    throw new Error('the git server does not offer side-band, which bpa needs to receive a pack');
  }
  if (!caps.includes('side-band-64k')) caps.unshift('side-band');
  if (req.depth !== undefined && !capabilities.has('shallow')) {
    throw new Errors.RemoteCapabilityError('shallow', 'depth');
  }
  if (req.depth !== undefined || req.shallows.length) caps.push('shallow');
  const body: Buffer[] = [];
  [...new Set(req.wants)].forEach((oid, i) =>
    body.push(pktLine(`want ${oid}${i === 0 ? ` ${caps.join(' ')}` : ''}\n`)),
  );
  if (capabilities.has('shallow'))
    for (const oid of req.shallows) body.push(pktLine(`shallow ${oid}\n`));
  if (req.depth !== undefined) body.push(pktLine(`deepen ${req.depth}\n`));
  body.push(FLUSH);
  for (const oid of new Set(req.haves)) body.push(pktLine(`have ${oid}\n`));
  body.push(pktLine('done\n'));

  const headers = {
    ...link.remote.headers(),
    'user-agent': 'git/bpa',
    'content-type': `application/x-${SERVICE}-request`,
    accept: `application/x-${SERVICE}-result`,
  };
  const url = `${link.remote.url}/${SERVICE}`;
  const payload = Buffer.concat(body);
  // Read as fast as it is written to disk, not as fast as the network delivers it.
  const streaming = (link.http as BpaHttpClient).streamingPost;
  const res = streaming
    ? await streaming(url, headers, payload)
    : await link.http.request({
        method: 'POST',
        url,
        headers,
        // An array is sent with a Content-Length (the Node client collects it); some servers
        // hang up on a chunked request.
        body: [payload] as unknown as AsyncIterableIterator<Uint8Array>,
      });
  await checkStatus(res);
  const reader = new PktReader(res.body ?? emptyBody());
  const out: PackResponse = { shallow: [], unshallow: [], received: false };

  // Shallow updates (then a flush), acknowledgements, then the side-band stream.
  let line: Buffer | null | undefined;
  for (;;) {
    line = await reader.next();
    if (line === undefined)
      throw new Error('git protocol error: the response ended before the pack');
    if (line === null) continue;
    const band = line[0];
    if (band === 1 || band === 2 || band === 3) break;
    const text = line.toString('utf8').replace(/\n$/, '');
    if (text.startsWith('ERR ')) throw new Error(`${SERVICE}: ${text}`);
    if (text.startsWith('shallow ')) out.shallow.push(text.slice(8));
    else if (text.startsWith('unshallow ')) out.unshallow.push(text.slice(10));
    // ACK / NAK lines carry nothing bpa needs: it always sends "done".
  }

  const fd = openSync(packFile, 'w');
  const sha = createHash('sha1');
  // The last 20 bytes are the checksum of everything before them: held back until the end.
  let held = Buffer.alloc(0);
  let total = 0;
  try {
    for (; line !== undefined; line = await reader.next()) {
      if (line === null) break;
      const band = line[0];
      const data = line.subarray(1);
      if (band === 3) throw new Error(`${SERVICE}: ${data.toString('utf8').trim()}`);
      if (band !== 1) continue;
      writeSync(fd, data);
      total += data.length;
      if (data.length >= 20) {
        // Only the 20 held bytes are copied, never a whole packet.
        sha.update(held);
        sha.update(data.subarray(0, data.length - 20));
        held = Buffer.from(data.subarray(data.length - 20));
      } else {
        const joined = Buffer.concat([held, data]);
        sha.update(joined.subarray(0, Math.max(0, joined.length - 20)));
        held = Buffer.from(joined.subarray(Math.max(0, joined.length - 20)));
      }
    }
  } finally {
    closeSync(fd);
  }
  if (total === 0) return out;
  if (total < 32 || !sha.digest().equals(held)) {
    throw new Error('git protocol error: the pack checksum does not match its content');
  }
  out.received = true;
  return out;
}

async function checkStatus(res: GitHttpResponse): Promise<void> {
  if (res.statusCode === 200) return;
  const text = await bodyText(res, 512);
  throw new Errors.HttpError(res.statusCode, res.statusMessage, text);
}

async function bodyText(res: GitHttpResponse, max: number): Promise<string> {
  let text = '';
  for await (const chunk of res.body ?? emptyBody()) {
    if (text.length < max) text += Buffer.from(chunk).toString('utf8');
  }
  return text.slice(0, max);
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {
  // Nothing: a response without a body.
}
