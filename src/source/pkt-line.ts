/** git's pkt-line framing: a 4-hex-digit length (including itself) and the payload; 0000 flushes. */

export const FLUSH = Buffer.from('0000');

export function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const len = (payload.length + 4).toString(16).padStart(4, '0');
  return Buffer.concat([Buffer.from(len), payload]);
}

/**
 * Reads pkt-lines from a byte stream as they arrive. `next()` returns a payload, `null` for a
 * flush (or delimiter) packet, `undefined` at the end of the stream. A packet inside one
 * received chunk is returned as a view of it; only a packet split across chunks is copied.
 */
export class PktReader {
  private chunks: Buffer[] = [];
  /** Read position in chunks[0]. */
  private pos = 0;
  private buffered = 0;
  private done = false;
  private readonly it: AsyncIterator<Uint8Array>;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.it = body[Symbol.asyncIterator]();
  }

  async next(): Promise<Buffer | null | undefined> {
    if (!(await this.fill(4))) return undefined;
    const lenText = this.take(4).toString('latin1');
    const len = parseInt(lenText, 16);
    if (!/^[0-9a-f]{4}$/i.test(lenText) || (len > 0 && len < 4)) {
      throw new Error(`git protocol error: bad pkt-line length ${JSON.stringify(lenText)}`);
    }
    if (len < 4) return null;
    if (!(await this.fill(len - 4))) {
      throw new Error('git protocol error: the stream ended inside a pkt-line');
    }
    return this.take(len - 4);
  }

  private take(n: number): Buffer {
    const head = this.chunks[0] as Buffer;
    this.buffered -= n;
    if (head.length - this.pos >= n) {
      const out = head.subarray(this.pos, this.pos + n);
      this.pos += n;
      if (this.pos === head.length) {
        this.chunks.shift();
        this.pos = 0;
      }
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let done = 0;
    while (done < n) {
      const chunk = this.chunks[0] as Buffer;
      const piece = Math.min(n - done, chunk.length - this.pos);
      chunk.copy(out, done, this.pos, this.pos + piece);
      done += piece;
      this.pos += piece;
      if (this.pos === chunk.length) {
        this.chunks.shift();
        this.pos = 0;
      }
    }
    return out;
  }

  private async fill(n: number): Promise<boolean> {
    while (this.buffered < n) {
      if (this.done) return false;
      const r = await this.it.next();
      if (r.done) {
        this.done = true;
        continue;
      }
      const chunk = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
      if (chunk.length === 0) continue;
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    return true;
  }
}
