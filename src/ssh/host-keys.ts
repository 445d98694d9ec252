/**
 * Host keys pinned on first use. The first connection to an address records the key's
 * fingerprint in a JSON file in the state dir; every later connection must present the same
 * key, or nothing is run on that host until a person checks it and removes the entry.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { StalledError, messageOf } from '../util/errors.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { hostPort } from './types.js';

export interface PinnedKey {
  algorithm: string;
  /** OpenSSH style: `SHA256:` and the unpadded base64 of the key blob's SHA-256. */
  fingerprint: string;
  firstSeen: string;
  /** The node name when pinned, for a person reading the file. */
  node?: string;
  /** The public key itself (base64 blob), so an OpenSSH known_hosts line can be written. */
  key?: string;
}

/** "address:port" → pinned key. */
export type KnownHosts = Record<string, PinnedKey>;

export interface OfferedKey {
  algorithm: string;
  fingerprint: string;
}

export type HostKeyVerdict =
  | { kind: 'match' }
  | { kind: 'pinned'; entry: PinnedKey }
  | { kind: 'changed'; pinned: PinnedKey; offered: OfferedKey };

/**
 * How OpenSSH names a host in known_hosts: the bare address on port 22, `[address]:port` on
 * any other port (IPv4 and IPv6 alike). Another spelling is never matched by ssh.
 */
export function knownHostsName(address: string, port: number): string {
  return port === 22 ? address : `[${address}]:${port}`;
}

/** The fingerprint `ssh-keygen -l -E sha256` prints for a key blob. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type a key blob starts with (an SSH string: uint32 length, then the name). */
export function algorithmOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  if (len === 0 || len > 64 || blob.length < 4 + len) return 'unknown';
  return blob.subarray(4, 4 + len).toString('latin1');
}

/**
 * Host key algorithms to negotiate for a pinned key type. Offering only these keeps a server
 * with several keys from presenting another one (and looking changed) when preferences differ.
 */
export function negotiationFor(keyType: string): string[] | undefined {
  if (keyType === 'ssh-rsa') return ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];
  if (/^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521))$/.test(keyType)) return [keyType];
  return undefined;
}

// Writers in this process queue per file, so two hosts pinned at once both end up in it.
const queues = new Map<string, Promise<unknown>>();

function serialized<T>(file: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(file) ?? Promise.resolve();
  const next = previous.then(work, work);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  queues.set(file, settled);
  void settled.then(() => {
    if (queues.get(file) === settled) queues.delete(file);
  });
  return next;
}

export class HostKeyStore {
  constructor(
    readonly file: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async read(): Promise<KnownHosts> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new StalledError(
        'KNOWN_HOSTS_UNREADABLE',
        `cannot read the pinned host keys ${this.file}: ${messageOf(err)}`,
        { cause: err },
      );
    }
    return parseKnownHosts(this.file, text);
  }

  async lookup(address: string, port: number): Promise<PinnedKey | undefined> {
    return (await this.read())[hostPort(address, port)];
  }

  /** Compares an offered key with the pin for address:port, pinning it if there is none yet. */
  verify(address: string, port: number, node: string, blob: Buffer): Promise<HostKeyVerdict> {
    const id = hostPort(address, port);
    const offered: OfferedKey = { algorithm: algorithmOf(blob), fingerprint: fingerprintOf(blob) };
    return serialized(this.file, async () => {
      // Read again under the queue: another connection may have pinned it a moment ago.
      const hosts = await this.read();
      const pinned = hosts[id];
      if (pinned) {
        const same =
          pinned.fingerprint === offered.fingerprint && pinned.algorithm === offered.algorithm;
        return same ? { kind: 'match' } : { kind: 'changed', pinned, offered };
      }
      const entry: PinnedKey = {
        ...offered,
        firstSeen: this.now().toISOString(),
        node,
        key: blob.toString('base64'),
      };
      hosts[id] = entry;
      const sorted = Object.fromEntries(
        Object.entries(hosts).sort(([a], [b]) => a.localeCompare(b)),
      );
      await writeFileAtomic(this.file, `${JSON.stringify(sorted, null, 2)}\n`, 0o600);
      return { kind: 'pinned', entry };
    });
  }
}

function parseKnownHosts(file: string, text: string): KnownHosts {
  const invalid = (why: string): StalledError =>
    new StalledError(
      'KNOWN_HOSTS_INVALID',
      `the pinned host keys ${file} are not valid (${why}); fix or remove the file`,
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err: unknown) {
    throw invalid(messageOf(err));
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw invalid('not a JSON object');
  }
  const hosts: KnownHosts = {};
  for (const [id, value] of Object.entries(data as Record<string, unknown>)) {
    const v = value as Partial<Record<keyof PinnedKey, unknown>> | null;
    if (
      typeof v !== 'object' ||
      v === null ||
      typeof v.algorithm !== 'string' ||
      typeof v.fingerprint !== 'string' ||
      typeof v.firstSeen !== 'string'
    ) {
      throw invalid(`entry ${JSON.stringify(id)} needs algorithm, fingerprint and firstSeen`);
    }
    const entry: PinnedKey = {
      algorithm: v.algorithm,
      fingerprint: v.fingerprint,
      firstSeen: v.firstSeen,
    };
    if (typeof v.node === 'string') entry.node = v.node;
    if (typeof v.key === 'string') entry.key = v.key;
    hosts[id] = entry;
  }
  return hosts;
}
