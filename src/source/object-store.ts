/**
 * The repository's object store as bpa writes it. Each fetch adds up to two packs (with their
 * version 2 indexes): one of commits, trees, tags and the site's small blobs, which
 * isomorphic-git may read (it loads a whole pack to read one object from it), and one of the
 * site's large files, which only this module reads, one entry at a time. isomorphic-git itself
 * writes small loose objects (status commits). Packs written here never hold deltas.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { createDeflate, createInflate, inflateSync } from 'node:zlib';
import fs from 'node:fs';
import git from 'isomorphic-git';
import type { GitObject, ObjectReader } from './site-tree.js';
import { IN_MEMORY_MAX, entryHead, type ObjectType } from './pack-scan.js';

const TYPE_NUMBER: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const TYPE_NAME: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const IDX_MAGIC = 0xff744f63;
// Small pieces: each is garbage once written, and many large ones in flight add up.
const CHUNK = 64 * 1024;

interface Located {
  pack: string;
  /** The entry's header. */
  offset: number;
  /** Where its compressed data ends. */
  end: number;
}

/** Where a large blob comes from: a whole entry of another pack, or a file of its content. */
export type LargeSource =
  | { kind: 'entry'; pack: string; offset: number; end: number }
  | { kind: 'file'; file: string; size: number };

export class ObjectStore {
  private located: Map<string, Located> | undefined;
  readonly gitdir: string;

  constructor(
    readonly dir: string,
    private readonly cache: Record<string, unknown> = {},
  ) {
    this.gitdir = join(dir, '.git');
  }

  /** Whether the object is stored, loose or in a pack. */
  async has(oid: string): Promise<boolean> {
    // The index first: a lookup, where a loose object costs a file-system call.
    return (await this.packIndex()).has(oid) || existsSync(this.loosePath(oid));
  }

  loosePath(oid: string): string {
    return join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  /**
   * A commit, tree, tag or small blob, whole. Never used for a site's large files: they are
   * copied with `copyTo`, a chunk at a time.
   */
  readonly read: ObjectReader = async (oid: string): Promise<GitObject | undefined> => {
    const loose = this.loosePath(oid);
    if (existsSync(loose)) {
      const raw = inflateSync(readFileSync(loose));
      const nul = raw.indexOf(0);
      return { type: raw.toString('latin1', 0, raw.indexOf(0x20)), data: raw.subarray(nul + 1) };
    }
    const at = (await this.packIndex()).get(oid);
    if (!at) return undefined;
    const entry = readEntry(at);
    if (entry.type) return { type: entry.type, data: entry.inflate() };
    // Not a pack bpa wrote (those hold no deltas): isomorphic-git resolves it.
    const { type, object } = await git.readObject({ fs, dir: this.dir, oid, cache: this.cache });
    const data = object as Uint8Array;
    return { type, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) };
  };

  /** Writes a blob's content to `dest`, a chunk at a time when it is large. */
  async copyTo(oid: string, dest: string, mode: number): Promise<void> {
    // Packed first (a lookup): the same object loose has the same content.
    const at = (await this.packIndex()).get(oid);
    if (!at) {
      if (!existsSync(this.loosePath(oid))) throw new Error(`object ${oid} is not stored`);
      const obj = await this.read(oid);
      await writeFile(dest, obj?.data ?? Buffer.alloc(0), { mode });
      return;
    }
    const entry = readEntry(at);
    if (entry.type && entry.size <= IN_MEMORY_MAX) {
      // Synchronously: thousands of small files, each a few thread-pool round trips otherwise.
      writeFileSync(dest, entry.inflate(), { mode });
      return;
    }
    if (!entry.type) {
      const obj = await this.read(oid);
      await writeFile(dest, obj?.data ?? Buffer.alloc(0), { mode });
      return;
    }
    const out = openSync(dest, 'w', mode);
    try {
      await inflateRange(at.pack, entry.dataStart, at.end, (c) => writeSync(out, c));
    } finally {
      closeSync(out);
    }
  }

  /**
   * Writes one pack of small objects (each entry already encoded: header and compressed data)
   * and its index; the index is renamed into place last, so a reader never sees half a pack.
   */
  async writePack(entries: ReadonlyArray<{ oid: string; raw: Buffer }>): Promise<void> {
    if (!entries.length) return;
    const writer = await PackWriter.create(this.gitdir, entries.length);
    for (const e of entries) writer.entry(e.oid, [e.raw]);
    await writer.finish();
    this.located = undefined;
  }

