/**
 * The PGP half of SOPS: a file's data key is encrypted for each PGP key (armored, in
 * `sops.pgp[].enc`), and the operator's GnuPG opens it with their keyring (GNUPGHOME, or
 * ~/.gnupg), as `sops -d` does. bpa holds no PGP key of its own: without GnuPG, or without
 * a secret key that opens a stanza, the file is left to the age keys.
 */
import { spawn } from 'node:child_process';

const GPG_TIMEOUT_MS = 30_000;

/** The data key, from the first stanza the keyring opens; undefined when none does. */
export async function unwrapPgpDataKey(
  stanzas: ReadonlyArray<{ enc: string }>,
  opts: { gpgBinary?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Buffer | undefined> {
  for (const s of stanzas) {
    const key = await runGpg(opts.gpgBinary ?? 'gpg', s.enc, opts.env ?? process.env);
    if (key?.length === 32) return key;
  }
  return undefined;
}

/** gpg's output for one stanza; undefined when it cannot decrypt it (or is not installed). */
function runGpg(binary: string, enc: string, env: NodeJS.ProcessEnv): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    // --pinentry-mode error: a key that needs a passphrase fails instead of waiting for one.
    const child = spawn(
      binary,
      ['--batch', '--quiet', '--no-tty', '--pinentry-mode', 'error', '--decrypt'],
      { stdio: ['pipe', 'pipe', 'pipe'], env },
    );
    const out: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), GPG_TIMEOUT_MS);
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.resume();
    child.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? Buffer.concat(out) : undefined);
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(enc);
  });
}
