import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import nodeHttp from 'isomorphic-git/http/node';

export const DEFAULT_HTTP_TIMEOUT_MS = 60_000;

/**
 * The HTTP client bpa hands to isomorphic-git: the Node client with a socket idle timeout, so
 * a git server that accepts a connection and then hangs fails the poll instead of wedging the
 * controller.
 */
export function httpClient(
  base: HttpClient | undefined,
  timeoutMs = DEFAULT_HTTP_TIMEOUT_MS,
): HttpClient {
  const inner = base ?? nodeHttp;
  return {
    request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const fetchOptions = {
        ...(req as { fetchOptions?: object }).fetchOptions,
        timeout: timeoutMs,
      };
      return inner.request({ ...req, fetchOptions } as GitHttpRequest);
    },
  };
}
