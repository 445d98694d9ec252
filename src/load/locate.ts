import type { Event } from 'js-yaml';
import { jsYaml5 } from './yaml-libs.js';
import { parsePointer } from '../util/problem.js';

/**
 * Source positions for values inside a file, built only for files that have problems.
 * Uses js-yaml 5's event stream: js-yaml 5 is the reference parser, which decides every file
 * the fast loader (js-yaml 4) declines, and reads the same documents and keys as the fast
 * loader where it decides (test/unit/load/semantics.test.ts), so documents are indexed and
 * keys are read exactly as the loader read them.
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
  private docs: Array<PosNode | undefined> | undefined;

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
    return this.position(Math.max(offset, 0));
  }

  /** Where document `doc` starts. */
  documentStart(doc: number): Position {
    const root = this.documents()[doc];
    return this.position(Math.max(root?.start ?? 0, 0));
  }

  private documents(): Array<PosNode | undefined> {
    if (!this.docs) this.docs = buildTrees(this.text);
    return this.docs;
  }
}

function buildTrees(text: string): Array<PosNode | undefined> {
  const { EVENT_ID, getScalarValue, parseEvents } = jsYaml5();
  let events: Event[];
  try {
    events = parseEvents(text, { maxDepth: 1000 });
  } catch {
    return [];
  }
  const docs: Array<PosNode | undefined> = [];
  let i = 0;
  const node = (): PosNode => {
    const ev = events[i++];
    if (!ev) return { kind: 'leaf', start: 0 };
    switch (ev.type) {
      case EVENT_ID.MAPPING: {
        const start = ev.anchorStart >= 0 ? ev.anchorStart : ev.start;
        const entries: Array<{ key: string; keyStart: number; value: PosNode }> = [];
        while (events[i] && events[i]?.type !== EVENT_ID.POP) {
          const keyEv = events[i];
          let key = '';
          let keyStart = start;
          if (keyEv?.type === EVENT_ID.SCALAR) {
            key = getScalarValue(text, keyEv);
            keyStart = keyEv.valueStart;
            i++;
          } else {
            keyStart = node().start; // a complex key: not addressable by a pointer
          }
          entries.push({ key, keyStart, value: node() });
        }
        i++;
        return { kind: 'map', start, entries };
      }
      case EVENT_ID.SEQUENCE: {
        const start = ev.anchorStart >= 0 ? ev.anchorStart : ev.start;
        const items: PosNode[] = [];
        while (events[i] && events[i]?.type !== EVENT_ID.POP) items.push(node());
        i++;
        return { kind: 'seq', start, items };
      }
      case EVENT_ID.SCALAR:
        return { kind: 'leaf', start: ev.anchorStart >= 0 ? ev.anchorStart : ev.valueStart };
      case EVENT_ID.ALIAS:
        return { kind: 'leaf', start: ev.anchorStart };
      default:
        return { kind: 'leaf', start: 0 };
    }
  };
  while (i < events.length) {
    const ev = events[i++];
    if (ev?.type !== EVENT_ID.DOCUMENT) continue;
    if (events[i]?.type === EVENT_ID.POP) {
      docs.push(undefined);
      i++;
      continue;
    }
    docs.push(node());
    i++; // the document's POP
  }
  return docs;
}
