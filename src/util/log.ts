import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * bpa's one structured logger: JSON lines on stderr, with context fields (cluster, node,
 * step) added by child loggers. `level` comes from the configuration layer.
 */
export function createLogger(
  level: string = 'info',
  destination: NodeJS.WritableStream = process.stderr,
): Logger {
  return pino(
    { level, base: { app: 'bpa' }, timestamp: pino.stdTimeFunctions.isoTime },
    destination,
  );
}

export { silentLogger } from './silent-logger.js';
