/**
 * Text for a terminal: what a terminal would act on instead of showing is written as an
 * escape. File names and values come from a site repository, and a name holding ESC or a
 * newline could otherwise move the cursor, rewrite earlier lines, set the window title, or
 * forge a whole line of output.
 *
 * Escaped: C0 controls (`\n`, `\r`, `\t` by name, the others as `\xHH`), DEL and the C1
 * controls (`\xHH`), and the characters that make text read differently than it is stored:
 * the line and paragraph separators and the bidirectional embeddings, overrides and isolates
 * (`\uHHHH`).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
