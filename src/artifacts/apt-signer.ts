/**
 * Signs the Release file of bpa's apt repository with the operator's OpenPGP key
 * (`--apt-signing-key`, an exported secret key without a passphrase), as `InRelease`
 * (clear-signed) and `Release.gpg` (detached), so nodes can use `signed-by=` instead of
 * trusting anything on the network path. The key lives in a throwaway GnuPG home for the
 * life of the process; its gpg-agent is stopped on close.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StalledError } from '../util/errors.js';
import { SpawnError, runProcess, type ProcessResult } from '../util/run-process.js';

export interface AptSignature {
  inRelease: string;
  releaseGpg: string;
}

export class AptSigner {
  private constructor(
    private readonly home: string,
    readonly fingerprint: string,
    /** The public key, ASCII-armored: what nodes put in /etc/apt/keyrings/. */
    readonly publicKey: string,
  ) {}

  static async create(keyFile: string): Promise<AptSigner> {
    // A short path: gpg-agent's socket path must stay under the Unix socket length limit.
    const home = await mkdtemp(join(tmpdir(), 'bpa-apt-gpg-'));
    try {
      const imported = await gpg(home, ['--status-fd', '1', '--import', keyFile]);
      const secret = /^\[GNUPG:\] IMPORT_OK \d+ ([0-9A-F]{40})/m.exec(imported.stdout);
      const listed = await gpg(home, ['--with-colons', '--list-secret-keys']);
      const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(listed.stdout)?.[1];
      if (imported.exitCode !== 0 || !secret || !fpr)
        throw new StalledError(
          'APT_SIGNING_KEY_INVALID',
          `--apt-signing-key ${keyFile} holds no usable OpenPGP secret key (${lastLine(imported.stderr) || 'no secret key in it'}); export one with gpg --export-secret-keys --armor`,
        );
      const exported = await gpg(home, ['--armor', '--export', fpr]);
      const signer = new AptSigner(home, fpr, exported.stdout);
      // Fails now, at start, when the key needs a passphrase bpa does not have.
      await signer.sign('bpa signing check\n');
      return signer;
    } catch (err: unknown) {
      await stopAgent(home);
      await rm(home, { recursive: true, force: true });
      throw err;
    }
  }

  async sign(release: string): Promise<AptSignature> {
    const common = ['--local-user', this.fingerprint, '--digest-algo', 'SHA256'];
    const clear = await gpg(this.home, [...common, '--clearsign'], release);
    const detached = await gpg(this.home, [...common, '--armor', '--detach-sign'], release);
    for (const r of [clear, detached])
      if (r.exitCode !== 0 || !r.stdout.includes('-----BEGIN PGP SIGNATURE-----'))
        throw new StalledError(
          'APT_SIGNING_KEY_INVALID',
          `gpg cannot sign with the --apt-signing-key (${lastLine(r.stderr)}); the key must have no passphrase`,
        );
    return { inRelease: clear.stdout, releaseGpg: detached.stdout };
  }

  async close(): Promise<void> {
    await stopAgent(this.home);
    await rm(this.home, { recursive: true, force: true });
  }
}

async function gpg(home: string, args: string[], input?: string): Promise<ProcessResult> {
  try {
    return await runProcess(
      [
        'gpg',
        '--batch',
        '--no-tty',
        '--homedir',
        home,
        '--pinentry-mode',
        'loopback',
        '--passphrase',
        '',
        ...args,
      ],
      { timeoutMs: 30_000, ...(input !== undefined ? { input } : {}) },
    );
  } catch (err: unknown) {
    if (err instanceof SpawnError)
      throw new StalledError(
        'APT_SIGNING_KEY_INVALID',
        'gpg is not installed: bpa needs it to sign its apt repository (--apt-signing-key)',
      );
    throw err;
  }
}

async function stopAgent(home: string): Promise<void> {
  await runProcess(['gpgconf', '--homedir', home, '--kill', 'gpg-agent'], {
    timeoutMs: 10_000,
  }).catch(() => undefined);
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('[GNUPG:]'))
      .pop() ?? ''
  );
}

/** The armored public key of the secret key in `keyFile` (checked to sign, like serve does). */
export async function exportPublicKey(keyFile: string): Promise<string> {
  const signer = await AptSigner.create(keyFile);
  try {
    return signer.publicKey;
  } finally {
    await signer.close();
  }
}
