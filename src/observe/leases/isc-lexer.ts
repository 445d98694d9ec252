/**
 * Tokens of ISC dhcpd's lease file syntax: words, quoted strings, `{`, `}` and `;`. Quoted
 * strings are single tokens, so braces and `#` inside them never open a block or a comment.
 */
export type TokenKind = 'word' | 'string' | '{' | '}' | ';';

export interface Token {
  kind: TokenKind;
  /** For a string: the raw text between the quotes, escapes not decoded. */
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

  /**
   * Reads a quoted string after its opening quote. The token holds the raw text between the
   * quotes: most strings (uids, option values) are never looked at, so escapes are decoded
   * only on demand by decodeIscString.
   */
  private readString(): string {
    const s = this.src;
    const startLine = this.line;
    const start = ++this.pos;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === QUOTE) return s.slice(start, this.pos++);
      if (c === NL) this.line++;
      // The escaped character, even a quote or a newline, belongs to the string.
      if (c === BACKSLASH && s.charCodeAt(this.pos + 1) === NL) this.line++;
      this.pos += c === BACKSLASH ? 2 : 1;
    }
    this.pos = s.length;
    this.unterminatedStringLine ??= startLine;
    return s.slice(start);
  }
}

const ESCAPE = /\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|([\s\S]))/g;

/** Decodes dhcpd's backslash escapes in a string token: `\"`, `\\`, `\n`, octal and hex bytes. */
export function decodeIscString(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(ESCAPE, (_m, oct?: string, hex?: string, ch?: string) => {
    if (oct !== undefined) return String.fromCharCode(parseInt(oct, 8) & 0xff);
    if (hex !== undefined) return String.fromCharCode(parseInt(hex, 16));
    return ESCAPES[ch ?? ''] ?? ch ?? '';
  });
}
