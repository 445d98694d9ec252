import { resolvePlain } from './core-schema.js';

/**
 * A reader for the YAML that sites are written in, and nothing else: block mappings with
 * plain keys, block sequences (compact `- key: value` entries too), flow mappings and
 * sequences (`{a: 1, b: [x, y]}`, over several lines too), and scalars on one line, plain or
 * quoted without escapes, with comments and blank lines between. It reads each line once,
 * with no per-character state machine, and is more than twice as fast as js-yaml 4 on such
 * files (docs/PERFORMANCE.md).
 *
 * It declines (returns undefined) anything else, and the caller reads the file with js-yaml 4
 * or 5 as before: block scalars, scalars over several lines, escapes, quoted, empty or
 * complex keys, a `:` in a plain scalar of a flow collection, empty or trailing flow entries,
 * a duplicated key, `__proto__`, a sequence entry that is itself a block sequence, an empty
 * document, a document that is one scalar, indentation that is not exactly one of the
 * enclosing levels, carriage returns, non-printable characters, `...` document end markers,
 * and nesting near `maxDepth`.
 * What it does read, it reads as js-yaml 5's core schema does (`resolvePlain`), which
 * `test/unit/load/semantics.test.ts` checks over generated documents in both styles.
 * It runs first, on its own: aliases, anchors and tags start with an indicator it declines,
 * a merge key (`<<`) is declined, and so are tabs and files with more documents than
 * `maxDocumentsPerFile` (the slower path reports those).
 */
export function loadBlock(
  text: string,
  limits: { maxDepth: number; maxDocumentsPerFile: number },
): unknown[] | undefined {
  // Printable ASCII and line feeds (most sites) hold none of what is checked for next.
  if (
    NOT_PLAIN_ASCII.test(text) &&
    (text.includes('\r') ||
      text.includes('\t') ||
      text.includes('\uFEFF') ||
      NON_PRINTABLE.test(text))
  )
    return undefined;
  try {
    return new BlockReader(text, limits.maxDepth, limits.maxDocumentsPerFile).documents();
  } catch (err: unknown) {
    if (err === DECLINE) return undefined;
    throw err;
  }
}

/** Anything but printable ASCII and line feeds: one character class, twice as fast to scan. */
const NOT_PLAIN_ASCII = /[^\n\x20-\x7e]/;

/** What YAML does not allow in a stream, as js-yaml checks it: the reference reports it. */
const NON_PRINTABLE =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;

/** Thrown to give up on a file: caught in loadBlock only. */
const DECLINE = new Error('not in the block subset');

const SPACE = 0x20;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const QUESTION = 0x3f;
const NEWLINE = 0x0a;
const COMMA = 0x2c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

/**
 * Strings read before, found again by their text without making a new string: a few dozen
 * keys, and words such as a namespace, a state or a NIC model, repeat across thousands of
 * hosts. One string for each is less to allocate, less for the garbage collector to move and,
 * for a key, no new property name to look up. A slot, chosen by length and end characters,
 * keeps the first string that fell in it for the life of the process (a bounded set, each of
 * its own text: never a slice that would keep a whole file's text alive).
 */
class StringSlots {
  private readonly slots: Array<string | undefined>;
  private readonly mask: number;

  constructor(size: number) {
    this.slots = new Array<string | undefined>(size);
    this.mask = size - 1;
  }

  private slot(text: string, start: number, stop: number): number {
    return (
      ((stop - start) * 31 + text.charCodeAt(start) * 7 + text.charCodeAt(stop - 1)) & this.mask
    );
  }

  /** The string kept for text[start, stop), when there is one. */
  find(text: string, start: number, stop: number): string | undefined {
    const known = this.slots[this.slot(text, start, stop)];
    return known !== undefined && known.length === stop - start && text.startsWith(known, start)
      ? known
      : undefined;
  }

  /** Keeps `s` (a slice of `text` at `start`) when its slot is free; returns what to use. */
  keep(s: string): string {
    const slot = this.slot(s, 0, s.length);
    if (this.slots[slot] !== undefined) return s;
    // A slice of 13 characters or more refers to the text it was cut from: one cut from a
    // concatenation refers to that copy, and keeps no file's text alive.
    const own = s.length < 13 ? s : (s + ' ').slice(0, -1);
    this.slots[slot] = own;
    return own;
  }
}

const KEYS = new StringSlots(1024);
const WORDS = new StringSlots(4096);

