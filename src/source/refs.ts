/** One advertised ref, as in the server's ref advertisement. */
export interface AdvertisedRef {
  ref: string;
  oid: string;
  /** For an annotated tag: the commit it points to. */
  peeled?: string;
}

export interface ResolvedRef {
  /** Full ref name, e.g. refs/heads/main. */
  fullRef: string;
  /** The object the ref names (a tag object for an annotated tag). */
  oid: string;
  /** The commit to check out. */
  commit: string;
}

const SHA1 = /^[0-9a-f]{40}$/i;

export function isCommitId(ref: string): boolean {
  return SHA1.test(ref);
}

/**
 * Finds `ref` among the advertised refs with git's own precedence for a short name
 * (refs/<name>, refs/tags/<name>, refs/heads/<name>), so `--ref v1` means what `git fetch`
 * would take it to mean.
 */
export function resolveAdvertised(
  refs: readonly AdvertisedRef[],
  ref: string,
): ResolvedRef | undefined {
  const byName = new Map(refs.map((r) => [r.ref, r]));
  const candidates =
    ref === 'HEAD' || ref.startsWith('refs/')
      ? [ref]
      : [`refs/${ref}`, `refs/tags/${ref}`, `refs/heads/${ref}`];
  for (const name of candidates) {
    const hit = byName.get(name);
    if (hit) return { fullRef: name, oid: hit.oid, commit: hit.peeled ?? hit.oid };
  }
  return undefined;
}