  /** Writes a pack of large blobs, copying or compressing each a chunk at a time. */
  async writeLargePack(items: ReadonlyArray<{ oid: string; source: LargeSource }>): Promise<void> {
    if (!items.length) return;
    const writer = await PackWriter.create(this.gitdir, items.length);
    for (const { oid, source } of items) {
      if (source.kind === 'entry')
        await writer.copyEntry(oid, source.pack, source.offset, source.end);
      else await writer.compressFile(oid, source.file, source.size);
    }
    await writer.finish();
    this.located = undefined;
  }

  private async packIndex(): Promise<Map<string, Located>> {
    this.located ??= await readPackIndexes(join(this.gitdir, 'objects', 'pack'));
    return this.located;
  }
}

/** Entries up to this size (as stored) are read with their header in one read. */
const SMALL_ENTRY = 64 * 1024;

/** A pack entry's header, read from its pack file. */
function readEntry(at: Located): {
  type: ObjectType | undefined;
  size: number;
  dataStart: number;
  inflate(): Buffer;
} {
  const fd = openSync(at.pack, 'r');
  try {
    // A small entry is read whole, once: its content is wanted next.
    const whole = at.end - at.offset <= SMALL_ENTRY;
    const head = Buffer.alloc(whole ? at.end - at.offset : Math.min(32, at.end - at.offset));
    readSync(fd, head, 0, head.length, at.offset);
    const { kind, size, length } = entryHead(head);
    const dataStart = at.offset + length;
    return {
      type: TYPE_NAME[kind],
      size,
      dataStart,
      inflate(): Buffer {
        if (whole)
          return inflateSync(head.subarray(length), { maxOutputLength: Math.max(1, size) });
        const buf = Buffer.alloc(at.end - dataStart);
        const f = openSync(at.pack, 'r');
        try {
          readSync(f, buf, 0, buf.length, dataStart);
        } finally {
          closeSync(f);
        }
        return inflateSync(buf, { maxOutputLength: Math.max(1, size) });
      },
    };
  } finally {
    closeSync(fd);
  }
}

/** Inflates the zlib stream in [start, end) of a file into `sink`, a chunk at a time. */
export function inflateRange(
  file: string,
  start: number,
  end: number,
  sink: (c: Buffer) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const fd = openSync(file, 'r');
    const inflate = createInflate();
    let pos = start;
    const finish = (err?: unknown): void => {
      closeSync(fd);
      if (err) reject(err);
      else resolve();
    };
    inflate.on('data', sink);
    inflate.on('error', finish);
    inflate.on('end', () => finish());
    const feed = (): void => {
      while (pos < end) {
        const chunk = Buffer.allocUnsafe(Math.min(CHUNK, end - pos));
        const n = readSync(fd, chunk, 0, chunk.length, pos);
        if (n === 0) break;
        pos += n;
        if (!inflate.write(chunk.subarray(0, n))) {
          inflate.once('drain', feed);
          return;
        }
      }
      inflate.end();
    };
    feed();
  });
}

/** Writes a pack file entry by entry, then its index. */
class PackWriter {
  private readonly sha: Hash = createHash('sha1');
  private readonly rows: Array<{ oid: string; crc: number; offset: number }> = [];
  private offset = 0;

  private constructor(
    private readonly packDir: string,
    private readonly tmp: string,
    private readonly fd: number,
  ) {}

  static async create(gitdir: string, count: number): Promise<PackWriter> {
    const packDir = join(gitdir, 'objects', 'pack');
    await mkdir(packDir, { recursive: true });
    const tmp = join(packDir, `tmp-${randomBytes(6).toString('hex')}`);
    const w = new PackWriter(packDir, tmp, openSync(`${tmp}.pack`, 'w'));
    const head = Buffer.alloc(12);
    head.write('PACK', 0, 'latin1');
    head.writeUInt32BE(2, 4);
    head.writeUInt32BE(count, 8);
    w.write(head);
    return w;
  }

