/**
 * Min-cost maximum flow by successive shortest paths (Bellman-Ford on the residual graph, so
 * negative costs are fine as long as the graph starts without a negative cycle, which a
 * bipartite source → left → right → sink graph never has). Each augmentation follows a
 * cheapest path, so the flow of every value reached is a cheapest one; run to the end, the
 * result is the largest flow and, among the largest, the cheapest. Assignment runs it over
 * classes of nodes and hosts (a few dozen vertices), never over single hosts.
 */
export class MinCostFlow {
  private readonly to: number[] = [];
  private readonly cap: number[] = [];
  private readonly cost: number[] = [];
  private readonly out: number[][];

  constructor(readonly size: number) {
    this.out = Array.from({ length: size }, () => []);
  }

  /** Adds an edge and returns its id (for `flowOn`). */
  addEdge(from: number, to: number, capacity: number, cost: number): number {
    const id = this.to.length;
    this.to.push(to, from);
    this.cap.push(capacity, 0);
    this.cost.push(cost, -cost);
    (this.out[from] as number[]).push(id);
    (this.out[to] as number[]).push(id + 1);
    return id;
  }

  /** Units sent over edge `id`. */
  flowOn(id: number): number {
    return this.cap[id + 1] as number;
  }

  /** Sends as much as possible from `s` to `t`, cheapest first; returns [flow, cost]. */
  run(s: number, t: number): [number, number] {
    let flow = 0;
    let total = 0;
    const n = this.size;
    const dist = new Float64Array(n);
    const via = new Int32Array(n);
    const queued = new Uint8Array(n);
    for (;;) {
      dist.fill(Infinity);
      via.fill(-1);
      dist[s] = 0;
      const queue = [s];
      queued[s] = 1;
      for (let head = 0; head < queue.length; head++) {
        const u = queue[head] as number;
        queued[u] = 0;
        for (const e of this.out[u] as number[]) {
          if ((this.cap[e] as number) <= 0) continue;
          const v = this.to[e] as number;
          const d = (dist[u] as number) + (this.cost[e] as number);
          if (d < (dist[v] as number)) {
            dist[v] = d;
            via[v] = e;
            if (!queued[v]) {
              queued[v] = 1;
              queue.push(v);
            }
          }
        }
      }
      if (dist[t] === Infinity) return [flow, total];
      let push = Infinity;
      for (let v = t; v !== s; v = this.to[(via[v] as number) ^ 1] as number)
        push = Math.min(push, this.cap[via[v] as number] as number);
      for (let v = t; v !== s; v = this.to[(via[v] as number) ^ 1] as number) {
        const e = via[v] as number;
        this.cap[e] = (this.cap[e] as number) - push;
        this.cap[e ^ 1] = (this.cap[e ^ 1] as number) + push;
      }
      flow += push;
      total += push * (dist[t] as number);
    }
  }
}
