/**
 * A max segment tree over fixed positions. It answers the two questions the matching asks of
 * hosts sorted by cpu: "which is the first position from `lo` whose value (memory) is at
 * least x" and "hand me every such position once", each in O(log n) per position found,
 * instead of scanning every host class.
 */
const GONE = -Infinity;

export class MaxTree {
  private readonly size: number;
  private readonly tree: Float64Array;
  private readonly initial: Float64Array;

  constructor(values: readonly number[]) {
    let size = 1;
    while (size < values.length) size *= 2;
    this.size = size;
    this.tree = new Float64Array(2 * size).fill(GONE);
    values.forEach((v, i) => {
      this.tree[size + i] = v;
    });
    for (let k = size - 1; k >= 1; k--) this.pull(k);
    this.initial = this.tree.slice();
  }

  /** Back to the values given to the constructor. */
  restore(): void {
    this.tree.set(this.initial);
  }

  /** Takes position `pos` out of every later answer. */
  remove(pos: number): void {
    let k = this.size + pos;
    this.tree[k] = GONE;
    for (k >>= 1; k >= 1; k >>= 1) this.pull(k);
  }

  /** The first position ≥ lo whose value is ≥ x, or -1. */
  firstAtLeast(lo: number, x: number): number {
    return this.first(1, 0, this.size, lo, x);
  }

  /** Every position ≥ lo whose value is ≥ x, in order; each is removed as it is reported. */
  takeAtLeast(lo: number, x: number, out: number[]): void {
    this.take(1, 0, this.size, lo, x, out);
  }

  private pull(k: number): void {
    this.tree[k] = Math.max(this.tree[2 * k] as number, this.tree[2 * k + 1] as number);
  }

  private first(k: number, from: number, to: number, lo: number, x: number): number {
    if (to <= lo || (this.tree[k] as number) < x) return -1;
    if (k >= this.size) return from;
    const mid = (from + to) >> 1;
    const left = this.first(2 * k, from, mid, lo, x);
    return left >= 0 ? left : this.first(2 * k + 1, mid, to, lo, x);
  }

  private take(k: number, from: number, to: number, lo: number, x: number, out: number[]): void {
    if (to <= lo || (this.tree[k] as number) < x) return;
    if (k >= this.size) {
      out.push(from);
      this.tree[k] = GONE;
      return;
    }
    const mid = (from + to) >> 1;
    this.take(2 * k, from, mid, lo, x, out);
    this.take(2 * k + 1, mid, to, lo, x, out);
    this.pull(k);
  }
}
