import { Option } from '@commander-js/extra-typings';
import { UsageError } from '../util/errors.js';

/**
 * `-o, --output <format>`: the one flag for output format, on every command that prints a
 * result (kubectl's spelling). The first format is the default. The command's options get
 * `output` typed as the union of the formats (the return type says so: inferred, it widens).
 */
export function outputOption<const F extends readonly [string, ...string[]]>(
  formats: F,
): Option<'-o, --output <format>', undefined, F[0], undefined, false, F[number]> {
  return new Option('-o, --output <format>', 'output format').choices(formats).default(formats[0]);
}

/** `-f, --format <format>`: the earlier spelling of --output, kept where it existed. */
export function formatAliasOption<const F extends readonly string[]>(
  formats: F,
): Option<'-f, --format <format>', undefined, undefined, undefined, false, F[number]> {
  return new Option('-f, --format <format>', 'the same as --output (kept for scripts)').choices(
    formats,
  );
}

/** The format asked for with --output, or with its alias --format; both must agree. */
export function outputFormat<F extends string>(opts: { output: F; format?: F | undefined }): F {
  if (opts.format === undefined) return opts.output;
  if (opts.output !== opts.format && opts.output !== 'text')
    throw new UsageError(`--output ${opts.output} and --format ${opts.format} disagree: give one`);
  return opts.format;
}