  entry(oid: string, parts: Buffer[]): void {
    let crc = 0;
    const offset = this.offset;
    for (const p of parts) {
      crc = crc32(p, crc);
      this.write(p);
    }
    this.rows.push({ oid, crc, offset });
  }

  /** Copies an entry of another pack as it is (header and compressed data). */
  async copyEntry(oid: string, pack: string, start: number, end: number): Promise<void> {
    const src = openSync(pack, 'r');
    try {
      const offset = this.offset;
      let crc = 0;
      for (let pos = start; pos < end;) {
        const chunk = Buffer.allocUnsafe(Math.min(CHUNK, end - pos));
        const n = readSync(src, chunk, 0, chunk.length, pos);
        if (n === 0) throw new Error('the received pack ended early');
        pos += n;
        crc = crc32(chunk.subarray(0, n), crc);
        this.write(chunk.subarray(0, n));
      }
      this.rows.push({ oid, crc, offset });
    } finally {
      closeSync(src);
    }
  }

  /** Adds a blob from a file of its content, compressing it a chunk at a time. */
  async compressFile(oid: string, file: string, size: number): Promise<void> {
    const offset = this.offset;
    const head = entryHeader('blob', size);
    let crc = crc32(head);
    this.write(head);
    await new Promise<void>((resolve, reject) => {
      const fd = openSync(file, 'r');
      const deflate = createDeflate();
      let pos = 0;
      const finish = (err?: unknown): void => {
        closeSync(fd);
        if (err) reject(err);
        else resolve();
      };
      deflate.on('data', (c: Buffer) => {
        crc = crc32(c, crc);
        this.write(c);
      });
      deflate.on('error', finish);
      deflate.on('end', () => finish());
      const feed = (): void => {
        for (;;) {
          const chunk = Buffer.allocUnsafe(CHUNK);
          const n = readSync(fd, chunk, 0, chunk.length, pos);
          if (n === 0) break;
          pos += n;
          if (!deflate.write(chunk.subarray(0, n))) {
            deflate.once('drain', feed);
            return;
          }
        }
        deflate.end();
      };
      feed();
    });
    this.rows.push({ oid, crc, offset });
  }

  async finish(): Promise<void> {
    const packSha = this.sha.digest();
    writeSync(this.fd, packSha);
    closeSync(this.fd);
    if (this.offset >= 2 ** 31) {
      await rm(`${this.tmp}.pack`, { force: true });
      throw new Error('a pack of the site would exceed 2 GiB');
    }
    const name = join(this.packDir, `pack-${packSha.toString('hex')}`);
    if (existsSync(`${name}.idx`)) {
      await rm(`${this.tmp}.pack`, { force: true });
      return;
    }
    await writeFile(`${this.tmp}.idx`, packIndex(this.rows, packSha));
    await rename(`${this.tmp}.pack`, `${name}.pack`);
    await rename(`${this.tmp}.idx`, `${name}.idx`);
  }

  private write(buf: Buffer): void {
    writeSync(this.fd, buf);
    this.sha.update(buf);
    this.offset += buf.length;
  }
}

function entryHeader(type: ObjectType, length: number): Buffer {
  const head: number[] = [];
  let size = length;
  let byte = (TYPE_NUMBER[type] << 4) | (size & 0x0f);
  size = Math.floor(size / 16);
  while (size > 0) {
    head.push(byte | 0x80);
    byte = size & 0x7f;
    size = Math.floor(size / 128);
  }
  head.push(byte);
  return Buffer.from(head);
}

/**
 * A pack entry: the object's type and size, then its content as a zlib stream. The stream is
 * written with stored (uncompressed) blocks: it is only for objects resolved from deltas,
 * which are small, and a deflateSync per object cost more CPU than the rest of writing the
 * pack (~150 ms for 2,000 site files); git and isomorphic-git read any zlib stream.
 */
export function encodeEntry(type: ObjectType, data: Buffer): Buffer {
  return Buffer.concat([entryHeader(type, data.length), storedZlib(data)]);
}

