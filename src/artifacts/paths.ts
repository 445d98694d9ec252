import { join } from 'node:path';

/** The artifact store's directory in the state volume. */
export function artifactsDir(stateDir: string): string {
  return join(stateDir, 'artifacts');
}

/**
 * The public key of bpa's apt repository, written by `bpa serve` when it signs
 * (`--apt-signing-key`), read when packages are applied with `packageMirror: {bpa: true}`.
 * Absent when the repository is not signed.
 */
export function aptPublicKeyPath(stateDir: string): string {
  return join(artifactsDir(stateDir), 'apt-key.asc');
}
