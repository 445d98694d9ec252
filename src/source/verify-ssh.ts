// SSH commit signatures: the signer found in the allowed_signers file by its key, then the
// signature checked for the "git" namespace, both by ssh-keygen -Y.
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StalledError } from '../util/errors.js';
import { lastLine, runTool } from './signature-tool.js';

/** Returns the signer's principal; throws COMMIT_SIGNATURE_UNTRUSTED. */
export async function checkSsh(
  tmp: string,
  short: string,
  payload: Buffer,
  signature: string,
  allowedSigners: string,
): Promise<string> {
  const key = sshSignatureKey(signature);
  if (!key) {
    throw new StalledError(
      'COMMIT_SIGNATURE_UNTRUSTED',
      `commit ${short} has a malformed SSH signature`,
    );
  }
  const sigFile = join(tmp, 'commit.sig');
  await writeFile(sigFile, signature);
  const found = await runTool(
    'ssh-keygen',
    ['-Y', 'find-principals', '-f', allowedSigners, '-s', sigFile],
    tmp,
  );
  const principal = found.stdout
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim();
  if (found.exitCode !== 0 || !principal) {
    throw new StalledError(
      'COMMIT_SIGNATURE_UNTRUSTED',
      `commit ${short} is signed by SSH key ${key.fingerprint} (${key.type}), which is not in the allowed signers file ${allowedSigners}`,
    );
  }
  // -n git: a signature made for another purpose (a file, an email) is not a commit signature.
  const checked = await runTool(
    'ssh-keygen',
    ['-Y', 'verify', '-f', allowedSigners, '-I', principal, '-n', 'git', '-s', sigFile],
    tmp,
    payload,
  );
  if (checked.exitCode === 0 && checked.stdout.startsWith('Good "git" signature')) return principal;
  throw new StalledError(
    'COMMIT_SIGNATURE_UNTRUSTED',
    `commit ${short} has an SSH signature by ${principal} (key ${key.fingerprint}) that does not verify: ${lastLine(checked.stderr || checked.stdout)}`,
  );
}

/**
 * The signing key of an SSH signature (the SSHSIG blob: magic, version, public key, …), so that
 * an unknown signer can be named by the fingerprint `ssh-keygen -l` would show.
 */
function sshSignatureKey(armored: string): { fingerprint: string; type: string } | undefined {
  const body = armored
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('-----'))
    .join('');
  const blob = Buffer.from(body, 'base64');
  if (blob.subarray(0, 6).toString('latin1') !== 'SSHSIG' || blob.length < 14) return undefined;
  const keyLen = blob.readUInt32BE(10);
  const key = blob.subarray(14, 14 + keyLen);
  if (key.length !== keyLen || keyLen < 4) return undefined;
  const typeLen = key.readUInt32BE(0);
  const type = key.subarray(4, 4 + typeLen).toString('latin1');
  const digest = createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
  return { fingerprint: `SHA256:${digest}`, type };
}