/** The value of the plain scalar at text[start, stop): a string kept before, when it is one. */
function plainValue(text: string, start: number, stop: number): unknown {
  const known = WORDS.find(text, start, stop);
  if (known !== undefined) return known;
  const raw = text.slice(start, stop);
  const value = resolvePlain(raw);
  return typeof value === 'symbol' ? WORDS.keep(raw) : value;
}

/** Characters that may not start a plain scalar (YAML 1.2 indicators), besides `-`, `?`, `:`. */
const INDICATORS = charTable('[]{},#&*!|>\'"%@`', 1);

function isIndicator(c: number): boolean {
  return c < 0x80 && INDICATORS[c] === 1;
}

/**
 * What each ASCII character is to a plain scalar in a flow collection: 0 part of it, END (`,`,
 * `]`, `}`, a line break) the end of it, COMMENT (`#`) its end after a space, DECLINED (`:`,
 * `[`, `{`) something the reader leaves to the slower path. One table read per character.
 */
const END = 1;
const COMMENT = 2;
const DECLINED = 3;
const IN_FLOW_PLAIN = charTable(',]}\n', END);
IN_FLOW_PLAIN[HASH] = COMMENT;
for (const c of ':[{') IN_FLOW_PLAIN[c.charCodeAt(0)] = DECLINED;

function charTable(chars: string, value: number): Uint8Array {
  const table = new Uint8Array(0x80);
  for (const c of chars) table[c.charCodeAt(0)] = value;
  return table;
}

class BlockReader {
  private readonly text: string;
  private readonly maxDepth: number;
  /** Documents left before the limit: past it, the slower path reports TOO_MANY_DOCUMENTS. */
  private documentsLeft: number;
  /** The current content line: its indentation, first and past-last content offsets. */
  private indent = -1;
  private start = 0;
  private end = 0;
  /** Where the line after the current one starts. */
  private next = 0;
  /** Inside a flow collection: the offset being read (flow collections may span lines). */
  private p = 0;

  constructor(text: string, maxDepth: number, maxDocuments: number) {
    this.text = text;
    this.maxDepth = maxDepth;
    this.documentsLeft = maxDocuments;
  }

  documents(): unknown[] {
    const docs: unknown[] = [];
    this.advance();
    if (this.indent < 0 && this.start < this.text.length) this.advance(); // a leading `---`
    for (;;) {
      // An empty document (nothing, two markers in a row, a marker at the end): js-yaml 4
      // and 5 count those differently in places, so the reference decides.
      if (this.indent !== 0 || --this.documentsLeft < 0) throw DECLINE;
      docs.push(this.isFlowStart(this.start) ? this.inline(this.start, 0, 1) : this.node(0, 1));
      if (this.indent >= 0) throw DECLINE; // more after the document's root node
      if (this.start >= this.text.length) return docs; // the end of the text
      this.advance(); // past the `---`
    }
  }

  /**
   * Moves to the next line with content, skipping blank and comment lines. At a `---` line or
   * the end of the text, `indent` is -1 and `start` is where the marker line starts (the
   * text's length at its end).
   */
  private advance(): void {
    const text = this.text;
    let pos = this.next;
    while (pos < text.length) {
      let eol = text.indexOf('\n', pos);
      if (eol === -1) eol = text.length;
      let first = pos;
      while (first < eol && text.charCodeAt(first) === SPACE) first++;
      if (first < eol && text.charCodeAt(first) !== HASH) {
        // A document end marker (`...` alone or before a space): js-yaml 5 ends the document
        // there and reads the rest of the line as a new one; left to it.
        if (first === pos && this.isMarker('...', pos, eol)) throw DECLINE;
        if (first === pos && this.isMarker('---', pos, eol)) {
          // A document marker, with at most a comment after it.
          let after = pos + 3;
          while (after < eol && text.charCodeAt(after) === SPACE) after++;
          if (after < eol && text.charCodeAt(after) !== HASH) throw DECLINE;
          this.indent = -1;
          this.start = pos;
          this.end = eol;
          this.next = eol + 1;
          return;
        }
        let last = eol;
        while (text.charCodeAt(last - 1) === SPACE) last--;
        this.indent = first - pos;
        this.start = first;
        this.end = last;
        this.next = eol + 1;
        return;
      }
      pos = eol + 1;
    }
    this.indent = -1;
    this.start = text.length;
    this.end = text.length;
    this.next = text.length + 1;
  }

  /** `marker` (`---` or `...`) at column 0, alone on its line or before a space. */
  private isMarker(marker: string, pos: number, eol: number): boolean {
    return (
      this.text.startsWith(marker, pos) &&
      (pos + 3 === eol || this.text.charCodeAt(pos + 3) === SPACE)
    );
  }

