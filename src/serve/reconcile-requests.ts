// `kubectl annotate site <name> reconcile.bpa.akraino.org/requestedAt=…` reconciles at once, as
// `flux reconcile` does: serve watches its Site objects for a request not yet handled.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { REQUESTED_AT_ANNOTATION } from '../report/kube/writer.js';
import { messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';

interface SiteLike {
  metadata?: { name?: string; annotations?: Record<string, string> };
  status?: { lastHandledReconcileAt?: string };
}

/**
 * Watches the Site objects of the namespace and calls `onRequest` for each requestedAt value
 * their status has not handled yet (the Reconciler reads the value itself and echoes it). The
 * watch is opened again after it ends or fails, after `retryMs`. Returns a stop function.
 */
export function watchReconcileRequests(
  kc: KubeConfig,
  namespace: string,
  onRequest: (site: string, requestedAt: string) => void,
  log: Logger,
  retryMs = 5_000,
): () => void {
  const watch = new Watch(kc);
  let stopped = false;
  let current: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const seen = new Map<string, string>();
  const again = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void open(), retryMs);
  };
  const open = async (): Promise<void> => {
    if (stopped) return;
    try {
      current = await watch.watch(
        `/apis/bpa.akraino.org/v1alpha1/namespaces/${namespace}/sites`,
        {},
        (type: string, obj: SiteLike) => {
          if (type !== 'ADDED' && type !== 'MODIFIED') return;
          const name = obj.metadata?.name ?? '';
          const requested = obj.metadata?.annotations?.[REQUESTED_AT_ANNOTATION];
          if (requested === undefined || requested === obj.status?.lastHandledReconcileAt) return;
          if (seen.get(name) === requested) return;
          seen.set(name, requested);
          log.info({ site: name, requestedAt: requested }, 'reconcile requested');
          onRequest(name, requested);
        },
        (err: unknown) => {
          if (err && !stopped) log.warn({ err: messageOf(err) }, 'watch of Site objects ended');
          again();
        },
      );
    } catch (err: unknown) {
      log.warn({ err: messageOf(err) }, 'cannot watch Site objects for reconcile requests');
      again();
    }
  };
  void open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    current?.abort();
  };
}
