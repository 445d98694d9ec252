/**
 * The artifact store: OS images, Debian packages and other files uploaded to `bpa serve`,
 * kept in the state volume by content (`blobs/sha256/<hex>`), with one small JSON record per
 * name (`meta/<kind>/<name>.json`). An upload streams to `tmp/` while it is hashed, and only
 * a body whose sha256 is the one announced is renamed into place: a reader sees the old
 * artifact or the new one, never a part, and a cut-off or wrong upload leaves nothing. The
 * same content under two names, or uploaded twice, is stored once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { NotADebError, readDebControl, type DebControl } from './deb-control.js';
import { ARTIFACT_KINDS, isArtifactKind, nameProblem, type ArtifactKind } from './names.js';

export interface ArtifactMeta {
  kind: ArtifactKind;
  name: string;
  size: number;
  sha256: string;
  /**
   * For metal3's `image.checksumType: md5` and the `.md5sum` file: computed at upload for
   * packages (apt's index lists it), for other kinds when first asked for (md5Of), since a
   * second hash over a large image would halve the upload rate.
   */
  md5?: string;
  /** ISO 8601, when this content was stored under this name. */
  uploadedAt: string;
  /** The control data of a package (kind `packages`). */
  deb?: DebControl;
}

/** Why an upload was refused; the HTTP layer maps `reason` to a status. */
export class UploadError extends Error {
  override readonly name = 'UploadError';
  constructor(
    readonly reason: 'checksum' | 'too-large' | 'invalid' | 'aborted' | 'no-space',
    message: string,
  ) {
    super(message);
  }
}

export interface PutResult {
  /** `unchanged`: this name held this content already (HTTP 200); otherwise 201. */
  outcome: 'created' | 'replaced' | 'unchanged';
  meta: ArtifactMeta;
  /**
   * The artifact is stored, but what is derived from the store (the apt index: `onChange`)
   * could not be updated: why. It is tried again at the next change and when the store opens.
   */
  notDerived?: string;
}

export interface StoreOptions {
  now?: () => Date;
  /** Called (awaited) after every change of a kind's contents, under the store's lock. */
  onChange?: (kind: ArtifactKind, store: ArtifactStore) => Promise<void>;
  /** Told about records skipped at open (unreadable, or naming a missing blob). */
  warn?: (message: string) => void;
  /**
   * Told when `onChange` failed after a change was stored (a full disk while the apt index was
   * signed): the change stands, and what is derived from the store is stale until the next one.
   */
  error?: (message: string) => void;
}

export class ArtifactStore {
  private readonly metas = new Map<string, ArtifactMeta>();
  /** Blobs an upload in progress counts on: never collected meanwhile. */
  private readonly pinned = new Map<string, number>();
  /** md5 computations in progress, by content. */
  private readonly hashing = new Map<string, Promise<string | undefined>>();
  /** Kinds whose `onChange` failed: run again with the next change of any kind. */
  private readonly stale = new Set<ArtifactKind>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;

