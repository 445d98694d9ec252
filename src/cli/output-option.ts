import { Option } from 'commander';
import { UsageError } from '../util/errors.js';

/**
 * `-o, --output <format>`: the one flag for output format, on every command that prints a
 * result (kubectl's spelling). The first format is the default.
 */
export function outputOption(formats: readonly string[]): Option {
  return new Option('-o, --output <format>', 'output format').choices(formats).default(formats[0]);
}

/** `-f, --format <format>`: the earlier spelling of --output, kept where it existed. */
export function formatAliasOption(formats: readonly string[]): Option {
  return new Option('-f, --format <format>', 'the same as --output (kept for scripts)').choices(
    formats,
  );
}

/** The format asked for with --output, or with its alias --format; both must agree. */
export function outputFormat(opts: { output?: string; format?: string }): string | undefined {
  if (opts.format === undefined) return opts.output;
  if (opts.output !== undefined && opts.output !== opts.format && opts.output !== 'text')
    throw new UsageError(`--output ${opts.output} and --format ${opts.format} disagree: give one`);
  return opts.format;
}
