import {
  ApiException,
  Observable,
  type ConfigurationOptions,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import {
  type BpaError,
  type RuntimeCode,
  StalledError,
  TransientError,
  messageOf,
} from '../util/errors.js';

/** Labels every object bpa writes carries, so an operator can find them with one selector. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'bpa';
export const CLUSTER_LABEL = 'bpa.akraino.org/cluster';

/** The HTTP status of a failed client call, or undefined when the request never got an answer. */
export function httpStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/** The `message` of the Status object the server answered with, when there is one. */
export function serverMessage(err: unknown): string | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const body: unknown = err.body;
  if (typeof body !== 'string' || body === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed) {
      const message = (parsed as { message: unknown }).message;
      if (typeof message === 'string') return message;
    }
  } catch {
    // not a Status document; the code alone has to do
  }
  return undefined;
}

/**
 * Turns a failed API call into a bpa error with a retry decision. `permission` names what
 * the service account needs (e.g. "create on jobs.batch in namespace x"), for the 403 hint.
 */
export function explainApiError(
  err: unknown,
  code: RuntimeCode,
  action: string,
  permission: string,
): BpaError {
  const status = httpStatus(err);
  const said = serverMessage(err);
  const detail = said ? `: ${said}` : '';
  if (status === undefined) {
    return new TransientError(code, `${action} failed: ${messageOf(err)}`, { cause: err });
  }
  if (status === 401) {
    return new StalledError(
      code,
      `${action}: not authenticated (401); check the kubeconfig or service account token`,
      { cause: err },
    );
  }
  if (status === 403) {
    return new StalledError(
      code,
      `${action}: forbidden (403)${detail}; grant ${permission} to bpa's service account (RBAC)`,
      { cause: err },
    );
  }
  if (status === 429 || status >= 500) {
    return new TransientError(code, `${action}: server error ${status}${detail}`, { cause: err });
  }
  return new StalledError(code, `${action}: rejected (${status})${detail}`, { cause: err });
}

/** Per-request options that abort the HTTP request when `signal` fires. */
export function abortable(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (ctx: RequestContext): Observable<RequestContext> => {
          ctx.setSignal(signal);
          return new Observable(Promise.resolve(ctx));
        },
        post: (res: ResponseContext): Observable<ResponseContext> =>
          new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** A label value (at most 63 characters, alphanumeric at both ends) made from any text. */
export function labelValue(text: string): string {
  return text
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/[^A-Za-z0-9]+$/, '');
}
