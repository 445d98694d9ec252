import type { Logger } from 'pino';

/**
 * A logger that drops everything (`bpa validate` and `bpa plan`, library use, tests that do
 * not look at logs), without loading pino: those commands print their results, never logs,
 * and loading the logging library was a tenth of `bpa validate`'s start-up.
 */
export function silentLogger(): Logger {
  const noop = (): void => {};
  const logger = {
    level: 'silent',
    trace: noop,
    debug: noop,
    info: noop,
    warn: noop,
    error: noop,
    fatal: noop,
    silent: noop,
    child: (): Logger => logger as unknown as Logger,
    bindings: (): Record<string, unknown> => ({}),
    isLevelEnabled: (): boolean => false,
    flush: noop,
  };
  return logger as unknown as Logger;
}
