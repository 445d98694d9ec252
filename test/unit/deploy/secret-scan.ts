/**
 * Text that looks like a credential: private keys, well-known token formats, and long
 * random-looking strings. Used on deploy/ so that an example never turns into a real secret.
 */
const SHAPES: ReadonlyArray<readonly [string, RegExp]> = [
  ['a PEM private key', /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/],
  ['an OpenSSH private key body', /b3BlbnNzaC1rZXktdjE/],
  ['a GitHub token', /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})/],
  ['a GitLab token', /\bglpat-[A-Za-z0-9_-]{20,}/],
  ['an AWS access key', /\bAKIA[0-9A-Z]{16}\b/],
  ['a Slack token', /\bxox[abprs]-[A-Za-z0-9-]{10,}/],
  ['a JSON web token', /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}/],
];

/** One run of base64/hex characters at least this long, mixing cases and digits, is suspect. */
const RANDOM_RUN = /[A-Za-z0-9+/_=-]{32,}/g;

export function secretLookalikes(text: string): string[] {
  const found: string[] = [];
  for (const [what, shape] of SHAPES) if (shape.test(text)) found.push(what);
  for (const run of text.match(RANDOM_RUN) ?? []) {
    if (/[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run))
      found.push(`a random-looking string ${run.slice(0, 6)}…`);
  }
  return found;
}
