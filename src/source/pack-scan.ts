/**
 * Reads a pack file received from a server without holding it in memory: every entry is
 * inflated once to learn its object id, small objects in memory, large ones (over
 * IN_MEMORY_MAX) a chunk at a time; deltas are resolved against their bases, through temporary
 * files when base or result is large. Afterwards any entry's content can be had again, as a
 * buffer (small) or a file (large), so the caller keeps only what it needs.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInflate, inflateSync } from 'node:zlib';
import { applyDelta, applyDeltaInMemory, deltaSizes, fileBase, bufferBase } from './delta.js';

/** Objects up to this size are handled in memory; larger ones are streamed through files. */
export const IN_MEMORY_MAX = 1024 * 1024;
/** Resolved small objects kept for later deltas against them. */
const CACHE_BYTES = 32 * 1024 * 1024;
/** Compressed bytes handed to zlib at a time when streaming a large object. */
const STREAM_CHUNK = 64 * 1024;

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';
const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

export interface PackEntry {
  /** Where the entry (its header) starts in the pack. */
  offset: number;
  /** Where its compressed data ends: the next entry's offset. */
  end: number;
  /** The pack's type number: 1–4 an object, 6 ofs-delta, 7 ref-delta. */
  kind: number;
  /** Inflated size of the entry's data (for a delta: of the delta). */
  size: number;
  dataStart: number;
  baseOffset?: number;
  baseOid?: string;
  /** Filled in by the scan. */
  type?: ObjectType;
  oid?: string;
  objectSize?: number;
}

/** An object's content: in memory when small, else a file of the raw content. */
export interface Content {
  type: ObjectType;
  size: number;
  data?: Buffer;
  file?: string;
}

export class PackScan {
  readonly entries: PackEntry[] = [];
  readonly byOid = new Map<string, PackEntry>();
  private readonly byOffset = new Map<number, PackEntry>();
  /** Commits, trees and tags: small, and needed whole by the caller. */
  private readonly kept = new Map<number, Buffer>();
  private readonly cache = new Map<number, Buffer>();
  private cacheBytes = 0;
  private readonly files = new Map<number, string>();
  private tmpDir: string | undefined;
  private fileCount = 0;
  private readonly fd: number;
  private readonly fileSize: number;

  private constructor(private readonly path: string) {
    this.fd = openSync(path, 'r');
    this.fileSize = fstatSync(this.fd).size;
  }

