/**
 * Tokens of ISC dhcpd's lease file syntax: words, quoted strings, `{`, `}` and `;`. Quoted
 * strings are single tokens, so braces and `#` inside them never open a block or a comment.
 */
export type TokenKind = 'word' | 'string' | '{' | '}' | ';';

export interface Token {
  kind: TokenKind;
  text: string;
  line: number;
}

const NL = 10;
const HASH = 35;
const QUOTE = 34;
const BACKSLASH = 92;

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function isDelimiter(c: number): boolean {
  return isSpace(c) || c === 123 || c === 125 || c === 59 || c === QUOTE || c === HASH;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b' };

/** A one-pass tokenizer with one token of push-back; linear in the length of the text. */
export class IscLexer {
  private pos = 0;
  private line = 1;
  private pushed: Token | undefined;
  /** Line of a string that ran to the end of the text, for the caller's message. */
  unterminatedStringLine: number | undefined;

  constructor(private readonly src: string) {}

  next(): Token | undefined {
    if (this.pushed) {
      const t = this.pushed;
      this.pushed = undefined;
      return t;
    }
    this.skipBlanks();
    const s = this.src;
    if (this.pos >= s.length) return undefined;
    const line = this.line;
    const c = s.charCodeAt(this.pos);
    if (c === 123 || c === 125 || c === 59) {
      this.pos++;
      const kind = c === 123 ? '{' : c === 125 ? '}' : ';';
      return { kind, text: kind, line };
    }
    if (c === QUOTE) return { kind: 'string', text: this.readString(), line };
    const start = this.pos;
    while (this.pos < s.length && !isDelimiter(s.charCodeAt(this.pos))) this.pos++;
    return { kind: 'word', text: s.slice(start, this.pos), line };
  }

  pushBack(token: Token): void {
    this.pushed = token;
  }

  private skipBlanks(): void {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === NL) {
        this.line++;
        this.pos++;
      } else if (isSpace(c)) {
        this.pos++;
      } else if (c === HASH) {
        const eol = s.indexOf('\n', this.pos);
        this.pos = eol < 0 ? s.length : eol;
      } else {
        return;
      }
    }
  }

  /** Reads a quoted string after its opening quote, decoding dhcpd's backslash escapes. */
  private readString(): string {
    const s = this.src;
    const startLine = this.line;
    this.pos++;
    let out = '';
    let chunk = this.pos;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === QUOTE) {
        out += s.slice(chunk, this.pos);
        this.pos++;
        return out;
      }
      if (c === NL) this.line++;
      if (c === BACKSLASH && this.pos + 1 < s.length) {
        out += s.slice(chunk, this.pos);
        this.pos = this.readEscape(this.pos + 1, (text) => (out += text));
        chunk = this.pos;
        continue;
      }
      this.pos++;
    }
    this.unterminatedStringLine ??= startLine;
    return out + s.slice(chunk);
  }

  /** Decodes one escape starting at `at` (after the backslash); returns the position after it. */
  private readEscape(at: number, emit: (text: string) => void): number {
    const s = this.src;
    const e = s[at] ?? '';
    const octal = /^[0-7]{1,3}/.exec(s.slice(at, at + 3));
    if (octal) {
      emit(String.fromCharCode(parseInt(octal[0], 8) & 0xff));
      return at + octal[0].length;
    }
    const hex = e === 'x' ? /^[0-9a-f]{1,2}/i.exec(s.slice(at + 1, at + 3)) : null;
    if (hex) {
      emit(String.fromCharCode(parseInt(hex[0], 16)));
      return at + 1 + hex[0].length;
    }
    if (e === '\n') this.line++;
    emit(ESCAPES[e] ?? e);
    return at + 1;
  }
}