  /** The node whose first line is the current line, at its indentation. */
  private node(indent: number, depth: number): unknown {
    return this.isEntry(this.start)
      ? this.sequence(indent, depth)
      : this.mapping(indent, this.start, depth);
  }

  /**
   * A collection at `depth` (a document's root is 1) holds nodes one level deeper, which
   * js-yaml 5 counts towards `maxDepth` too, scalars included; one more level is kept spare,
   * so that what this reader accepts is never too deep for the reference.
   */
  private checkDepth(depth: number): void {
    if (depth + 2 > this.maxDepth) throw DECLINE;
  }

  /** `- ` (or a lone `-`, which the caller has declined before) at `at`. */
  private isEntry(at: number): boolean {
    if (this.text.charCodeAt(at) !== DASH) return false;
    return at + 1 === this.end || this.text.charCodeAt(at + 1) === SPACE;
  }

  private sequence(indent: number, depth: number): unknown[] {
    this.checkDepth(depth);
    const out: unknown[] = [];
    while (this.indent === indent && this.isEntry(this.start)) {
      let item = this.start + 1;
      while (item < this.end && this.text.charCodeAt(item) === SPACE) item++;
      if (item >= this.end || this.isEntry(item)) throw DECLINE; // empty, or `- - a`
      const column = indent + (item - this.start);
      if (!this.isFlowStart(item) && this.keyEnd(item) !== -1) {
        out.push(this.mapping(column, item, depth + 1));
      } else {
        out.push(this.inline(item, indent, depth + 1));
      }
      if (this.indent > indent) throw DECLINE; // a scalar over several lines, or misplaced
    }
    return out;
  }

  /**
   * A block mapping whose keys are at `column`; its first key starts at `first` on the current
   * line (after a `- ` when the mapping is a sequence entry).
   */
  private mapping(column: number, first: number, depth: number): Record<string, unknown> {
    this.checkDepth(depth);
    const out: Record<string, unknown> = {};
    let keyStart = first;
    for (;;) {
      const colon = this.keyEnd(keyStart);
      if (colon === -1) throw DECLINE;
      const key = this.key(keyStart, colon);
      if (Object.prototype.hasOwnProperty.call(out, key) || key === '__proto__') throw DECLINE;
      let value = colon + 1;
      while (value < this.end && this.text.charCodeAt(value) === SPACE) value++;
      if (value < this.end && this.text.charCodeAt(value) !== HASH) {
        out[key] = this.inline(value, column, depth + 1);
      } else {
        this.advance();
        if (this.indent > column) {
          out[key] = this.node(this.indent, depth + 1);
        } else if (this.indent === column && this.isEntry(this.start)) {
          out[key] = this.sequence(column, depth + 1); // `key:` then `- a` at the key's column
        } else {
          out[key] = null;
        }
      }
      if (this.indent !== column) {
        if (this.indent > column) throw DECLINE;
        return out;
      }
      if (this.isEntry(this.start)) return out; // the enclosing sequence's next entry
      keyStart = this.start;
    }
  }

  private isFlowStart(at: number): boolean {
    const c = this.text.charCodeAt(at);
    return c === LBRACE || c === LBRACKET;
  }

  /**
   * A value that starts on the current line at `start`: a scalar, or a flow collection, which
   * may go on over the next lines, each indented more than `column` (the block it is in); what
   * follows it on its last line can only be a comment. Moves to the next line.
   */
  private inline(start: number, column: number, depth: number): unknown {
    if (!this.isFlowStart(start)) {
      const value = this.scalar(start, this.end);
      this.advance();
      return value;
    }
    const text = this.text;
    this.p = start;
    const value = this.flowNode(column, depth);
    let p = this.p;
    while (text.charCodeAt(p) === SPACE) p++;
    if (p < text.length && text.charCodeAt(p) !== NEWLINE) {
      if (text.charCodeAt(p) !== HASH || text.charCodeAt(p - 1) !== SPACE) throw DECLINE;
      const eol = text.indexOf('\n', p);
      p = eol === -1 ? text.length : eol;
    }
    this.next = p + 1;
    this.advance();
    return value;
  }

  /** Spaces, line breaks and comments inside a flow collection; lines indented past `column`. */
  private flowSpace(column: number): void {
    const text = this.text;
    let p = this.p;
    for (;;) {
      const c = text.charCodeAt(p);
      if (c === SPACE) {
        p++;
      } else if (c === NEWLINE) {
        p++;
        let indent = 0;
        while (text.charCodeAt(p) === SPACE) {
          p++;
          indent++;
        }
        const next = text.charCodeAt(p);
        if (next !== NEWLINE && p < text.length && indent <= column) throw DECLINE;
      } else if (c === HASH && text.charCodeAt(p - 1) === SPACE) {
        const eol = text.indexOf('\n', p);
        p = eol === -1 ? text.length : eol;
      } else {
        break;
      }
    }
    this.p = p;
  }

