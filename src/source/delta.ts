/**
 * git's delta format (a pack's ofs-delta and ref-delta entries): the base's size, the result's
 * size, then instructions that copy a range of the base or insert literal bytes. Applied in
 * memory for small objects, or from and to files for large ones, a chunk at a time.
 */
import { openSync, readSync, closeSync } from 'node:fs';

/** Sequential bytes from a buffer or a file, read a chunk at a time. */
export class ByteSource {
  private buf: Buffer;
  private pos = 0;
  private fd: number | undefined;
  private filePos = 0;

  constructor(src: Buffer | string) {
    if (typeof src === 'string') {
      this.fd = openSync(src, 'r');
      this.buf = Buffer.alloc(0);
    } else this.buf = src;
  }

  byte(): number {
    if (this.pos >= this.buf.length) this.refill();
    return this.buf[this.pos++] as number;
  }

  bytes(n: number): Buffer {
    const parts: Buffer[] = [];
    let left = n;
    while (left > 0) {
      if (this.pos >= this.buf.length) this.refill();
      const take = Math.min(left, this.buf.length - this.pos);
      parts.push(this.buf.subarray(this.pos, this.pos + take));
      this.pos += take;
      left -= take;
    }
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  get atEnd(): boolean {
    if (this.pos < this.buf.length) return false;
    if (this.fd === undefined) return true;
    try {
      this.refill();
      return false;
    } catch {
      return true;
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private refill(): void {
    if (this.fd === undefined) throw new Error('corrupt delta: it ends inside an instruction');
    const chunk = Buffer.allocUnsafe(1 << 20);
    const n = readSync(this.fd, chunk, 0, chunk.length, this.filePos);
    if (n === 0) throw new Error('corrupt delta: it ends inside an instruction');
    this.filePos += n;
    this.buf = chunk.subarray(0, n);
    this.pos = 0;
  }
}

/** Random access to a delta's base: a buffer, or a file read where needed. */
export interface BaseReader {
  size: number;
  read(offset: number, length: number): Buffer;
}

export function bufferBase(buf: Buffer): BaseReader {
  return { size: buf.length, read: (o, n) => buf.subarray(o, o + n) };
}

export function fileBase(fd: number, size: number): BaseReader {
  return {
    size,
    read(o, n) {
      const out = Buffer.allocUnsafe(n);
      let done = 0;
      while (done < n) {
        const r = readSync(fd, out, done, n - done, o + done);
        if (r === 0) throw new Error('corrupt delta: a copy reaches past the end of its base');
        done += r;
      }
      return out;
    },
  };
}

function varint(src: ByteSource): number {
  let value = 0;
  let shift = 0;
  let byte: number;
  do {
    byte = src.byte();
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return value;
}

/** The base and result sizes a delta declares (its first bytes). */
export function deltaSizes(delta: Buffer): { baseSize: number; resultSize: number } {
  const src = new ByteSource(delta);
  return { baseSize: varint(src), resultSize: varint(src) };
}

/** Largest piece of a copy read from a file base at once. */
const COPY_CHUNK = 1 << 20;

/**
 * Applies `delta` to `base`, handing the result to `sink` in pieces. Returns the result's size.
 * Memory: one instruction's data (a copy is read from the base at most 1 MiB at a time).
 */
export function applyDelta(
  delta: Buffer | string,
  base: BaseReader,
  sink: (chunk: Buffer) => void,
): number {
  const src = new ByteSource(delta);
  try {
    const baseSize = varint(src);
    const resultSize = varint(src);
    if (baseSize !== base.size) {
      throw new Error(`corrupt delta: made for a base of ${baseSize} bytes, not ${base.size}`);
    }
    let written = 0;
    while (!src.atEnd) {
      const cmd = src.byte();
      if (cmd & 0x80) {
        let offset = 0;
        let size = 0;
        for (let i = 0; i < 4; i++) if (cmd & (1 << i)) offset += src.byte() * 2 ** (8 * i);
        for (let i = 0; i < 3; i++) if (cmd & (0x10 << i)) size += src.byte() * 2 ** (8 * i);
        if (size === 0) size = 0x10000;
        if (offset + size > base.size) {
          throw new Error('corrupt delta: a copy reaches past the end of its base');
        }
        for (let at = 0; at < size; at += COPY_CHUNK) {
          sink(base.read(offset + at, Math.min(COPY_CHUNK, size - at)));
        }
        written += size;
      } else if (cmd > 0) {
        sink(src.bytes(cmd));
        written += cmd;
      } else {
        throw new Error('corrupt delta: instruction 0');
      }
    }
    if (written !== resultSize) {
      throw new Error(
        `corrupt delta: it makes ${written} bytes, not the ${resultSize} it declares`,
      );
    }
    return resultSize;
  } finally {
    src.close();
  }
}

/** applyDelta for small objects: the whole result in one buffer. */
export function applyDeltaInMemory(delta: Buffer, base: Buffer): Buffer {
  const parts: Buffer[] = [];
  applyDelta(delta, bufferBase(base), (c) => parts.push(c));
  return Buffer.concat(parts);
}
