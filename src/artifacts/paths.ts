import { join } from 'node:path';

/** The artifact store's directory in the state volume. */
export function artifactsDir(stateDir: string): string {
  return join(stateDir, 'artifacts');
}
