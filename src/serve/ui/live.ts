/**
 * What the status page streams: the installer's output lines as they are printed, each with
 * its cluster and (when the line names one) its node, and a `state` event whenever the
 * controller starts or finishes a reconcile, so that open pages refresh without reloading.
 * The last lines are kept, so that a page opened during an install sees how it got there.
 */
export interface LiveLine {
  seq: number;
  /** ISO time the line was read. */
  at: string;
  cluster?: string;
  node?: string;
  text: string;
}

export type LiveEvent =
  { type: 'line'; line: LiveLine } | { type: 'state'; seq: number } | { type: 'end' };

type Listener = (event: LiveEvent) => void;

/** `[cluster] ` in front of every line the installers pass on (apply/installer). */
const CLUSTER_PREFIX = /^\[([^\]\s]{1,253})\] /;
/** Ansible names the host a result is about: `ok: [node-1]`, `fatal: [node-2]: FAILED! …`. */
const ANSIBLE_HOST =
  /^(?:ok|changed|fatal|failed|skipping|unreachable|included|ignoring|rescued|\.\.\.ignoring): \[([^\]\s]{1,253})(?: -> [^\]]*)?\]/;
/** The recap: `node-1 : ok=3 changed=1 unreachable=0 failed=0`. */
const ANSIBLE_RECAP = /^([^\s:]{1,253})\s+: ok=\d+/;

export class LiveBus {
  private seq = 0;
  private readonly lines: LiveLine[] = [];
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly keep = 500,
    private readonly now: () => number = Date.now,
  ) {}

  /** An installer line, as the reconcile passes it on (already redacted). */
  line(raw: string): void {
    const cluster = CLUSTER_PREFIX.exec(raw)?.[1];
    const text = cluster ? raw.slice(cluster.length + 3) : raw;
    const node = ANSIBLE_HOST.exec(text)?.[1] ?? ANSIBLE_RECAP.exec(text)?.[1];
    const line: LiveLine = {
      seq: ++this.seq,
      at: new Date(this.now()).toISOString(),
      ...(cluster ? { cluster } : {}),
      ...(node ? { node } : {}),
      text,
    };
    this.lines.push(line);
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
    this.emit({ type: 'line', line });
  }

  /** The controller's state changed: pages fetch the view again. */
  changed(): void {
    this.emit({ type: 'state', seq: ++this.seq });
  }

  /** bpa is stopping: every stream ends now rather than when the server cuts it. */
  end(): void {
    this.emit({ type: 'end' });
    this.listeners.clear();
  }

  /** The lines kept after `afterSeq` (all of them for 0). */
  recent(afterSeq = 0): LiveLine[] {
    return this.lines.filter((l) => l.seq > afterSeq);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  private emit(event: LiveEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // One broken stream must not stop the others, nor the reconcile that printed.
        this.listeners.delete(l);
      }
    }
  }
}