  private flowNode(column: number, depth: number): unknown {
    const c = this.text.charCodeAt(this.p);
    if (c === LBRACE) return this.flowMapping(column, depth);
    if (c === LBRACKET) return this.flowSequence(column, depth);
    if (c === DQUOTE || c === SQUOTE) {
      let eol = this.text.indexOf('\n', this.p);
      if (eol === -1) eol = this.text.length;
      const close = this.closingQuote(this.p, eol, c);
      const value = this.quotedText(this.p, close, c);
      this.p = close + 1;
      return value;
    }
    return this.flowPlain();
  }

  private flowMapping(column: number, depth: number): Record<string, unknown> {
    this.checkDepth(depth);
    const text = this.text;
    const out: Record<string, unknown> = {};
    this.p++;
    this.flowSpace(column);
    if (text.charCodeAt(this.p) === RBRACE) {
      this.p++;
      return out;
    }
    for (;;) {
      // A plain key and `: `; anything else (a quoted, empty or complex key) is declined.
      const start = this.p;
      let p = start;
      for (;;) {
        const ch = text.charCodeAt(p);
        if (ch === COLON) {
          const after = text.charCodeAt(p + 1);
          if (after === SPACE || after === NEWLINE) break;
          throw DECLINE;
        }
        if (
          Number.isNaN(ch) ||
          ch === COMMA ||
          ch === NEWLINE ||
          ch === LBRACKET ||
          ch === RBRACKET ||
          ch === LBRACE ||
          ch === RBRACE ||
          (ch === HASH && text.charCodeAt(p - 1) === SPACE)
        )
          throw DECLINE;
        p++;
      }
      const key = this.key(start, p);
      if (Object.prototype.hasOwnProperty.call(out, key) || key === '__proto__') throw DECLINE;
      this.p = p + 1;
      this.flowSpace(column);
      const c = text.charCodeAt(this.p);
      if (c === COMMA || c === RBRACE) throw DECLINE; // no value
      out[key] = this.flowNode(column, depth + 1);
      this.flowSpace(column);
      const sep = text.charCodeAt(this.p);
      this.p++;
      if (sep === RBRACE) return out;
      if (sep !== COMMA) throw DECLINE;
      this.flowSpace(column);
      if (text.charCodeAt(this.p) === RBRACE) throw DECLINE; // a trailing comma
    }
  }

  private flowSequence(column: number, depth: number): unknown[] {
    this.checkDepth(depth);
    const text = this.text;
    const out: unknown[] = [];
    this.p++;
    this.flowSpace(column);
    if (text.charCodeAt(this.p) === RBRACKET) {
      this.p++;
      return out;
    }
    for (;;) {
      const c = text.charCodeAt(this.p);
      if (c === COMMA || c === RBRACKET) throw DECLINE; // an empty entry
      out.push(this.flowNode(column, depth + 1));
      this.flowSpace(column);
      const sep = text.charCodeAt(this.p);
      this.p++;
      if (sep === RBRACKET) return out;
      if (sep !== COMMA) throw DECLINE; // `[a: b]`, `[a b\n c]`, …
      this.flowSpace(column);
      if (text.charCodeAt(this.p) === RBRACKET) throw DECLINE; // a trailing comma
    }
  }

  /** A plain scalar inside a flow collection, on one line; one with a `:` is declined. */
  private flowPlain(): unknown {
    const text = this.text;
    const start = this.p;
    const c = text.charCodeAt(start);
    if (isIndicator(c) || Number.isNaN(c)) throw DECLINE;
    if (c === DASH || c === QUESTION || c === COLON) {
      const after = text.charCodeAt(start + 1);
      if (after === SPACE || after === NEWLINE || isIndicator(after)) throw DECLINE;
    }
    let p = start;
    for (; p < text.length; p++) {
      const ch = text.charCodeAt(p);
      const is = ch < 0x80 ? (IN_FLOW_PLAIN[ch] as number) : 0;
      if (is === 0) continue;
      if (is === END) break;
      if (is === COMMENT) {
        if (text.charCodeAt(p - 1) === SPACE) break;
      } else throw DECLINE;
    }
    let stop = p;
    while (text.charCodeAt(stop - 1) === SPACE) stop--;
    this.p = p;
    return plainValue(text, start, stop);
  }

