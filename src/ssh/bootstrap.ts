/**
 * First contact with a fresh host that only knows its default credentials: log in with the
 * password once and install bpa's public key, as ssh-copy-id does, so every later connection
 * uses the key. Safe to repeat: the key is appended only when it is not there yet.
 */
import { StalledError } from '../util/errors.js';
import { ExecError } from '../util/exec-error.js';
import { command } from '../util/shell-quote.js';
import { connect } from './connect.js';
import { execOnConnection } from './exec.js';
import { HostKeyStore } from './host-keys.js';
import { failure } from './pool.js';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  describeTarget,
  type SshOptions,
  type SshTarget,
} from './types.js';

export interface BootstrapCredentials {
  username?: string;
  password: string;
}

const BOOTSTRAP_TIMEOUT_MS = 60_000;

// The key arrives on stdin, not in argv: the command line then holds no key and can appear in
// errors as it is. A key already present with other options or another comment counts as present.
const INSTALL_KEY_SCRIPT = `set -e
umask 077
ktype= kblob= krest=
read -r ktype kblob krest || true
if [ -z "$ktype" ] || [ -z "$kblob" ]; then echo "bpa: no public key on stdin" >&2; exit 2; fi
dir="$HOME/.ssh"
file="$dir/authorized_keys"
mkdir -p "$dir"
chmod 700 "$dir"
[ -f "$file" ] || : > "$file"
chmod 600 "$file"
if awk -v t="$ktype" -v b="$kblob" '{ for (i = 1; i < NF; i++) if ($i == t && $(i + 1) == b) f = 1 } END { exit f ? 0 : 1 }' "$file"; then
  echo present
  exit 0
fi
if [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ]; then echo >> "$file"; fi
printf '%s\\n' "$ktype $kblob\${krest:+ $krest}" >> "$file"
echo installed
`;

/** How the install command appears in errors: the script itself is long and always the same. */
const DISPLAY_CMD = "sh -c '<install bpa key in ~/.ssh/authorized_keys>'";

const PUBLIC_KEY =
  /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,2}( [^\r\n]*)?$/;

export async function bootstrapKey(
  target: SshTarget,
  credentials: BootstrapCredentials,
  publicKey: string,
  opts: SshOptions,
): Promise<'installed' | 'present'> {
  const where = describeTarget(target);
  const key = publicKey.trim();
  if (!PUBLIC_KEY.test(key)) {
    throw new StalledError(
      'SSH_PUBLIC_KEY_INVALID',
      `bpa's public key for ${where} is not one OpenSSH public key line (type, base64, optional comment)`,
    );
  }
  const user = credentials.username ?? target.user;
  if (user !== target.user) {
    // The key would land in another user's home and the key login as target.user would still fail.
    throw new StalledError(
      'BOOTSTRAP_USER_MISMATCH',
      `${where}: the bootstrap credentials are for user ${user}, but bpa logs in as ${target.user}`,
    );
  }
  const cmd = command(['sh', '-c', INSTALL_KEY_SCRIPT]);
  const conn = await connect(
    target,
    { kind: 'password', password: credentials.password },
    {
      store: new HostKeyStore(opts.knownHostsFile),
      connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      cmd: DISPLAY_CMD,
    },
  );
  try {
    const result = await execOnConnection(conn, cmd, {
      timeoutMs: opts.commandTimeoutMs ?? BOOTSTRAP_TIMEOUT_MS,
      stdin: `${key}\n`,
    });
    const answer = result.stdout.trim();
    const ok = result.exitCode === 0 && !result.timedOut;
    if (ok && (answer === 'installed' || answer === 'present')) return answer;
    if (ok) {
      throw new ExecError({
        cmd: DISPLAY_CMD,
        exitCode: 0,
        stdout: result.stdout,
        stderr: result.stderr,
        host: target.node,
        code: 'BOOTSTRAP_FAILED',
        retry: 'stalled',
        message: `${where}: installing bpa's key gave an unexpected answer (is the login shell POSIX?)`,
      });
    }
    throw failure(target, DISPLAY_CMD, opts.commandTimeoutMs ?? BOOTSTRAP_TIMEOUT_MS, result);
  } finally {
    await conn.close();
  }
}
