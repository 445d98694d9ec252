import assert from 'node:assert/strict';
import { DEFAULT_LIMITS, parseFile } from '../../../src/load/index.js';

/**
 * What js-yaml 4 reads without complaint but bpa refuses (src/load/yaml-checks.ts), and what
 * it must keep reading: one small file per case, the expected code and line beside it, or
 * the documents it reads. A list or mapping used as a key is reported at the start of the
 * mapping holding it (for a document's root, as the validation corpus has it).
 */
const aliases = (n: number): string => `a: &a x\nb: [${Array(n).fill('*a').join(', ')}]\n`;
const blockAliases = (n: number): string => `a: &a x\nb:\n${'  - *a\n'.repeat(n)}`;

const REFUSED: Array<[string, string, string, number]> = [
  ['101 aliases in one document', aliases(101), 'YAML_ALIAS_LIMIT', 2],
  ['101 aliases, each a list entry of its own', blockAliases(101), 'YAML_ALIAS_LIMIT', 103],
  ['a list as a key', 'apiVersion: v1\n[a, b]: c\n', 'YAML_SYNTAX', 1],
  [
    'a mapping as a key, at the start of its mapping',
    'a: 1\nb:\n  c: 1\n  {x: 1}: 2\n',
    'YAML_SYNTAX',
    3,
  ],
  ['a list as an explicit key', '? [a]\n: 1\n', 'YAML_SYNTAX', 1],
  ['a list as a key, JSON-like', '{[a]:b}\n', 'YAML_SYNTAX', 1],
  ['a block list as an explicit key', '? - a\n: b\n', 'YAML_SYNTAX', 1],
  // Where the checks run (the alias), a list before a line starting with ": " is no key.
  ['a value with no key after a list', 'a:\n  - x\n: y\n# *\n', 'YAML_SYNTAX', 3],
  ['a merge key given a list of lists', 'a:\n  <<: [[1, 2]]\n', 'YAML_SYNTAX', 2],
  ['a merge key given a scalar', 'a:\n  b: 1\n  <<: 1\n', 'YAML_SYNTAX', 3],
  ['a mapping on a document marker line', 'a: 1\n--- b: 2\n', 'YAML_SYNTAX', 2],
  ['a list on a document marker line', '--- - a\n', 'YAML_SYNTAX', 1],
  ['a flow collection closed below its key (a warning)', 'a: [\n  b\n]\n', 'YAML_SYNTAX', 3],
];

const READ: Array<[string, string, unknown[]]> = [
  ['100 aliases in one document', aliases(100), [{ a: 'x', b: Array(100).fill('x') }]],
  [
    '100 aliases, each a list entry of its own',
    blockAliases(100),
    [{ a: 'x', b: Array(100).fill('x') }],
  ],
  [
    '60 aliases in each of two documents',
    `${aliases(60)}---\n${aliases(60)}`,
    [
      { a: 'x', b: Array(60).fill('x') },
      { a: 'x', b: Array(60).fill('x') },
    ],
  ],
  [
    'collections as values',
    'a: [1]\nb: {c: [2]}\nd:\n  - [x]\n',
    [{ a: [1], b: { c: [2] }, d: [['x']] }],
  ],
  [
    'merge keys',
    'd: &d {x: 1, y: 1}\ne: &e {y: 2}\nm:\n  <<: [*d, *e]\n  x: 3\nn: {<<: *e}\n',
    [{ d: { x: 1, y: 1 }, e: { y: 2 }, m: { x: 3, y: 1 }, n: { y: 2 } }],
  ],
  [
    'keys starting with a colon after collections',
    'a: [1]\n:b: 2\nc:\n- x\n:d: y\n',
    [{ a: [1], ':b': 2, c: ['x'], ':d': 'y' }],
  ],
  ['JSON', '{"a":[1],"b":{"c":1}}\n', [{ a: [1], b: { c: 1 } }]],
  ['<< as a value, and quoted as a key', 'a: <<\n"<<": 1\n', [{ a: '<<', '<<': 1 }]],
  [
    'a flow collection and a block scalar on marker lines',
    '--- [a]\n--- |\n  x\n--- &r\nb: 1\n',
    [['a'], 'x\n', { b: 1 }],
  ],
];

describe('YAML that js-yaml 4 reads and bpa refuses', () => {
  for (const [name, text, code, line] of REFUSED) {
    it(`${name}: ${code} at line ${line}`, () => {
      const parsed = parseFile('f.yaml', text, DEFAULT_LIMITS);
      assert.deepEqual(
        parsed.problems.map((p) => [p.code, p.line]),
        [[code, line]],
        JSON.stringify(parsed.problems),
      );
      assert.deepEqual(parsed.documents, []);
    });
  }
});

describe('YAML that the checks leave alone', () => {
  for (const [name, text, values] of READ) {
    it(name, () => {
      const parsed = parseFile('f.yaml', text, DEFAULT_LIMITS);
      assert.deepEqual(parsed.problems, []);
      assert.deepEqual(
        parsed.documents.map((d) => d.value),
        values,
      );
    });
  }
});
