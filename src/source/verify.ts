// Commit signature verification for `--verify-signatures`: a revision is applied only when its
// commit carries a good OpenPGP or SSH signature by a key the operator trusts. isomorphic-git
// reads the commit but cannot check signatures, so gpgv and ssh-keygen do the cryptography, each
// against only the trust it is given here, in a throwaway directory: the user's ~/.gnupg and
// ~/.ssh are never read or written.
//
// Only the commit to apply is checked (as `git merge --verify-signatures` checks only the tip):
// a shallow cache holds no history to check anyway.
import fs from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import { GIT_REF_NOT_FOUND } from './classify.js';
import { checkOpenPgp } from './verify-openpgp.js';
import { checkSsh } from './verify-ssh.js';

export interface TrustConfig {
  /** OpenPGP public keys trusted to sign: a file with one or more ASCII-armored or binary public keys (gpg --export [--armor]). */
  openpgpKeys?: string;
  /** SSH signers: an OpenSSH allowed_signers file (`principal key-type key`). */
  allowedSigners?: string;
}

export interface Verified {
  commit: string;
  method: 'openpgp' | 'ssh';
  /** The OpenPGP primary key fingerprint, or the SSH principal from allowed_signers. */
  signer: string;
}

/**
 * Checks that `commit` (present in the repository at `dir`) is signed by a trusted key.
 * Throws a StalledError when it is not: the same commit never becomes acceptable by retrying,
 * only a new, properly signed commit (or a change of the trust configuration) helps.
 */
export async function verifyCommit(
  dir: string,
  commit: string,
  trust: TrustConfig,
): Promise<Verified> {
  const short = commit.slice(0, 12);
  const { payload, signature } = splitSignature(await readRawCommit(dir, commit));
  if (signature === undefined) {
    throw new StalledError(
      'COMMIT_UNSIGNED',
      `commit ${short} is not signed, and signatures are required: only signed commits are applied`,
    );
  }
  const kind = signatureKind(signature);
  if (kind === 'openpgp') {
    const keys = await trustFile(trust.openpgpKeys, 'OpenPGP', short);
    const signer = await withScratch((tmp) => checkOpenPgp(tmp, short, payload, signature, keys));
    return { commit, method: 'openpgp', signer };
  }
  if (kind === 'ssh') {
    const signers = await trustFile(trust.allowedSigners, 'SSH', short);
    const signer = await withScratch((tmp) => checkSsh(tmp, short, payload, signature, signers));
    return { commit, method: 'ssh', signer };
  }
  throw new StalledError(
    'COMMIT_SIGNATURE_UNTRUSTED',
    `commit ${short} carries a ${kind} signature, which bpa cannot verify: sign with an OpenPGP or SSH key`,
  );
}

// ---------------------------------------------------------------------------------------------
// The signed bytes

async function readRawCommit(dir: string, commit: string): Promise<Uint8Array> {
  let found: { type: string; object: unknown };
  try {
    found = await git.readObject({ fs, dir, oid: commit, format: 'content' });
  } catch (err: unknown) {
    throw new StalledError(GIT_REF_NOT_FOUND, `commit ${commit} is not in ${dir}`, { cause: err });
  }
  if (found.type !== 'commit' || !(found.object instanceof Uint8Array)) {
    throw new StalledError(GIT_REF_NOT_FOUND, `${commit} is a ${found.type}, not a commit`);
  }
  return found.object;
}

/**
 * Splits a raw commit object into what was signed and the signature, as git does: every
 * `gpgsig*` header (with its continuation lines) is left out of the payload, and the `gpgsig`
 * header of a SHA-1 repository is the signature. Works on bytes, so a message in any encoding
 * is verified exactly as written.
 */
function splitSignature(raw: Uint8Array): { payload: Buffer; signature?: string } {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const kept: Buffer[] = [];
  const sig: Buffer[] = [];
  let inSignature = false;
  let inOther = false;
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const end = nl < 0 ? buf.length : nl + 1;
    const line = buf.subarray(pos, end);
    if (line[0] === 0x0a) {
      // The blank line ends the headers; the message is kept whole.
      kept.push(buf.subarray(pos));
      break;
    }
    const continuation = line[0] === 0x20;
    if (continuation && inSignature) {
      sig.push(line.subarray(1));
    } else if (continuation && inOther) {
      // Part of another algorithm's signature: neither payload nor ours.
    } else if (startsWith(line, 'gpgsig ')) {
      inSignature = true;
      inOther = false;
      sig.push(line.subarray('gpgsig '.length));
    } else if (startsWith(line, 'gpgsig')) {
      inSignature = false;
      inOther = true;
    } else {
      inSignature = false;
      inOther = false;
      kept.push(line);
    }
    pos = end;
  }
  const payload = Buffer.concat(kept);
  if (sig.length === 0) return { payload };
  return { payload, signature: Buffer.concat(sig).toString('latin1') };
}

function startsWith(line: Buffer, prefix: string): boolean {
  return line.subarray(0, prefix.length).toString('latin1') === prefix;
}

/** 'openpgp', 'ssh', or the name of a kind bpa cannot check, for the message. */
function signatureKind(signature: string): string {
  const first = signature.trimStart().split('\n', 1)[0]?.trim() ?? '';
  if (first === '-----BEGIN PGP SIGNATURE-----') return 'openpgp';
  if (first === '-----BEGIN SSH SIGNATURE-----') return 'ssh';
  if (first === '-----BEGIN SIGNED MESSAGE-----') return 'X.509';
  return 'unrecognized';
}

async function trustFile(
  file: string | undefined,
  what: 'OpenPGP' | 'SSH',
  short: string,
): Promise<string> {
  const setting = what === 'OpenPGP' ? 'trusted OpenPGP keys' : 'SSH allowed signers';
  if (file === undefined || file === '') {
    throw new StalledError(
      'SIGNATURE_TRUST_MISSING',
      `commit ${short} has an ${what} signature, but no ${setting} file is configured to check it against`,
    );
  }
  try {
    await access(file, fs.constants.R_OK);
  } catch (err: unknown) {
    throw new StalledError(
      'SIGNATURE_TRUST_MISSING',
      `cannot read the ${setting} file ${file} to check commit ${short}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return file;
}

async function withScratch<T>(work: (tmp: string) => Promise<T>): Promise<T> {
  // mkdtemp creates the directory 0700: the payload and keyring are readable by us alone.
  const tmp = await mkdtemp(join(tmpdir(), 'bpa-sigcheck-'));
  try {
    return await work(tmp);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
