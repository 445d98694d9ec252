import { access, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StalledError, messageOf } from '../util/errors.js';
import { runProcess } from '../util/run-process.js';

/**
 * bpa's SSH key: the configured one, or `<state>/ssh/id_ed25519`, generated on first use
 * (never committed anywhere; it lives with the state).
 */
export async function ensureKeyPair(
  privateKeyPath: string,
  generate: boolean,
): Promise<{ privateKey: string; publicKey: string }> {
  const publicKey = `${privateKeyPath}.pub`;
  try {
    await access(privateKeyPath);
    await access(publicKey);
    return { privateKey: privateKeyPath, publicKey };
  } catch {
    if (!generate) {
      throw new StalledError(
        'SSH_KEY_MISSING',
        `SSH key ${privateKeyPath} (and ${publicKey}) not found; give --ssh-key a key pair, or leave it unset to let bpa generate one in the state directory`,
      );
    }
  }
  await mkdir(dirname(privateKeyPath), { recursive: true, mode: 0o700 });
  const argv = ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'bpa', '-f', privateKeyPath];
  const why = await runProcess(argv, { timeoutMs: 30_000 }).then(
    (r) =>
      r.exitCode === 0
        ? undefined
        : r.stderr.trim() || `${argv[0]} exited ${r.exitCode ?? r.signal}`,
    (err: unknown) => messageOf(err),
  );
  if (why !== undefined)
    throw new StalledError('SSH_KEYGEN_FAILED', `cannot generate ${privateKeyPath}: ${why}`);
  return { privateKey: privateKeyPath, publicKey };
}