  private constructor(
    readonly dir: string,
    private readonly opts: StoreOptions,
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  /**
   * Opens (creating) the store under `dir`: uploads a previous process left half way are
   * removed, and blobs no name refers to any more are collected.
   */
  static async open(dir: string, opts: StoreOptions = {}): Promise<ArtifactStore> {
    const store = new ArtifactStore(dir, opts);
    await mkdir(store.tmpDir, { recursive: true, mode: 0o700 });
    await mkdir(store.blobDir, { recursive: true, mode: 0o755 });
    for (const kind of ARTIFACT_KINDS)
      await mkdir(join(dir, 'meta', kind), { recursive: true, mode: 0o755 });
    // A linked directory would put what is stored, and what is served, elsewhere on the machine.
    for (const sub of [
      'tmp',
      'blobs',
      'blobs/sha256',
      'meta',
      ...ARTIFACT_KINDS.map((k) => `meta/${k}`),
    ])
      if ((await lstat(join(dir, sub))).isSymbolicLink())
        throw new Error(
          `${join(dir, sub)} is a symbolic link: bpa keeps only its own directories and files in the artifact store`,
        );
    for (const entry of await readdir(store.tmpDir))
      await rm(join(store.tmpDir, entry), { force: true });
    for (const kind of ARTIFACT_KINDS) {
      const kindDir = join(dir, 'meta', kind);
      for (const file of await readdir(kindDir)) {
        if (!file.endsWith('.json')) continue;
        if ((await lstat(join(kindDir, file))).isSymbolicLink()) {
          opts.warn?.(`artifact record ${kind}/${file} is a symbolic link; skipped`);
          continue;
        }
        const meta = await readMeta(join(kindDir, file));
        const ok =
          meta &&
          meta.kind === kind &&
          `${meta.name}.json` === file &&
          (await isFile(store.blobPath(meta.sha256)));
        if (ok) store.metas.set(key(kind, meta.name), meta);
        else
          opts.warn?.(
            `artifact record ${kind}/${file} is unreadable or its content is missing; skipped`,
          );
      }
    }
    const used = new Set([...store.metas.values()].map((m) => m.sha256));
    for (const blob of await readdir(store.blobDir))
      if (!used.has(blob)) await rm(join(store.blobDir, blob), { force: true });
    for (const kind of ARTIFACT_KINDS) await opts.onChange?.(kind, store);
    return store;
  }

  private get tmpDir(): string {
    return join(this.dir, 'tmp');
  }
  private get blobDir(): string {
    return join(this.dir, 'blobs', 'sha256');
  }
  blobPath(sha256: string): string {
    return join(this.blobDir, sha256);
  }
  private metaPath(kind: ArtifactKind, name: string): string {
    return join(this.dir, 'meta', kind, `${name}.json`);
  }

  /** Every artifact, by kind and then name. */
  list(kind?: ArtifactKind): ArtifactMeta[] {
    return [...this.metas.values()]
      .filter((m) => kind === undefined || m.kind === kind)
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  }

  get(kind: ArtifactKind, name: string): ArtifactMeta | undefined {
    return this.metas.get(key(kind, name));
  }

  /**
   * Whether an artifact's content is a regular file in the store. A symbolic link put there
   * by hand is not its content: the artifact is then served as missing, and so is everything
   * bpa derives from it (checksum files, md5, its entry in the apt index).
   */
  hasContent(meta: ArtifactMeta): Promise<boolean> {
    return isFile(this.blobPath(meta.sha256));
  }

  /** Like list, but only the artifacts whose content is a regular file in the store. */
  async listStored(kind?: ArtifactKind): Promise<ArtifactMeta[]> {
    const all = this.list(kind);
    const ok = await Promise.all(all.map((m) => this.hasContent(m)));
    return all.filter((_, i) => ok[i]);
  }

  /**
   * Stores `body` as `kind/name` if its sha256 is `sha256` and it is at most `maxBytes` long
   * (and, for packages, a Debian package). Throws UploadError otherwise, leaving nothing.
   */
  async put(
    kind: ArtifactKind,
    name: string,
    body: Readable,
    expect: { sha256: string; maxBytes: number },
  ): Promise<PutResult> {
    const problem = nameProblem(kind, name);
    if (problem) throw new UploadError('invalid', `${kind}/${name}: ${problem}`);
    this.pin(expect.sha256);
    let tmp: string | undefined;
    let staged: string | undefined;
    /** A commit that failed: it may have put content in place before its record failed. */
    let commitFailed = false;
    try {
      // Content already stored is only hashed, not written again.
      tmp = (await isFile(this.blobPath(expect.sha256)))
        ? undefined
        : join(this.tmpDir, `${randomBytes(8).toString('hex')}.part`);
      const got = await receive(body, tmp, expect.maxBytes, kind === 'packages');
      if (got.sha256 !== expect.sha256)
        throw new UploadError(
          'checksum',
          `the body's sha256 is ${got.sha256}, not ${expect.sha256} as X-Checksum-Sha256 says; nothing was stored`,
        );
      let deb: DebControl | undefined;
      if (kind === 'packages') {
        try {
          deb = await readDebControl(tmp ?? this.blobPath(got.sha256));
        } catch (err: unknown) {
          if (err instanceof NotADebError)
            throw new UploadError('invalid', `${name}: ${err.message}`);
          throw err;
        }
      }
      staged = tmp;
      tmp = undefined;
      const toPlace = staged;
      return await this.locked(() =>
        this.commit(kind, name, got, toPlace, deb).catch((err: unknown) => {
          commitFailed = true;
          throw err;
        }),
      );
    } catch (err: unknown) {
      throw outOfSpace(err, this.dir, `${kind}/${name}`) ?? err;
    } finally {
      if (tmp) await rm(tmp, { force: true });
      this.unpin(expect.sha256);
      // Content staged or put in place for a record that could not be written is no one's.
      if (commitFailed) {
        if (staged) await rm(staged, { force: true });
        await this.locked(() => this.collect(expect.sha256)).catch(() => undefined);
      }
    }
  }

  private async commit(
    kind: ArtifactKind,
    name: string,
    got: { sha256: string; md5?: string; size: number },
    staged: string | undefined,
    deb: DebControl | undefined,
  ): Promise<PutResult> {
    const blob = this.blobPath(got.sha256);
    // Whether the content was put (back) in place: missing, or a link put there by hand.
    let placed = false;
    if (staged) {
      if (await isFile(blob)) await rm(staged, { force: true });
      else {
        await rename(staged, blob);
        await syncDir(this.blobDir);
        placed = true;
      }
    }
    const prev = this.metas.get(key(kind, name));
    if (prev && prev.sha256 === got.sha256) {
      // The name is served again: what is derived from the store (the apt index) includes it.
      const notDerived = placed ? await this.changed(kind) : undefined;
      return { outcome: 'unchanged', meta: prev, ...(notDerived ? { notDerived } : {}) };
    }
    const meta: ArtifactMeta = {
      kind,
      name,
      size: got.size,
      sha256: got.sha256,
      ...(got.md5 ? { md5: got.md5 } : {}),
      uploadedAt: this.now().toISOString(),
      ...(deb ? { deb } : {}),
    };
    await writeFileAtomic(this.metaPath(kind, name), `${JSON.stringify(meta, null, 2)}\n`, 0o644);
    this.metas.set(key(kind, name), meta);
    // The artifact is stored from here on: nothing after this fails the upload, which would
    // tell the client nothing was stored (and undo nothing: the old content is gone).
    if (prev) await this.collectAfter(prev.sha256);
    const notDerived = await this.changed(kind);
    return { outcome: prev ? 'replaced' : 'created', meta, ...(notDerived ? { notDerived } : {}) };
  }

  /**
   * Runs `onChange` for `kind` and for every kind whose last one failed. A failure leaves the
   * change stored, is told (`error`) and returned for `kind`, and is tried again next time.
   */
  private async changed(kind: ArtifactKind): Promise<string | undefined> {
    const onChange = this.opts.onChange;
    if (!onChange) return undefined;
    let failure: string | undefined;
    for (const k of new Set([kind, ...this.stale])) {
      try {
        await onChange(k, this);
        this.stale.delete(k);
      } catch (err: unknown) {
        this.stale.add(k);
        const why = err instanceof Error ? err.message : String(err);
        this.opts.error?.(
          `the ${k} are stored, but what is derived from them (the apt index) is not updated: ${why}; tried again at the next change and when bpa serve starts`,
        );
        if (k === kind) failure = why;
      }
    }
    return failure;
  }

  /** `collect` once a change is stored: a blob left over is removed when the store opens. */
  private async collectAfter(sha256: string): Promise<void> {
    try {
      await this.collect(sha256);
    } catch (err: unknown) {
      this.opts.error?.(
        `blob ${sha256} is no one's but was not removed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Removes `kind/name`; false when there is no such artifact. */
  async delete(kind: ArtifactKind, name: string): Promise<boolean> {
    return this.locked(async () => {
      const prev = this.metas.get(key(kind, name));
      if (!prev) return false;
      await rm(this.metaPath(kind, name), { force: true });
      await syncDir(join(this.dir, 'meta', kind));
      this.metas.delete(key(kind, name));
      await this.collectAfter(prev.sha256);
      await this.changed(kind);
      return true;
    });
  }

  /**
   * The md5 of an artifact, computed from its content the first time it is asked for and kept
   * in its record; undefined when there is no such artifact (any more), or its content is not
   * a regular file (a link is never followed, and nothing is recorded of it).
   */
  async md5Of(kind: ArtifactKind, name: string): Promise<string | undefined> {
    const meta = this.metas.get(key(kind, name));
    if (!meta) return undefined;
    if (meta.md5) return meta.md5;
    let pending: Promise<string | undefined> | undefined = this.hashing.get(meta.sha256);
    if (!pending) {
      pending = md5File(this.blobPath(meta.sha256));
      this.hashing.set(meta.sha256, pending);
      void pending.finally(() => this.hashing.delete(meta.sha256)).catch(() => undefined);
    }
    const md5 = await pending;
    if (md5 === undefined) return undefined;
    await this.locked(async () => {
      const now = this.metas.get(key(kind, name));
      if (!now || now.sha256 !== meta.sha256 || now.md5) return;
      const next = { ...now, md5 };
      try {
        await writeFileAtomic(
          this.metaPath(kind, name),
          `${JSON.stringify(next, null, 2)}\n`,
          0o644,
        );
      } catch (err: unknown) {
        // Only a cache: on a full disk the md5 is answered unrecorded, and computed again next time.
        const full = outOfSpace(err, this.dir, `${kind}/${name}`);
        if (!full) throw err;
        this.opts.warn?.(`the md5 of ${kind}/${name} is not recorded: ${full.message}`);
        return;
      }
      this.metas.set(key(kind, name), next);
    });
    return md5;
  }

  /** Waits for changes in progress (their onChange included). */
  async idle(): Promise<void> {
    await this.locked(async () => undefined);
  }

  private async collect(sha256: string): Promise<void> {
    if (this.pinned.has(sha256)) return;
    for (const m of this.metas.values()) if (m.sha256 === sha256) return;
    await rm(this.blobPath(sha256), { force: true });
  }

  private pin(sha: string): void {
    this.pinned.set(sha, (this.pinned.get(sha) ?? 0) + 1);
  }
  private unpin(sha: string): void {
    const n = (this.pinned.get(sha) ?? 1) - 1;
    if (n > 0) this.pinned.set(sha, n);
    else this.pinned.delete(sha);
  }

  /** Changes run one at a time, so records, blobs and the apt index agree. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

const key = (kind: ArtifactKind, name: string): string => `${kind}/${name}`;

/**
 * A full volume (ENOSPC: no space or no free inodes) or a used-up disk quota (EDQUOT) met while
 * storing `what`, as an UploadError saying which and where; undefined for any other error.
 */
export function outOfSpace(err: unknown, dir: string, what: string): UploadError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const ran =
    code === 'ENOSPC'
      ? `no space left on the device of the artifact store ${dir} (ENOSPC)`
      : code === 'EDQUOT'
        ? `the disk quota of the artifact store ${dir} is used up (EDQUOT)`
        : undefined;
  if (!ran) return undefined;
  return new UploadError(
    'no-space',
    `${ran} while storing ${what}; nothing was stored: free space there or give the state volume more`,
  );
}

/** Streams `body` to `file` (or only through the hashes), counting and hashing as it goes. */
async function receive(
  body: Readable,
  file: string | undefined,
  maxBytes: number,
  withMd5: boolean,
): Promise<{ sha256: string; md5?: string; size: number }> {
  const sha = createHash('sha256');
  const md5 = withMd5 ? createHash('md5') : undefined;
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) {
        done(
          new UploadError('too-large', `the body is larger than the limit of ${maxBytes} bytes`),
        );
        return;
      }
      sha.update(chunk);
      md5?.update(chunk);
      done(null, file ? chunk : undefined);
    },
  });
  try {
    if (file) {
      await pipeline(body, meter, createWriteStream(file, { flags: 'wx', mode: 0o644 }));
      // On disk before it is renamed into place: a power cut never leaves a short blob.
      const fh = await open(file, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    } else {
      await pipeline(body, meter, new Writable({ write: (_c, _e, done) => done() }));
    }
  } catch (err: unknown) {
    // A failing disk (ENOSPC, EIO) is bpa's problem, not the client's: it is thrown as is.
    if (err instanceof UploadError || (err as NodeJS.ErrnoException).syscall) throw err;
    throw new UploadError(
      'aborted',
      `the upload ended before its body was complete (${(err as Error).message})`,
    );
  }
  return { sha256: sha.digest('hex'), ...(md5 ? { md5: md5.digest('hex') } : {}), size };
}

/** The md5 of a regular file; undefined when `path` is a symbolic link or not a file. */
async function md5File(path: string): Promise<string | undefined> {
  const fh = await openNoFollow(path);
  if (!fh) return undefined;
  try {
    const h = createHash('md5');
    for await (const chunk of fh.createReadStream({ autoClose: false })) h.update(chunk as Buffer);
    return h.digest('hex');
  } finally {
    await fh.close();
  }
}

/** `path` opened for reading if it is a regular file itself, not a link to one. */
async function openNoFollow(path: string): Promise<FileHandle | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err: unknown) {
    // ELOOP: a symbolic link; ENOENT: gone meanwhile.
    if (['ELOOP', 'ENOENT'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
  if ((await fh.stat()).isFile()) return fh;
  await fh.close();
  return undefined;
}

async function readMeta(file: string): Promise<ArtifactMeta | undefined> {
  try {
    const fh = await openNoFollow(file);
    if (!fh) return undefined;
    let text: string;
    try {
      text = await fh.readFile('utf8');
    } finally {
      await fh.close();
    }
    const meta = JSON.parse(text) as ArtifactMeta;
    if (
      !isArtifactKind(meta.kind) ||
      nameProblem(meta.kind, meta.name) ||
      !/^[0-9a-f]{64}$/.test(meta.sha256) ||
      !Number.isSafeInteger(meta.size)
    )
      return undefined;
    return meta;
  } catch {
    return undefined;
  }
}

/** A regular file itself, not a link to one: the store holds only what was uploaded to it. */
async function isFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch {
    return false;
  }
}

async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
