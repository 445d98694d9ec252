import assert from 'node:assert/strict';
import { printable } from '../../../src/util/printable.js';

describe('printable', () => {
  const table: Array<[string, string, string]> = [
    ['plain text, unicode and backslashes are kept', 'café ≥ 1 \\ "x" …', 'café ≥ 1 \\ "x" …'],
    ['a newline and a carriage return', 'a\nb\rc', 'a\\nb\\rc'],
    ['a tab', 'a\tb', 'a\\tb'],
    ['an ANSI colour', '\u001b[31mred\u001b[0m', '\\x1b[31mred\\x1b[0m'],
    ['an OSC window title ended by BEL', '\u001b]0;owned\u0007', '\\x1b]0;owned\\x07'],
    ['NUL, DEL and a C1 CSI', '\u0000\u007f\u009b2J', '\\x00\\x7f\\x9b2J'],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'a\\u2028b\\u2029c'],
    ['a right-to-left override (Trojan Source)', 'abc\u202egpj.exe', 'abc\\u202egpj.exe'],
    ['bidi isolates', '\u2066x\u2069', '\\u2066x\\u2069'],
  ];
  for (const [what, input, output] of table) {
    it(what, () => assert.equal(printable(input), output));
  }
  it('leaves no character a terminal acts on', () => {
    let all = '';
    for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
    // eslint-disable-next-line no-control-regex
    const unsafe = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
    assert.doesNotMatch(printable(all), unsafe);
  });
});
