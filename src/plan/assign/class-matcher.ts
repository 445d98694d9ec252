/**
 * Maximum bipartite matching between *classes*: nodes with identical requirements form one
 * node class, hosts with identical capacity form one host class with a capacity (how many
 * such hosts are free). Real sites have a handful of hardware profiles, so the graph the
 * search walks has tens of vertices even when the site has tens of thousands of hosts.
 *
 * Units are added one at a time, in the caller's priority order. Each unit first takes a
 * free host class directly (preferred classes first), else searches an augmenting path that
 * shifts already-placed units to other host classes. A unit once placed is never dropped,
 * only moved, so earlier callers keep priority; and because a vertex without an augmenting
 * path never gains one as other paths are augmented, a node class that fails once is marked
 * dead and later calls for it return at once. The result is a maximum matching.
 */
export class ClassMatcher {
  private readonly used: number[];
  /** flow[i]: host class → units of node class i placed there. */
  private readonly flow: Map<number, number>[];
  /** back[j]: node class → units placed on host class j (the residual back edges). */
  private readonly back: Map<number, number>[];
  private readonly dead: boolean[];
  /** First position in adj[i] that may still have free capacity (capacity only fills up). */
  private readonly cursor: number[];
  private readonly nodeSeen: Int32Array;
  private readonly hostSeen: Int32Array;
  private readonly viaHost: Int32Array;
  private readonly viaNode: Int32Array;
  private epoch = 0;

  /**
   * @param adj for each node class, the host classes that satisfy it, preferred first
   * @param capacity free hosts per host class
   */
  constructor(
    private readonly adj: readonly (readonly number[])[],
    private readonly capacity: readonly number[],
  ) {
    this.used = capacity.map(() => 0);
    this.flow = adj.map(() => new Map());
    this.back = capacity.map(() => new Map());
    this.dead = adj.map(() => false);
    this.cursor = adj.map(() => 0);
    this.nodeSeen = new Int32Array(adj.length);
    this.hostSeen = new Int32Array(capacity.length);
    this.viaHost = new Int32Array(capacity.length);
    this.viaNode = new Int32Array(adj.length);
  }

  /** Places one more unit of node class `i`; false when no matching can grow that way. */
  place(i: number): boolean {
    if (this.dead[i]) return false;
    const direct = this.freeHostClass(i);
    if (direct >= 0) {
      this.shift(i, direct, 1);
      this.used[direct] = (this.used[direct] ?? 0) + 1;
      return true;
    }
    if (this.augment(i)) return true;
    this.dead[i] = true;
    return false;
  }

  /** Units of node class `i` per host class, in `adj[i]` order (preferred first). */
  placements(i: number): [hostClass: number, units: number][] {
    const f = this.flow[i];
    const out: [number, number][] = [];
    if (!f) return out;
    for (const j of this.adj[i] ?? []) {
      const units = f.get(j) ?? 0;
      if (units > 0) out.push([j, units]);
    }
    return out;
  }

  private freeHostClass(i: number): number {
    const list = this.adj[i] ?? [];
    let k = this.cursor[i] ?? 0;
    while (k < list.length) {
      const j = list[k] as number;
      if ((this.used[j] ?? 0) < (this.capacity[j] ?? 0)) break;
      k++;
    }
    this.cursor[i] = k;
    return k < list.length ? (list[k] as number) : -1;
  }

  private shift(i: number, j: number, delta: number): void {
    const f = this.flow[i] as Map<number, number>;
    const b = this.back[j] as Map<number, number>;
    const units = (f.get(j) ?? 0) + delta;
    if (units === 0) {
      f.delete(j);
      b.delete(i);
    } else {
      f.set(j, units);
      b.set(i, units);
    }
  }

  /** Breadth-first search for the shortest augmenting path from node class `start`. */
  private augment(start: number): boolean {
    const epoch = ++this.epoch;
    this.nodeSeen[start] = epoch;
    const queue = [start];
    let end = -1;
    for (let q = 0; q < queue.length && end < 0; q++) {
      const u = queue[q] as number;
      for (const j of this.adj[u] ?? []) {
        if (this.hostSeen[j] === epoch) continue;
        this.hostSeen[j] = epoch;
        this.viaHost[j] = u;
        if ((this.used[j] ?? 0) < (this.capacity[j] ?? 0)) {
          end = j;
          break;
        }
        for (const [other, units] of this.back[j] ?? []) {
          if (units > 0 && this.nodeSeen[other] !== epoch) {
            this.nodeSeen[other] = epoch;
            this.viaNode[other] = j;
            queue.push(other);
          }
        }
      }
    }
    if (end < 0) return false;
    this.used[end] = (this.used[end] ?? 0) + 1;
    // Walk back: every host class on the path gains one unit from the node class before it
    // and (except the last) loses one unit of the node class after it.
    let j = end;
    for (;;) {
      const u = this.viaHost[j] as number;
      this.shift(u, j, 1);
      if (u === start) break;
      j = this.viaNode[u] as number;
      this.shift(u, j, -1);
    }
    return true;
  }
}