  /**
   * The offset of the `:` ending a plain key that starts at `at` on the current line, or -1
   * when the line holds no `key:` there. Quoted keys and keys that look like anything else
   * are declined.
   */
  private keyEnd(at: number): number {
    const text = this.text;
    const c = text.charCodeAt(at);
    if (c === DQUOTE || c === SQUOTE) {
      // A quoted scalar, or a quoted key: a key is declined, a scalar is read by scalar().
      const close = text.indexOf(String.fromCharCode(c), at + 1);
      if (close !== -1 && close < this.end) {
        let after = close + 1;
        while (after < this.end && text.charCodeAt(after) === SPACE) after++;
        if (after < this.end && text.charCodeAt(after) === COLON) throw DECLINE;
      }
      return -1;
    }
    for (let i = at; i < this.end; i++) {
      const ch = text.charCodeAt(i);
      if (ch === COLON) {
        if (i + 1 === this.end || text.charCodeAt(i + 1) === SPACE) return i;
      } else if (ch === HASH && text.charCodeAt(i - 1) === SPACE) {
        return -1; // a comment starts before any `key:`
      }
    }
    return -1;
  }

  /** A plain key, as js-yaml stores it: the string of the value it resolves to. */
  private key(start: number, colon: number): string {
    if (colon === start || this.text.charCodeAt(colon - 1) === SPACE) throw DECLINE;
    const c = this.text.charCodeAt(start);
    if (
      isIndicator(c) ||
      c === COLON ||
      ((c === DASH || c === QUESTION) && this.text.charCodeAt(start + 1) === SPACE)
    )
      throw DECLINE;
    // The same few dozen keys make up most of a site: one read before is used again as it is,
    // without a new string to make, resolve and look up as a property name.
    const known = KEYS.find(this.text, start, colon);
    if (known !== undefined) return known;
    const raw = this.text.slice(start, colon);
    if (raw === '<<') throw DECLINE; // a merge key: js-yaml 5 merges
    const value = resolvePlain(raw);
    if (typeof value !== 'symbol') return String(value);
    return KEYS.keep(raw);
  }

  /** A scalar from `start` to `end` on one line: plain, or quoted without escapes. */
  private scalar(start: number, end: number): unknown {
    const text = this.text;
    const c = text.charCodeAt(start);
    if (c === DQUOTE || c === SQUOTE) return this.quoted(start, end, c);
    if (isIndicator(c)) throw DECLINE;
    if (
      (c === DASH || c === QUESTION || c === COLON) &&
      (start + 1 === end || text.charCodeAt(start + 1) === SPACE)
    )
      throw DECLINE;
    let stop = end;
    for (let i = start; i < end; i++) {
      const ch = text.charCodeAt(i);
      if (ch === HASH && text.charCodeAt(i - 1) === SPACE) {
        stop = i;
        break;
      }
      // `a: b: c` is an error, `a: b:` too: the reference reports them.
      if (ch === COLON && (i + 1 === end || text.charCodeAt(i + 1) === SPACE)) throw DECLINE;
    }
    while (text.charCodeAt(stop - 1) === SPACE) stop--;
    return plainValue(text, start, stop);
  }

  /** A quoted scalar on one line, from its opening quote at `start`, then only a comment. */
  private quoted(start: number, end: number, quote: number): string {
    const text = this.text;
    const close = this.closingQuote(start, end, quote);
    let after = close + 1;
    while (after < end && text.charCodeAt(after) === SPACE) after++;
    if (after < end && !(text.charCodeAt(after) === HASH && after > close + 1)) throw DECLINE;
    return this.quotedText(start, close, quote);
  }

  /** The offset of the quote closing the scalar opened at `start`, before `end` (the line's). */
  private closingQuote(start: number, end: number, quote: number): number {
    const text = this.text;
    const mark = quote === DQUOTE ? '"' : "'";
    let from = start + 1;
    for (;;) {
      const close = text.indexOf(mark, from);
      if (close === -1 || close >= end) throw DECLINE; // over several lines
      if (quote === SQUOTE && text.charCodeAt(close + 1) === SQUOTE) {
        from = close + 2; // `''` is one quote
        continue;
      }
      return close;
    }
  }

  /** The text of a quoted scalar: escapes (a backslash in double quotes) are declined. */
  private quotedText(start: number, close: number, quote: number): string {
    const raw = this.text.slice(start + 1, close);
    if (quote === DQUOTE) {
      if (raw.includes('\\')) throw DECLINE;
      return raw;
    }
    return raw.includes("''") ? raw.replace(/''/g, "'") : raw;
  }
}
