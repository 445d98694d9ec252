/**
 * What may be stored in the artifact store, and under which names. Names become file names
 * in the state volume and path segments of URLs, so they are checked here, once, strictly.
 */
export const ARTIFACT_KINDS = ['images', 'packages', 'files'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

export function isArtifactKind(kind: string): kind is ArtifactKind {
  return (ARTIFACT_KINDS as readonly string[]).includes(kind);
}

/** The checksum files served beside every image and file; no artifact may take these names. */
export const CHECKSUM_SUFFIXES = ['.sha256sum', '.md5sum'] as const;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._+~-]{0,199}$/;

/** Why `name` cannot name an artifact of `kind`, or undefined when it can. */
export function nameProblem(kind: ArtifactKind, name: string): string | undefined {
  if (name.includes('/') || name.includes('\\')) return 'a name cannot contain a path separator';
  if (name.includes('..')) return 'a name cannot contain ".."';
  if (!NAME.test(name))
    return 'a name is 1 to 200 characters: letters, digits and . _ + ~ -, starting with a letter or digit';
  if (CHECKSUM_SUFFIXES.some((s) => name.endsWith(s)))
    return `names ending in ${CHECKSUM_SUFFIXES.join(' or ')} are the checksum files bpa serves beside each artifact`;
  if (kind === 'packages' && !name.endsWith('.deb'))
    return 'a package is a Debian package: its name ends in .deb';
  return undefined;
}

/** A sha256 as X-Checksum-Sha256 carries it: 64 hex digits (either case). */
export function parseSha256(text: string | undefined): string | undefined {
  const t = text?.trim().toLowerCase();
  return t && /^[0-9a-f]{64}$/.test(t) ? t : undefined;
}
