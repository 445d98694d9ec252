// OpenPGP commit signatures: the trusted keys imported into a throwaway keyring, the
// signature checked by gpgv against that keyring only.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StalledError } from '../util/errors.js';
import { lastLine, runTool, type ToolResult } from './signature-tool.js';

/** Returns the signer's primary key fingerprint; throws COMMIT_SIGNATURE_UNTRUSTED or SIGNATURE_TRUST_MISSING. */
export async function checkOpenPgp(
  tmp: string,
  short: string,
  payload: Buffer,
  signature: string,
  keysFile: string,
): Promise<string> {
  const home = join(tmp, 'gnupg');
  await mkdir(home, { mode: 0o700 });
  // --no-autostart: importing public keys needs no gpg-agent, and one started here would outlive
  // the throwaway home.
  const imported = await runTool(
    'gpg',
    [
      '--batch',
      '--no-tty',
      '--no-autostart',
      '--homedir',
      home,
      '--status-fd',
      '1',
      '--import',
      keysFile,
    ],
    tmp,
  );
  if (!statusLines(imported.stdout).some(([key]) => key === 'IMPORT_OK')) {
    throw new StalledError(
      'SIGNATURE_TRUST_MISSING',
      `the trusted OpenPGP keys file ${keysFile} holds no usable public key (${lastLine(imported.stderr)}), so commit ${short} cannot be checked`,
    );
  }
  const sigFile = join(tmp, 'commit.sig');
  const dataFile = join(tmp, 'commit.payload');
  await writeFile(sigFile, signature);
  await writeFile(dataFile, payload);
  // gpgv trusts every key of the keyring it is given, and nothing else.
  const checked = await runTool(
    'gpgv',
    [
      '--homedir',
      home,
      '--keyring',
      join(home, 'pubring.kbx'),
      '--status-fd',
      '1',
      sigFile,
      dataFile,
    ],
    tmp,
  );
  return openPgpVerdict(short, checked);
}

/** Reads gpgv's machine-readable status lines, never its translated human text. */
function openPgpVerdict(short: string, result: ToolResult): string {
  const lines = statusLines(result.stdout);
  const first = (key: string): string[] | undefined => lines.find(([k]) => k === key)?.slice(1);
  const untrusted = (why: string): StalledError =>
    new StalledError('COMMIT_SIGNATURE_UNTRUSTED', `commit ${short} ${why}`);

  const bad = first('BADSIG');
  if (bad) {
    throw untrusted(
      `has a BAD OpenPGP signature by key ${bad[0] ?? '?'}: the commit was altered after it was signed`,
    );
  }
  const errsig = first('ERRSIG');
  if (errsig) {
    const key = errsig[6] && errsig[6] !== '-' ? errsig[6] : (errsig[0] ?? '?');
    if (first('NO_PUBKEY')) {
      throw untrusted(`is signed by OpenPGP key ${key}, which is not among the trusted keys`);
    }
    throw untrusted(`has an OpenPGP signature by key ${key} that cannot be checked`);
  }
  for (const [status, why] of [
    ['EXPKEYSIG', 'is signed by the expired OpenPGP key'],
    ['REVKEYSIG', 'is signed by the revoked OpenPGP key'],
    ['EXPSIG', 'has an expired OpenPGP signature by key'],
  ] as const) {
    const found = first(status);
    if (found) throw untrusted(`${why} ${found[0] ?? '?'}`);
  }
  const valid = first('VALIDSIG');
  const signatures = lines.filter(([k]) => k === 'NEWSIG').length;
  if (result.exitCode === 0 && first('GOODSIG') && valid?.[0] && signatures === 1) {
    // The primary key is what an operator lists as trusted; a subkey may have signed.
    return valid[9] ?? valid[0];
  }
  throw untrusted(`has an OpenPGP signature that does not verify: ${lastLine(result.stderr)}`);
}

function statusLines(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('[GNUPG:] '))
    .map((line) => line.slice('[GNUPG:] '.length).trim().split(' '));
}
