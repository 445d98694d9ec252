// Commit signature verification for `--verify-signatures`: a revision is applied only when its
// commit carries a good OpenPGP or SSH signature by a key the operator trusts. isomorphic-git
// reads the commit but cannot check signatures, so gpgv and ssh-keygen do the cryptography, each
// against only the trust it is given here, in a throwaway directory: the user's ~/.gnupg and
// ~/.ssh are never read or written.
//
// Only the commit to apply is checked (as `git merge --verify-signatures` checks only the tip):
// a shallow cache holds no history to check anyway.
import { execFile, type ExecFileException } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { StalledError } from '../util/errors.js';
import { ExecError } from '../util/exec-error.js';
import { command } from '../util/shell-quote.js';
import { GIT_REF_NOT_FOUND } from './classify.js';

export const COMMIT_UNSIGNED = 'COMMIT_UNSIGNED';
export const COMMIT_SIGNATURE_UNTRUSTED = 'COMMIT_SIGNATURE_UNTRUSTED';
export const SIGNATURE_TRUST_MISSING = 'SIGNATURE_TRUST_MISSING';

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

/** gpg and ssh-keygen work on a few hundred bytes; anything slower than this is stuck. */
const TOOL_TIMEOUT_MS = 30_000;

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
      COMMIT_UNSIGNED,
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
    COMMIT_SIGNATURE_UNTRUSTED,
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
      SIGNATURE_TRUST_MISSING,
      `commit ${short} has an ${what} signature, but no ${setting} file is configured to check it against`,
    );
  }
  try {
    await access(file, fs.constants.R_OK);
  } catch (err: unknown) {
    throw new StalledError(
      SIGNATURE_TRUST_MISSING,
      `cannot read the ${setting} file ${file} to check commit ${short}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return file;
}

// ---------------------------------------------------------------------------------------------
// OpenPGP

async function checkOpenPgp(
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
  const imported = await run(
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
      SIGNATURE_TRUST_MISSING,
      `the trusted OpenPGP keys file ${keysFile} holds no usable public key (${lastLine(imported.stderr)}), so commit ${short} cannot be checked`,
    );
  }
  const sigFile = join(tmp, 'commit.sig');
  const dataFile = join(tmp, 'commit.payload');
  await writeFile(sigFile, signature);
  await writeFile(dataFile, payload);
  // gpgv trusts every key of the keyring it is given, and nothing else.
  const checked = await run(
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
function openPgpVerdict(short: string, result: RunResult): string {
  const lines = statusLines(result.stdout);
  const first = (key: string): string[] | undefined => lines.find(([k]) => k === key)?.slice(1);
  const untrusted = (why: string): StalledError =>
    new StalledError(COMMIT_SIGNATURE_UNTRUSTED, `commit ${short} ${why}`);

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

// ---------------------------------------------------------------------------------------------
// SSH

async function checkSsh(
  tmp: string,
  short: string,
  payload: Buffer,
  signature: string,
  allowedSigners: string,
): Promise<string> {
  const key = sshSignatureKey(signature);
  if (!key) {
    throw new StalledError(
      COMMIT_SIGNATURE_UNTRUSTED,
      `commit ${short} has a malformed SSH signature`,
    );
  }
  const sigFile = join(tmp, 'commit.sig');
  await writeFile(sigFile, signature);
  const found = await run(
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
      COMMIT_SIGNATURE_UNTRUSTED,
      `commit ${short} is signed by SSH key ${key.fingerprint} (${key.type}), which is not in the allowed signers file ${allowedSigners}`,
    );
  }
  // -n git: a signature made for another purpose (a file, an email) is not a commit signature.
  const checked = await run(
    'ssh-keygen',
    ['-Y', 'verify', '-f', allowedSigners, '-I', principal, '-n', 'git', '-s', sigFile],
    tmp,
    payload,
  );
  if (checked.exitCode === 0 && checked.stdout.startsWith('Good "git" signature')) return principal;
  throw new StalledError(
    COMMIT_SIGNATURE_UNTRUSTED,
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

// ---------------------------------------------------------------------------------------------
// Processes

interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
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

/**
 * Runs a tool with no shell, a minimal environment (HOME pointed at the scratch directory, so
 * neither gpg nor ssh-keygen finds the user's configuration) and a timeout. A non-zero exit is
 * a verdict and is returned; only a tool that could not run or did not finish is an ExecError.
 */
function run(cmd: string, args: string[], tmp: string, input?: Buffer): Promise<RunResult> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    GNUPGHOME: join(tmp, 'gnupg'),
    LC_ALL: 'C',
  };
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      { cwd: tmp, env, timeout: TOOL_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 1 << 20 },
      (err: ExecFileException | null, stdout: string, stderr: string) => {
        if (!err) {
          resolve({ exitCode: 0, stdout, stderr });
          return;
        }
        if (typeof err.code === 'number') {
          resolve({ exitCode: err.code, stdout, stderr });
          return;
        }
        const line = command([cmd, ...args]);
        if (err.code === 'ENOENT') {
          reject(
            new ExecError({
              cmd: line,
              exitCode: 127,
              stderr: `${cmd}: command not found`,
              message: `${cmd} is not installed: it is needed to verify commit signatures`,
              cause: err,
            }),
          );
          return;
        }
        const timedOut = err.killed === true && err.code == null;
        reject(
          new ExecError({
            cmd: line,
            exitCode: null,
            signal: err.signal ?? null,
            timedOut,
            timeoutMs: TOOL_TIMEOUT_MS,
            stdout,
            stderr: stderr || err.message,
            cause: err,
          }),
        );
      },
    );
    // A tool that fails before reading its input closes the pipe; the exit status says why.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return (lines[lines.length - 1] ?? 'no output').trim();
}
