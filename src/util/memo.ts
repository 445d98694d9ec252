/**
 * What is derived from one document or one host, kept for as long as that object lives: under
 * `bpa serve` an unchanged file's documents, and the hosts built from them, are the same
 * objects from one reconcile to the next, so a one-file commit redoes only what it touches.
 *
 * One-shot commands (validate, plan, apply) reuse nothing, and filling ~60,000 WeakMap entries
 * for a 10,000-host site cost a cold `bpa plan` ~50 ms (and its garbage collector the
 * ephemerons): memos keep nothing until a warm cache is made (`keepDerived`, called by
 * reconcile/context.ts's warmCache), and then for the life of the process.
 */
let keeping = false;

/** From now on, memos keep what they are given (a process with a warm cache). */
export function keepDerived(on = true): void {
  keeping = on;
}

/** Whether memos keep anything now. */
export function keepsDerived(): boolean {
  return keeping;
}

/** A WeakMap that keeps nothing while memos are off (see keepDerived). */
export class ObjectMemo<K extends object, V> {
  private readonly map = new WeakMap<K, V>();

  get(key: K): V | undefined {
    return keeping ? this.map.get(key) : undefined;
  }

  set(key: K, value: V): void {
    if (keeping) this.map.set(key, value);
  }
}
