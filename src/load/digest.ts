import { createHash } from 'node:crypto';
import type { SiteFile } from './read-site.js';

/** A digest of a local site's input files (paths and contents): its "revision". */
export function siteDigest(files: readonly SiteFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    h.update(f.path).update('\0').update(f.text).update('\0');
  }
  return `sha256:${h.digest('hex')}`;
}
