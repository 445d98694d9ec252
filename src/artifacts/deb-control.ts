/**
 * The control data of an uploaded .deb, read with `dpkg-deb --field` (the same reader apt's
 * archive tools use), so that any compression dpkg itself accepts (gzip, xz, zstd) works.
 */
import { SpawnError, runProcess } from '../util/run-process.js';

export interface DebControl {
  package: string;
  version: string;
  architecture: string;
  /** The control paragraph as in the package, without a trailing newline. */
  paragraph: string;
}

/** What makes an uploaded file not a usable Debian package. */
export class NotADebError extends Error {
  override readonly name = 'NotADebError';
}

const PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;
const VERSION = /^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;
const ARCH = /^[a-z0-9-]+$/;

export async function readDebControl(file: string): Promise<DebControl> {
  let result;
  try {
    result = await runProcess(['dpkg-deb', '--field', '--', file], { timeoutMs: 60_000 });
  } catch (err: unknown) {
    if (err instanceof SpawnError)
      throw new Error('dpkg-deb is not installed: bpa needs it to index uploaded packages');
    throw err;
  }
  if (result.exitCode !== 0)
    throw new NotADebError(
      `not a Debian package: dpkg-deb says ${result.stderr.trim().split('\n').pop() ?? 'nothing'}`,
    );
  return parseControl(result.stdout);
}

/** The fields apt needs from a control paragraph; throws NotADebError when one is missing or odd. */
export function parseControl(text: string): DebControl {
  const paragraph = text.replace(/\n+$/, '');
  const field = (name: string): string | undefined =>
    new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi').exec(paragraph)?.[1]?.trim();
  const pkg = field('Package');
  const version = field('Version');
  const architecture = field('Architecture');
  if (!pkg || !PACKAGE.test(pkg)) throw new NotADebError('its control data has no valid Package');
  if (!version || !VERSION.test(version))
    throw new NotADebError(`${pkg}: its control data has no valid Version`);
  if (!architecture || !ARCH.test(architecture))
    throw new NotADebError(`${pkg}: its control data has no valid Architecture`);
  if (/^\s*$/m.test(paragraph))
    throw new NotADebError(`${pkg}: its control data has an empty line`);
  return { package: pkg, version, architecture, paragraph: withoutIndexFields(paragraph) };
}

/**
 * The fields an archive writes into its index for each package: where its file is and what it
 * hashes to. bpa writes its own from the stored file; a package's own (wrong, or aimed at
 * another file) would give its stanza two of each, of which apt may believe either.
 */
const INDEX_FIELDS = new Set(
  ['Filename', 'Size', 'MD5sum', 'SHA1', 'SHA256', 'SHA512', 'Description-md5'].map((f) =>
    f.toLowerCase(),
  ),
);

/** A control paragraph without the index fields (field names compared without case, as dpkg does). */
export function withoutIndexFields(paragraph: string): string {
  const kept: string[] = [];
  let dropping = false;
  for (const line of paragraph.split('\n')) {
    // A line starting with a space or tab continues the field above it.
    if (!/^[ \t]/.test(line)) {
      const name = line.slice(0, line.indexOf(':')).trim().toLowerCase();
      dropping = line.includes(':') && INDEX_FIELDS.has(name);
    }
    if (!dropping) kept.push(line);
  }
  return kept.join('\n');
}
