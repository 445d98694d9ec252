/**
 * Masks what must never leave the state directory: private keys, bearer and basic
 * credentials, `password=…`-style values, well-known token shapes, random-looking blobs (a
 * key's base64 body even when the excerpt cut its BEGIN line) and URL credentials. Used on
 * every text that goes to git, the status API or a log line; full installer logs stay
 * unredacted in the state directory. Every pattern is bounded, so a long line costs linear
 * time.
 */
export function redact(text: string): string {
  let out = sanitize(text);
  out = out.replace(KEY_BLOCK, MASK_KEY);
  if (out.includes('-----END')) out = out.replace(KEY_TAIL, MASK_KEY);
  out = out.replace(KEY_LINE, MASK_KEY);
  out = out.replace(AUTH_HEADER, (_m, name: string, sep: string) => `${name}${sep}${MASK}`);
  out = out.replace(BEARER, `Bearer ${MASK}`);
  out = out.replace(BASIC, (m, value: string) => (/[A-Z0-9=]/.test(value) ? `Basic ${MASK}` : m));
  out = out.replace(HERE_STRING, `$1${MASK}`);
  // `--password-stdin` reads the password: what follows it is another argument.
  out = out.replace(FLAG_VALUE, (m, flag: string, sep: string) =>
    /stdin$/i.test(flag) ? m : `${flag}${sep}${MASK}`,
  );
  out = out.replace(NAMED_VALUE, (_m, name: string, sep: string) => `${name}${sep}${MASK}`);
  out = out.replace(SHORT_PASSWORD, (_m, command: string, rest: string) => {
    // `mysql -p db` asks for the password and names a database: only `-pX` is one.
    const attached = /^(?:mysql|mariadb)/i.test(command);
    return command + rest.replace(attached ? ATTACHED_P : SPACED_P, `$1${MASK}`);
  });
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, MASK);
  out = out.replace(BLOB, (m) => (looksRandom(m) ? MASK : m));
  return out;
}

const MASK = '***';

/**
 * Only the credentials of URLs removed (`https://user:token@host` → `https://***@host`): for
 * error messages and command lines, which must stay readable. Linear on any input.
 */
export function sanitize(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1***@');
}

/**
 * `sanitize`, and every occurrence of the given secrets masked: for the full output of a
 * program bpa handed those secrets to (an installer's log, which stays in the state directory).
 */
export function masker(secrets: readonly string[]): (text: string) => string {
  const masked = secrets.filter((s) => s.length > 0);
  return (text) => masked.reduce((out, s) => out.split(s).join(MASK), sanitize(text));
}

/** `https://user:token@host` → `https://***@host` (bounded: linear on any input). */
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]{0,31}:\/\/)[^/@\s]{1,512}@/gi;
const MASK_KEY = '[private key redacted]';

/** A whole key block, or one whose END line is cut off (it runs to the end of the text). */
const KEY_BLOCK = new RegExp(
  `-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\\s\\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$(?![\\s\\S]))`,
  'g',
);
/** The end of a block whose BEGIN line was cut off: the base64 lines before the END line. */
const KEY_TAIL =
  /(?:[A-Za-z0-9+/=]{4,100}[ \t\r\n|]{1,8}){0,80}-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/g;
/** A BEGIN or END line alone. */
const KEY_LINE = /-----(?:BEGIN|END) [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/g;

const SENSITIVE =
  '[A-Za-z0-9_.-]{0,64}(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]{0,64}';
/** `Authorization: Bearer x`, `X-Auth-Token: x`, `Cookie: x`: the value up to a quote or the line's end. */
const AUTH_HEADER =
  /\b((?:proxy-)?authorization|cookie|set-cookie|x-[a-z-]*token)(\s*[:=]\s*)[^\r\n|'"]+/gi;
/** `Bearer x` / `Basic x` anywhere else (a curl command line, a quoted header). */
const BEARER = /\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi;
const BASIC = /\bBasic\s+([A-Za-z0-9+/]{8,}={0,2})/g;
/**
 * A value: quoted, or up to whitespace or a quote (a password may hold `&`, `|`, `;` or `,`:
 * better a separator masked with it than the end of a password kept).
 */
const VALUE = `("[^"]*"|'[^']*'|[^\\s"']+)`;
/**
 * `--password x`, `--token=x`, and in a command printed as a list (Ansible's `"cmd": [...]`
 * in JSON, Python's repr): `"--password", "x"`; `-e ansible_password=x` via NAMED_VALUE.
 */
const FLAG_VALUE = new RegExp(`(--${SENSITIVE})(=|\\s+|["'],\\s*)${VALUE}`, 'gi');
/** `docker login --password-stdin <<< x`, `passwd --stdin root <<< x`: the here-string. */
const HERE_STRING = new RegExp(
  `(--(?:[A-Za-z0-9_.-]{0,64}-)?stdin\\b[^\\r\\n<|;&]{0,256}?<<<\\s*)${VALUE}`,
  'gi',
);
/** `password=x`, `password: x`, `"client_secret": "x"`, `ANSIBLE_BECOME_PASS=x`, `SSHPASS=x`. */
const NAMED_VALUE = new RegExp(
  `\\b(${SENSITIVE}|[A-Za-z0-9_]{0,64}_PASS|SSHPASS)(["']?\\s*[:=]\\s*)${VALUE}`,
  'gi',
);
/**
 * Commands whose `-p` is a password, not a port: `docker login -u admin -p x` (any
 * `… login`: podman, helm, skopeo), `sshpass -p x`, `mysql -px`; up to the end of the command
 * (`|`, `;`, `&` followed by a space or another of them: one inside a password is not an end).
 */
const SHORT_PASSWORD =
  /\b(sshpass|mysql[a-z]{0,16}|mariadb[a-z]{0,16}|login)\b((?:[^\r\n|;&]|[|;&](?![\s|;&]|$)){0,512})/gi;
/**
 * ` -p x`, ` -p=x`, ` -px`, and in a list: `"-p", "x"`, `'-p', 'x'`, `"-px"` (never the quote
 * that closes a `"-p"`).
 */
const SPACED_P = new RegExp(`(\\s-p(?:=|\\s+)?|["']-p(?:["'],\\s*|=|(?!["'])))${VALUE}`, 'g');
/** ` -px`, `"-px"` only. */
const ATTACHED_P = new RegExp(`(\\s-p|["']-p(?!["']))${VALUE}`, 'g');
const TOKEN_SHAPES = [
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, // JWT (Kubernetes service account tokens)
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, // GitHub
  /\bglpat-[A-Za-z0-9_-]{20,}/g, // GitLab
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack
];
/** Candidates for random data: long runs of base64 / base64url characters. */
const BLOB = /[A-Za-z0-9+/_=.-]{24,}/g;

/**
 * Random-looking: upper case, lower case and digits mixed as in random data (base64 changes
 * between them at about 6 characters in 10; words, paths, versions and names at under 3).
 * Hex digests (no upper case), paths, file names and task names stay readable.
 */
function looksRandom(s: string): boolean {
  if (!/[a-z]/.test(s) || !/[A-Z]/.test(s) || !/[0-9+/=_-]/.test(s)) return false;
  let changes = 0;
  let counted = 0;
  let previous = '';
  for (const ch of s) {
    const kind = /[a-z]/.test(ch) ? 'l' : /[A-Z]/.test(ch) ? 'u' : /[0-9]/.test(ch) ? 'd' : '';
    if (!kind) continue;
    if (previous && kind !== previous) changes++;
    previous = kind;
    counted++;
  }
  return changes / counted >= 0.3;
}
