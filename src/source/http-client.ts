import http from 'node:http';
import https from 'node:https';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import nodeHttp from 'isomorphic-git/http/node';

export const DEFAULT_HTTP_TIMEOUT_MS = 60_000;

/** A POST whose response body is read only as fast as it is consumed. */
export type StreamingPost = (
  url: string,
  headers: Record<string, string>,
  body: Buffer,
) => Promise<GitHttpResponse>;

/** The client bpa's git layer uses: isomorphic-git's, plus a streaming POST for packs. */
export type BpaHttpClient = HttpClient & { streamingPost?: StreamingPost };

/**
 * The HTTP client bpa hands to isomorphic-git: the Node client with a socket idle timeout, so
 * a git server that accepts a connection and then hangs fails the poll instead of wedging the
 * controller. Without a client of the caller's own it also carries `streamingPost`, for
 * receiving packs: isomorphic-git's Node client queues a response as fast as the network
 * delivers it, so a large pack would pile up in memory while it is written to disk.
 */
export function httpClient(
  base: HttpClient | undefined,
  timeoutMs = DEFAULT_HTTP_TIMEOUT_MS,
): BpaHttpClient {
  const inner = base ?? nodeHttp;
  const client: BpaHttpClient = {
    request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const fetchOptions = {
        ...(req as { fetchOptions?: object }).fetchOptions,
        timeout: timeoutMs,
      };
      return inner.request({ ...req, fetchOptions } as GitHttpRequest);
    },
  };
  if (!base) client.streamingPost = (url, headers, body) => post(url, headers, body, timeoutMs);
  return client;
}

function post(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
): Promise<GitHttpResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? https.request : http.request;
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        timeout: timeoutMs,
      },
      (res) => {
        const flat = Object.entries(res.headers).map(([k, v]): [string, string] => [
          k,
          Array.isArray(v) ? v.join(', ') : (v ?? ''),
        ]);
        resolve({
          url,
          method: 'POST',
          statusCode: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? '',
          headers: Object.fromEntries(flat),
          // The response itself, read on demand: the socket waits while the pack is written.
          body: res[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>,
        });
      },
    );
    // An idle socket, before or during the response (the Node client's wording).
    req.on('timeout', () => req.destroy(new Error('Request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}
