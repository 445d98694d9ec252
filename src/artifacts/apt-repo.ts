/**
 * bpa's apt repository as served: the index of the uploaded packages (and its signatures),
 * rebuilt whole after every change and swapped in as one object, so a request sees one
 * generation or the next, never a Release of one with the Packages of another.
 */
import { createHash } from 'node:crypto';
import { renderAptIndex } from './apt-index.js';
import type { AptSigner } from './apt-signer.js';
import type { ArtifactMeta } from './store.js';

export interface IndexFile {
  body: Buffer;
  etag: string;
  contentType: string;
}

export class AptRepository {
  private files = new Map<string, IndexFile>();

  constructor(private readonly signer?: AptSigner) {}

  get signed(): boolean {
    return this.signer !== undefined;
  }

  /** Rebuilds the index from the packages now stored; the previous one serves until this ends. */
  async rebuild(packages: readonly ArtifactMeta[]): Promise<void> {
    const index = renderAptIndex(packages);
    const next = new Map<string, IndexFile>();
    const add = (name: string, body: Buffer | string, contentType: string): void => {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      next.set(name, {
        body: buf,
        etag: `"${createHash('sha256').update(buf).digest('hex')}"`,
        contentType,
      });
    };
    add('Packages', index.packages, 'text/plain; charset=utf-8');
    add('Packages.gz', index.packagesGz, 'application/gzip');
    add('Release', index.release, 'text/plain; charset=utf-8');
    if (this.signer) {
      const sig = await this.signer.sign(index.release);
      add('InRelease', sig.inRelease, 'text/plain; charset=utf-8');
      add('Release.gpg', sig.releaseGpg, 'application/pgp-signature');
      add('key.asc', this.signer.publicKey, 'application/pgp-keys');
    }
    this.files = next;
  }

  /** An index file by name (Packages, Release, InRelease, key.asc…). */
  file(name: string): IndexFile | undefined {
    return this.files.get(name);
  }
}
