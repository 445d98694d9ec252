import type { Listener, LoaderState } from 'js-yaml';
import { parsePointer } from '../util/problem.js';
import { readYaml } from './parse.js';
import { contentStart, followedByColon, skipProperties, skipToken } from './yaml-checks.js';

/**
 * Source positions for values inside a file, built only for files that have problems, from
 * the reader that read them (js-yaml 4, whose listener reports where each node opens and
 * closes): documents are indexed and keys are read exactly as the loader read them.
 */
export interface Position {
  line: number;
  column: number;
}

type PosNode =
  | {
      kind: 'map';
      start: number;
      entries: Array<{ key: string; keyStart: number; value: PosNode }>;
    }
  | { kind: 'seq'; start: number; items: PosNode[] }
  | { kind: 'leaf'; start: number };

export class FileLocator {
  private readonly lineStarts: number[];
  private docs: PosNode[] | undefined;

  constructor(private readonly text: string) {
    this.lineStarts = [0];
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
      this.lineStarts.push(i + 1);
    }
  }

  /** 1-based line and column of a 0-based offset. */
  position(offset: number): Position {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (this.lineStarts[lo] ?? 0) + 1 };
  }

  /**
   * The position of the value at a JSON pointer in document `doc`. For a mapping entry it is
   * the key (what an editor should jump to); where the pointer leads past what exists, the
   * deepest existing node is used.
   */
  locate(doc: number, ptr: string): Position {
    const root = this.documents()[doc];
    if (!root) return { line: 1, column: 1 };
    let node: PosNode = root;
    let offset = root.start;
    for (const segment of parsePointer(ptr)) {
      if (node.kind === 'map') {
        const entry = node.entries.find((e) => e.key === segment);
        if (!entry) break;
        offset = entry.keyStart;
        node = entry.value;
      } else if (node.kind === 'seq') {
        const item = node.items[Number(segment)];
        if (!item) break;
        offset = item.start;
        node = item;
      } else {
        break;
      }
    }
    return this.position(offset);
  }

  /** Where document `doc` starts. */
  documentStart(doc: number): Position {
    return this.position(this.documents()[doc]?.start ?? 0);
  }

  private documents(): PosNode[] {
    if (!this.docs) this.docs = buildTrees(this.text);
    return this.docs;
  }
}

/** A node read, as its parent sees it. */
interface Read {
  node: PosNode;
  /** Where its value starts: for a key, its position (an anchor on a key is not). */
  valueStart: number;
  /** Where the loader stood when the node closed. */
  end: number;
  result: unknown;
}

/**
 * The position tree of each document, from the listener's events: a node's children are the
 * nodes opened inside it, in order. The loader tries a block mapping first at block level, so
 * a node may only wrap its single child (same value): the child is used.
 */
function buildTrees(text: string): PosNode[] {
  // The loader drops a leading byte order mark; offsets here count it.
  const shift = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const docs: PosNode[] = [];
  const opened: number[] = [];
  const children: Read[][] = [];
  const listener: Listener = (event, state) => {
    const d = state.depth;
    if (event === 'open') {
      opened[d] = state.position;
      children[d + 1] = [];
      return;
    }
    const read = readNode(state, opened[d] ?? 0, children[d + 1] ?? [], shift);
    if (d === 1) docs.push(read.node);
    else children[d]?.push(read);
  };
  try {
    readYaml(text, { maxDepth: 1000 }, listener);
  } catch {
    // Only files that were read are located: keep what was built.
  }
  return docs;
}

function readNode(state: LoaderState, openedAt: number, kids: Read[], shift: number): Read {
  const input = state.input;
  const end = state.position;
  const result = state.result;
  const only = kids[0];
  if (kids.length === 1 && only && Object.is(only.result, result)) return { ...only, end };
  const at = contentStart(input, openedAt);
  const start = nodeStart(input, at, state.kind) + shift;
  const valueStart = keyStart(input, at) + shift;
  const key = (k: Read): string => String(k.result);
  if (state.kind === 'mapping') {
    const entries: Array<{ key: string; keyStart: number; value: PosNode }> = [];
    let pending: Read | undefined;
    let hasValue = false;
    for (const kid of kids) {
      if (pending && hasValue) {
        entries.push({ key: key(pending), keyStart: pending.valueStart, value: kid.node });
        pending = undefined;
        continue;
      }
      if (pending)
        entries.push({ key: key(pending), keyStart: pending.valueStart, value: leaf(pending) });
      pending = kid;
      hasValue = followedByColon(input, kid.end);
    }
    if (pending)
      entries.push({ key: key(pending), keyStart: pending.valueStart, value: leaf(pending) });
    return { node: { kind: 'map', start, entries }, valueStart, end, result };
  }
  if (state.kind === 'sequence') {
    const items: PosNode[] = [];
    const value = Array.isArray(result) ? result : [];
    if (input.charCodeAt(skipProperties(input, at)) === 0x5b /* [ */) {
      // A flow sequence: `[a: 1]` holds a mapping of one pair, read as a key and a value.
      for (let i = 0; i < kids.length; i++) {
        const kid = kids[i] as Read;
        const next = kids[i + 1];
        if (next && followedByColon(input, kid.end)) {
          const entry = { key: key(kid), keyStart: kid.valueStart, value: next.node };
          items.push({ kind: 'map', start: kid.node.start, entries: [entry] });
          i++;
        } else items.push(kid.node);
      }
    } else {
      // A block sequence: an entry with nothing after its dash is null, opened by no node.
      let k = 0;
      for (const item of value) {
        const kid = kids[k];
        if (
          kid &&
          (kids.length - k === value.length - items.length || Object.is(kid.result, item))
        ) {
          items.push(kid.node);
          k++;
        } else items.push({ kind: 'leaf', start });
      }
    }
    return { node: { kind: 'seq', start, items }, valueStart, end, result };
  }
  return { node: { kind: 'leaf', start }, valueStart, end, result };
}

function leaf(read: Read): PosNode {
  return { kind: 'leaf', start: read.node.start };
}

/**
 * Where a node is said to start, as YAML 1.2 readers report it: at its anchor's name
 * (`&name`), else at its value, past its tag; a quoted scalar inside its quotes, a block
 * scalar (`|`, `>`) at the line after its header. Properties on the line of a block
 * mapping's first key are that key's.
 */
function nodeStart(input: string, at: number, kind: LoaderState['kind']): number {
  const value = skipProperties(input, at);
  const c = input.charCodeAt(value);
  const collection = kind === 'mapping' || kind === 'sequence';
  // A block collection: its properties stand on a line of their own, or belong to its first key.
  if (collection && c !== 0x7b && c !== 0x5b && !/[\n\r]/.test(input.slice(at, value))) return at;
  for (let p = at; p < value; p = skipToken(input, p)) {
    if (input.charCodeAt(p) === 0x26 /* & */) return p + 1;
  }
  if (c === 0x2a /* * */) return value + 1;
  if (kind === 'scalar') {
    if (c === 0x22 || c === 0x27) return value + 1;
    if (c === 0x7c /* | */ || c === 0x3e /* > */) return input.indexOf('\n', value) + 1;
  }
  return value;
}

/** Where a key is said to start: at its value, past its properties (an anchor is the key's). */
function keyStart(input: string, at: number): number {
  const value = skipProperties(input, at);
  const c = input.charCodeAt(value);
  if (c === 0x22 || c === 0x27) return value + 1;
  return c === 0x7c || c === 0x3e ? input.indexOf('\n', value) + 1 : value;
}
