/**
 * The age half of SOPS: a file's data key is encrypted for each age recipient (armored, in
 * `sops.age[].enc`), and Debian's `age` unwraps it. The identities go to age on its stdin
 * (`-i -`), so no key is ever written to disk and none appears in argv; the wrapped data key
 * (ciphertext, not a secret) goes through a temporary file, as age reads only one stream.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StalledError } from '../util/errors.js';

const AGE_TIMEOUT_MS = 30_000;

/** The AGE-SECRET-KEY-1… lines of a text (a key file, or a Secret's .agekey values). */
export function ageIdentities(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => /^AGE-SECRET-KEY-1[0-9A-Z]+$/.test(l));
}

/**
 * The data key, from the first stanza one of the identities opens; undefined when none does.
 * `age` not installed is an error of its own (SOPS_AGE_MISSING).
 */
export async function unwrapDataKey(
  stanzas: ReadonlyArray<{ enc: string }>,
  identities: readonly string[],
  ageBinary = 'age',
): Promise<Buffer | undefined> {
  if (!identities.length) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'bpa-sops-'));
  try {
    for (const [i, s] of stanzas.entries()) {
      const file = join(dir, `${i}.age`);
      await writeFile(file, s.enc);
      const key = await runAge(ageBinary, file, identities.join('\n') + '\n');
      if (key?.length === 32) return key;
    }
    return undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function runAge(binary: string, file: string, identities: string): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['-d', '-i', '-', file], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), AGE_TIMEOUT_MS);
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.resume();
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === 'ENOENT')
        reject(
          new StalledError(
            'SOPS_AGE_MISSING',
            `cannot decrypt the site's SOPS files: the age program (${binary}) is not installed; install Debian's age package`,
          ),
        );
      else reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? Buffer.concat(out) : undefined);
    });
    // age may exit before reading everything (a bad header): a broken pipe is its answer, not ours.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(identities);
  });
}