/** RFC 1950/1951: a zlib header, stored deflate blocks of at most 65,535 bytes, Adler-32. */
export function storedZlib(data: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / 0xffff));
  const out = Buffer.alloc(2 + blocks * 5 + data.length + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  let pos = 2;
  for (let b = 0; b < blocks; b++) {
    const start = b * 0xffff;
    const len = Math.min(0xffff, data.length - start);
    out[pos] = b === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(len, pos + 1);
    out.writeUInt16LE(len ^ 0xffff, pos + 3);
    data.copy(out, pos + 5, start, start + len);
    pos += 5 + len;
  }
  let a = 1;
  let c = 0;
  for (let i = 0; i < data.length;) {
    // 5,552 bytes at most between reductions keeps the sums exact (zlib's NMAX).
    const stop = Math.min(data.length, i + 5552);
    for (; i < stop; i++) {
      a += data[i] as number;
      c += a;
    }
    a %= 65521;
    c %= 65521;
  }
  out.writeUInt32BE(((c << 16) | a) >>> 0, pos);
  return out;
}

/** Index version 2: fan-out, sorted ids, CRC-32 of each entry, offsets, then two checksums. */
function packIndex(
  unsorted: ReadonlyArray<{ oid: string; crc: number; offset: number }>,
  packSha: Buffer,
): Buffer {
  const rows = [...unsorted].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = rows.length;
  const out = Buffer.alloc(8 + 1024 + n * 28 + 40);
  out.writeUInt32BE(IDX_MAGIC, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const r of rows) {
    const first = parseInt(r.oid.slice(0, 2), 16);
    fanout[first] = (fanout[first] ?? 0) + 1;
  }
  let total = 0;
  for (let i = 0; i < 256; i++) {
    total += fanout[i] ?? 0;
    out.writeUInt32BE(total, 8 + i * 4);
  }
  let pos = 8 + 1024;
  for (const r of rows) pos += out.write(r.oid, pos, 'hex');
  for (const r of rows) pos = out.writeUInt32BE(r.crc, pos);
  for (const r of rows) pos = out.writeUInt32BE(r.offset, pos);
  pos += packSha.copy(out, pos);
  createHash('sha1').update(out.subarray(0, pos)).digest().copy(out, pos);
  return out;
}

/** Every object of every pack: where its entry starts and ends (from the version 2 indexes). */
async function readPackIndexes(packDir: string): Promise<Map<string, Located>> {
  const out = new Map<string, Located>();
  let names: string[];
  try {
    names = await readdir(packDir);
  } catch {
    return out;
  }
  for (const name of names.filter((n) => n.startsWith('pack-') && n.endsWith('.idx'))) {
    const pack = join(packDir, name.replace(/\.idx$/, '.pack'));
    if (!existsSync(pack)) continue;
    const idx = readFileSync(join(packDir, name));
    if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== IDX_MAGIC || idx.readUInt32BE(4) !== 2)
      continue;
    const n = idx.readUInt32BE(8 + 255 * 4);
    const ids = 8 + 1024;
    const offsets = ids + n * 24;
    if (idx.length < offsets + n * 4 + 40) continue;
    const rows: Array<{ oid: string; offset: number }> = [];
    for (let i = 0; i < n; i++) {
      const offset = idx.readUInt32BE(offsets + i * 4);
      // Offsets with the high bit set point into a 64-bit table: packs over 2 GiB, never bpa's.
      if (offset & 0x80000000) continue;
      rows.push({ oid: idx.toString('hex', ids + i * 20, ids + i * 20 + 20), offset });
    }
    rows.sort((a, b) => a.offset - b.offset);
    const fd = openSync(pack, 'r');
    const packEnd = fstatSync(fd).size - 20;
    closeSync(fd);
    rows.forEach((r, i) =>
      out.set(r.oid, { pack, offset: r.offset, end: rows[i + 1]?.offset ?? packEnd }),
    );
  }
  return out;
}

const CRC_TABLE = ((): Uint32Array => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

// zlib's own (Node.js 20.15 and later) is far faster than a table in JavaScript.
const nativeCrc32 = (zlib as { crc32?: (data: Buffer, value?: number) => number }).crc32;

/** CRC-32 (as in zlib and pack indexes), continued from `crc` for data written in pieces. */
function crc32(buf: Buffer, crc = 0): number {
  if (nativeCrc32) return nativeCrc32(buf, crc);
  let c = ~crc >>> 0;
  for (let i = 0; i < buf.length; i++) c = (CRC_TABLE[(c ^ (buf[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return ~c >>> 0;
}
