import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LiveBus, LiveEvent } from './live.js';

export interface SseOptions {
  /** A comment line this often, so proxies and browsers keep the stream open (15 s). */
  heartbeatMs?: number;
  /** A client that does not read past this many buffered bytes is dropped (1 MiB). */
  maxBufferedBytes?: number;
  /** Streams open at once; more are answered 503 (100). */
  maxStreams?: number;
}

/**
 * GET /ui/events: Server-Sent Events. First the kept installer lines after the client's
 * Last-Event-ID (a reconnecting browser sends it; nothing is shown twice), then every new
 * line and state change as it happens. A slow reader is cut off rather than buffered without
 * bound; the browser reconnects by itself.
 */
export function streamEvents(
  req: IncomingMessage,
  res: ServerResponse,
  bus: LiveBus,
  opts: SseOptions = {},
): void {
  const maxBuffered = opts.maxBufferedBytes ?? 1024 * 1024;
  const headers = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  };
  if (req.method === 'HEAD') {
    // The headers a GET would get, and nothing held open: a HEAD has no body to stream.
    req.resume();
    res.writeHead(200, headers);
    res.end();
    return;
  }
  if (bus.subscribers >= (opts.maxStreams ?? 100)) {
    req.resume();
    res.writeHead(503, { 'retry-after': '30', 'content-type': 'text/plain; charset=utf-8' });
    res.end('too many open event streams\n');
    return;
  }
  const header = req.headers['last-event-id'];
  const after = Number(typeof header === 'string' ? header : 0);
  res.writeHead(200, { ...headers, connection: 'keep-alive' });
  res.write('retry: 3000\n\n');
  const send = (event: LiveEvent): void => {
    if (event.type === 'end') {
      cleanup();
      res.end();
      return;
    }
    if (res.writableLength > maxBuffered) {
      cleanup();
      res.destroy();
      return;
    }
    if (event.type === 'line')
      res.write(`id: ${event.line.seq}\nevent: line\ndata: ${JSON.stringify(event.line)}\n\n`);
    else res.write(`event: state\ndata: {}\n\n`);
  };
  for (const line of bus.recent(Number.isSafeInteger(after) && after > 0 ? after : 0))
    send({ type: 'line', line });
  const unsubscribe = bus.subscribe(send);
  const beat = setInterval(() => res.write(': keep-alive\n\n'), opts.heartbeatMs ?? 15_000);
  beat.unref();
  let done = false;
  function cleanup(): void {
    if (done) return;
    done = true;
    clearInterval(beat);
    unsubscribe();
  }
  req.on('close', cleanup);
  res.on('close', cleanup);
}