  /** Scans `path` (a complete pack, checksum already verified); `close()` when done. */
  static async open(path: string): Promise<PackScan> {
    const scan = new PackScan(path);
    try {
      await scan.scan();
      return scan;
    } catch (err: unknown) {
      await scan.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    closeSync(this.fd);
    if (this.tmpDir) await rm(this.tmpDir, { recursive: true, force: true });
  }

  /** The content of a scanned entry (resolving deltas again if it is no longer cached). */
  async content(e: PackEntry): Promise<Content> {
    return this.resolve(e);
  }

  /** The raw bytes of an entry as stored (header and compressed data). */
  raw(e: PackEntry): Buffer {
    return this.read(e.offset, e.end - e.offset);
  }

  private async scan(): Promise<void> {
    const head = this.read(0, 12);
    if (head.subarray(0, 4).toString('latin1') !== 'PACK') throw new Error('not a git pack');
    const version = head.readUInt32BE(4);
    if (version !== 2 && version !== 3) throw new Error(`unsupported pack version ${version}`);
    const count = head.readUInt32BE(8);
    let pos = 12;
    const waiting: PackEntry[] = [];
    for (let i = 0; i < count; i++) {
      const e = this.header(pos);
      this.entries.push(e);
      this.byOffset.set(e.offset, e);
      if (inMemory(e)) {
        const { data, consumed } = this.inflateSmall(e.dataStart, e.size);
        e.end = e.dataStart + consumed;
        const type = TYPES[e.kind];
        if (type) {
          this.identify(e, type, e.size, data);
          this.remember(e, data);
        } else if (!this.resolvable(e)) waiting.push(e);
        else await this.resolve(e, data);
      } else {
        const type = TYPES[e.kind];
        if (type) {
          const hash = objectHash(type, e.size);
          e.end =
            e.dataStart + (await this.inflateStream(e.dataStart, e.size, (c) => hash.update(c)));
          this.identify(e, type, e.size);
          e.oid = hash.digest('hex');
          this.byOid.set(e.oid, e);
        } else {
          const file = await this.tempFile();
          const out = openSync(file, 'w');
          try {
            const consumed = await this.inflateStream(e.dataStart, e.size, (c) =>
              writeSync(out, c),
            );
            e.end = e.dataStart + consumed;
          } finally {
            closeSync(out);
          }
          this.deltaFiles.set(e.offset, file);
          if (!this.resolvable(e)) waiting.push(e);
          else await this.resolve(e);
        }
      }
      pos = e.end;
    }
    if (pos !== this.fileSize - 20)
      throw new Error('corrupt pack: trailing data after its entries');
    // A ref-delta may name a base that comes later in the pack.
    for (let progress = true; waiting.length && progress;) {
      progress = false;
      for (let i = 0; i < waiting.length;) {
        const e = waiting[i] as PackEntry;
        if (this.resolvable(e)) {
          await this.resolve(e);
          waiting.splice(i, 1);
          progress = true;
        } else i++;
      }
    }
    if (waiting.length) {
      throw new Error(`corrupt pack: ${waiting.length} deltas refer to objects it does not hold`);
    }
  }

  /** Inflated delta data of large deltas, kept on disk. */
  private readonly deltaFiles = new Map<number, string>();

  private resolvable(e: PackEntry): boolean {
    if (e.kind === OFS_DELTA) return this.byOffset.get(e.baseOffset ?? -1)?.oid !== undefined;
    return this.byOid.has(e.baseOid ?? '');
  }

  private identify(e: PackEntry, type: ObjectType, size: number, data?: Buffer): void {
    e.type = type;
    e.objectSize = size;
    if (data) {
      e.oid = objectHash(type, size).update(data).digest('hex');
      this.byOid.set(e.oid, e);
    }
  }

  private remember(e: PackEntry, data: Buffer): void {
    if (e.type !== 'blob') {
      this.kept.set(e.offset, data);
      return;
    }
    this.cache.set(e.offset, data);
    this.cacheBytes += data.length;
    for (const [offset, old] of this.cache) {
      if (this.cacheBytes <= CACHE_BYTES) break;
      this.cache.delete(offset);
      this.cacheBytes -= old.length;
    }
  }

  /** The content of an entry; `deltaData` is its inflated data when the caller has it. */
  private async resolve(e: PackEntry, deltaData?: Buffer): Promise<Content> {
    const have = this.kept.get(e.offset) ?? this.cache.get(e.offset);
    if (have && e.type) return { type: e.type, size: have.length, data: have };
    const file = this.files.get(e.offset);
    if (file && e.type && e.objectSize !== undefined)
      return { type: e.type, size: e.objectSize, file };
    const type = TYPES[e.kind];
    if (type) {
      if (inMemory(e)) {
        const data = this.inflateSmall(e.dataStart, e.size).data;
        this.remember(e, data);
        return { type, size: e.size, data };
      }
      const out = await this.tempFile();
      const fd = openSync(out, 'w');
      try {
        await this.inflateStream(e.dataStart, e.size, (c) => writeSync(fd, c));
      } finally {
        closeSync(fd);
      }
      this.files.set(e.offset, out);
      return { type, size: e.size, file: out };
    }

    const baseEntry =
      e.kind === OFS_DELTA
        ? this.byOffset.get(e.baseOffset ?? -1)
        : this.byOid.get(e.baseOid ?? '');
    if (!baseEntry) throw new Error('corrupt pack: a delta refers to an object it does not hold');
    const base = await this.resolve(baseEntry);
    const delta: Buffer | string =
      deltaData ??
      this.deltaFiles.get(e.offset) ??
      (e.size <= IN_MEMORY_MAX
        ? this.inflateSmall(e.dataStart, e.size).data
        : await this.inflateToFile(e));
    const resultSize = deltaSizes(typeof delta === 'string' ? readHead(delta) : delta).resultSize;

    if (resultSize <= IN_MEMORY_MAX && base.data && typeof delta !== 'string') {
      const data = applyDeltaInMemory(delta, base.data);
      if (!e.oid) {
        this.identify(e, base.type, data.length, data);
      }
      this.remember(e, data);
      return { type: base.type, size: data.length, data };
    }

    const out = await this.tempFile();
    const outFd = openSync(out, 'w');
    const baseFd = base.file ? openSync(base.file, 'r') : undefined;
    const hash = objectHash(base.type, resultSize);
    try {
      const reader =
        baseFd !== undefined ? fileBase(baseFd, base.size) : bufferBase(base.data as Buffer);
      applyDelta(delta, reader, (c) => {
        hash.update(c);
        writeSync(outFd, c);
      });
    } finally {
      closeSync(outFd);
      if (baseFd !== undefined) closeSync(baseFd);
    }
    if (!e.oid) {
      e.type = base.type;
      e.objectSize = resultSize;
      e.oid = hash.digest('hex');
      this.byOid.set(e.oid, e);
    }
    this.files.set(e.offset, out);
    if (e.type !== 'blob') {
      // Large trees, commits and tags are still needed whole.
      const whole = this.readFile(out, resultSize);
      this.kept.set(e.offset, whole);
      return { type: base.type, size: resultSize, data: whole, file: out };
    }
    return { type: base.type, size: resultSize, file: out };
  }

  private async inflateToFile(e: PackEntry): Promise<string> {
    const file = await this.tempFile();
    const fd = openSync(file, 'w');
    try {
      await this.inflateStream(e.dataStart, e.size, (c) => writeSync(fd, c));
    } finally {
      closeSync(fd);
    }
    this.deltaFiles.set(e.offset, file);
    return file;
  }

  private header(pos: number): PackEntry {
    const head = this.read(pos, Math.min(64, this.fileSize - pos));
    const { kind, size, length } = entryHead(head);
    let i = length;
    const e: PackEntry = { offset: pos, end: 0, kind, size, dataStart: 0 };
    if (kind === OFS_DELTA) {
      let byte = head[i++] ?? 0;
      let back = byte & 0x7f;
      while (byte & 0x80) {
        byte = head[i++] ?? 0;
        back = (back + 1) * 128 + (byte & 0x7f);
      }
      e.baseOffset = pos - back;
    } else if (kind === REF_DELTA) {
      e.baseOid = head.subarray(i, i + 20).toString('hex');
      i += 20;
    } else if (!TYPES[kind]) {
      throw new Error(`corrupt pack: unknown entry type ${kind} at ${pos}`);
    }
    e.dataStart = pos + i;
    return e;
  }

  /** Inflates a small entry's data; returns it and how many compressed bytes it took. */
  private inflateSmall(start: number, size: number): { data: Buffer; consumed: number } {
    // zlib never grows data by more than a few bytes per 16 KiB block; retry wider if needed.
    for (let window = size + (size >> 8) + 64; ; window *= 2) {
      const len = Math.min(window, this.fileSize - 20 - start);
      const input = this.read(start, len);
      try {
        const res = inflateSync(input, { info: true, maxOutputLength: size + 1 }) as unknown as {
          buffer: Buffer;
          engine: { bytesWritten: number };
        };
        if (res.buffer.length !== size)
          throw new Error('corrupt pack: an entry has the wrong size');
        return { data: res.buffer, consumed: res.engine.bytesWritten };
      } catch (err: unknown) {
        const truncated = (err as { code?: string }).code === 'Z_BUF_ERROR';
        if (!truncated || len < window) throw err;
      }
    }
  }

  /** Inflates a large entry's data a chunk at a time into `sink`; returns the bytes it took. */
  private inflateStream(start: number, size: number, sink: (c: Buffer) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      const inflate = createInflate();
      let out = 0;
      let pos = start;
      let ended = false;
      inflate.on('data', (c: Buffer) => {
        out += c.length;
        sink(c);
      });
      inflate.on('error', reject);
      inflate.on('end', () => {
        ended = true;
        if (out !== size) reject(new Error('corrupt pack: an entry has the wrong size'));
        else resolve(inflate.bytesWritten);
      });
      const feed = (): void => {
        while (!ended && pos < this.fileSize - 20) {
          const chunk = this.read(pos, Math.min(STREAM_CHUNK, this.fileSize - 20 - pos));
          pos += chunk.length;
          if (!inflate.write(chunk)) {
            inflate.once('drain', feed);
            return;
          }
        }
        if (!ended) inflate.end();
      };
      feed();
    });
  }

  private read(pos: number, len: number): Buffer {
    const out = Buffer.allocUnsafe(len);
    let done = 0;
    while (done < len) {
      const n = readSync(this.fd, out, done, len - done, pos + done);
      if (n === 0) break;
      done += n;
    }
    return out.subarray(0, done);
  }

  private readFile(path: string, size: number): Buffer {
    const fd = openSync(path, 'r');
    try {
      const out = Buffer.allocUnsafe(size);
      let done = 0;
      while (done < size) {
        const n = readSync(fd, out, done, size - done, done);
        if (n === 0) break;
        done += n;
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  private async tempFile(): Promise<string> {
    this.tmpDir ??= await mkdtemp(`${this.path}.tmp-`);
    return join(this.tmpDir, `o${this.fileCount++}`);
  }
}

/** Commits, trees and tags are always read whole (they are parsed); blobs only when small. */
function inMemory(e: PackEntry): boolean {
  return e.size <= IN_MEMORY_MAX || (e.kind >= 1 && e.kind <= 2) || e.kind === 4;
}

function readHead(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(20);
    const n = readSync(fd, head, 0, 20, 0);
    return head.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** git's object id: sha1 of "<type> <size>\0" and the content. */
export function objectHash(type: ObjectType, size: number): Hash {
  return createHash('sha1').update(`${type} ${size}\0`);
}

/**
 * A pack entry's type and inflated size, from the variable-length header at the start of
 * `head`, and the header's length in bytes.
 */
export function entryHead(head: Buffer): { kind: number; size: number; length: number } {
  let i = 0;
  let byte = head[i++] ?? 0;
  const kind = (byte >> 4) & 7;
  let size = byte & 0x0f;
  let shift = 4;
  while (byte & 0x80) {
    byte = head[i++] ?? 0;
    size += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  }
  return { kind, size, length: i };
}
