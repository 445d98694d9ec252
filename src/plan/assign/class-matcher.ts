/**
 * Maximum bipartite matching between *classes*: nodes with identical requirements form one
 * node class, hosts with identical capacity form one host class with a capacity (how many
 * such hosts are free). Real sites have a handful of hardware profiles, so the search runs
 * over a few dozen classes even when the site has tens of thousands of hosts.
 *
 * Units are added one at a time, in the caller's priority order. Each unit first takes a
 * free host class directly (the smallest sufficient one), else searches an augmenting path
 * that shifts already-placed units to other host classes. A unit once placed is never
 * dropped, only moved, so earlier callers keep priority; and because a vertex without an
 * augmenting path never gains one as other paths are augmented, a node class that fails
 * once is marked dead and later calls for it return at once. The result is a maximum
 * matching.
 *
 * Edges are never listed: "host class satisfies node class" is dominance in (cpu, memory)
 * within compatible sriov/qat types, so each type's host classes sit on a shelf sorted by
 * cpu, and max trees over memory find the satisfying classes in O(log n) each. That keeps
 * sites whose classes do not compress (every host a slightly different RAM size, every
 * node its own memory figure) from walking a quadratic edge list.
 */
import { MaxTree } from './max-tree.js';

export interface Demand {
  cpu: number;
  memMib: number;
  sriov: boolean;
  qat: boolean;
}

export interface Supply {
  cpu: number;
  memMib: number;
  sriov: boolean;
  qat: boolean;
}

/** Host classes of one sriov/qat type, in class order (cpu, then memory, ascending). */
interface Shelf {
  classes: number[];
  cpu: number[];
  /** Memory of the classes that still have a free host. */
  free: MaxTree;
  /** Memory of the classes the current search has not reached yet. */
  unseen: MaxTree;
}

function typeOf(x: { sriov: boolean; qat: boolean }): number {
  return (x.sriov ? 1 : 0) | (x.qat ? 2 : 0);
}

function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ClassMatcher {
  private readonly used: number[];
  private readonly shelves: Shelf[] = [];
  /** Shelf and position of each host class. */
  private readonly at: [shelf: number, pos: number][];
  /** For each node class: the shelves it may use and where its cpu requirement starts. */
  private readonly reach: [shelf: number, lo: number][][];
  /** flow[i]: host class → units of node class i placed there. */
  private readonly flow: Map<number, number>[];
  /** back[j]: node class → units placed on host class j (the residual back edges). */
  private readonly back: Map<number, number>[];
  private readonly dead: boolean[];
  private readonly nodeSeen: Int32Array;
  private readonly viaHost: Int32Array;
  private readonly viaNode: Int32Array;
  private epoch = 0;

  /**
   * @param needs one entry per node class
   * @param supplies one entry per host class, sorted smallest first (cpu, then memory, ...);
   *   that order is the preference among satisfying classes
   * @param capacity free hosts per host class
   */
  constructor(
    private readonly needs: readonly Demand[],
    supplies: readonly Supply[],
    private readonly capacity: readonly number[],
  ) {
    const members: number[][] = [[], [], [], []];
    supplies.forEach((s, j) => members[typeOf(s)]?.push(j));
    this.at = supplies.map(() => [0, 0]);
    members.forEach((classes, t) => {
      classes.forEach((j, pos) => {
        this.at[j] = [t, pos];
      });
      const mem = classes.map((j) => (supplies[j] as Supply).memMib);
      this.shelves.push({
        classes,
        cpu: classes.map((j) => (supplies[j] as Supply).cpu),
        free: new MaxTree(
          classes.map((j, k) => ((capacity[j] ?? 0) > 0 ? (mem[k] as number) : -Infinity)),
        ),
        unseen: new MaxTree(mem),
      });
    });
    this.reach = needs.map((need) => {
      const t = typeOf(need);
      const out: [number, number][] = [];
      this.shelves.forEach((shelf, s) => {
        if ((s & t) === t && shelf.classes.length > 0)
          out.push([s, lowerBound(shelf.cpu, need.cpu)]);
      });
      return out;
    });
    this.used = supplies.map(() => 0);
    this.flow = needs.map(() => new Map());
    this.back = supplies.map(() => new Map());
    this.dead = needs.map(() => false);
    this.nodeSeen = new Int32Array(needs.length);
    this.viaHost = new Int32Array(supplies.length);
    this.viaNode = new Int32Array(needs.length);
  }

  /** Places one more unit of node class `i`; false when no matching can grow that way. */
  place(i: number): boolean {
    if (this.dead[i]) return false;
    const direct = this.freeHostClass(i);
    if (direct >= 0) {
      this.shift(i, direct, 1);
      this.fill(direct);
      return true;
    }
    if (this.augment(i)) return true;
    this.dead[i] = true;
    return false;
  }

  /** Units of node class `i` per host class, preferred host classes first. */
  placements(i: number): [hostClass: number, units: number][] {
    return [...(this.flow[i] ?? new Map<number, number>())].sort((a, b) => a[0] - b[0]);
  }

  /** The smallest sufficient host class with a free host, or -1. */
  private freeHostClass(i: number): number {
    const mem = (this.needs[i] as Demand).memMib;
    let best = -1;
    for (const [s, lo] of this.reach[i] ?? []) {
      const shelf = this.shelves[s] as Shelf;
      const pos = shelf.free.firstAtLeast(lo, mem);
      if (pos < 0) continue;
      const j = shelf.classes[pos] as number;
      if (best < 0 || j < best) best = j;
    }
    return best;
  }

  private fill(j: number): void {
    const units = (this.used[j] ?? 0) + 1;
    this.used[j] = units;
    if (units >= (this.capacity[j] ?? 0)) {
      const [s, pos] = this.at[j] as [number, number];
      (this.shelves[s] as Shelf).free.remove(pos);
    }
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

  /** Breadth-first search for a shortest augmenting path from node class `start`. */
  private augment(start: number): boolean {
    const epoch = ++this.epoch;
    for (const shelf of this.shelves) shelf.unseen.restore();
    this.nodeSeen[start] = epoch;
    const queue = [start];
    const found: number[] = [];
    let end = -1;
    for (let q = 0; q < queue.length && end < 0; q++) {
      const u = queue[q] as number;
      if (u !== start) {
        // Any node class reached here can move to a free host: the path ends.
        const free = this.freeHostClass(u);
        if (free >= 0) {
          this.viaHost[free] = u;
          end = free;
          break;
        }
      }
      // Every satisfying host class is full; follow the node classes holding them.
      const mem = (this.needs[u] as Demand).memMib;
      for (const [s, lo] of this.reach[u] ?? []) {
        const shelf = this.shelves[s] as Shelf;
        found.length = 0;
        shelf.unseen.takeAtLeast(lo, mem, found);
        for (const pos of found) {
          const j = shelf.classes[pos] as number;
          this.viaHost[j] = u;
          for (const [other, units] of this.back[j] ?? []) {
            if (units > 0 && this.nodeSeen[other] !== epoch) {
              this.nodeSeen[other] = epoch;
              this.viaNode[other] = j;
              queue.push(other);
            }
          }
        }
      }
    }
    if (end < 0) return false;
    this.fill(end);
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
