import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../../src/load/index.js';
import { loadBlock } from '../../../src/load/block-yaml.js';
import { loadExact, loadFast, usesRareFeatures } from '../../../src/load/parse.js';

/**
 * The fast loader (js-yaml 4) and the reference (js-yaml 5, which reports errors and
 * positions) must read every file the same way: where js-yaml 5 rejects a file, the fast
 * loader must not accept it; where js-yaml 5 accepts it, the fast loader reads the same
 * documents, or declines and js-yaml 5's reading is used.
 */
type Outcome = { ok: true; documents: unknown[] } | { ok: false };

/** The non-empty documents with their indexes: what `parseFile` keeps. */
function documents(values: unknown[]): unknown[] {
  return values.flatMap((v, i) => (v === null || v === undefined ? [] : [[i, v]]));
}

function reference(text: string): Outcome {
  try {
    return { ok: true, documents: documents(loadExact('t.yaml', text, DEFAULT_LIMITS)) };
  } catch {
    return { ok: false };
  }
}

/** How many texts the block reader (the first fast path) read itself, across the tests. */
let blockDecided = 0;

/** Compares the two readings; returns whether the fast loader decided (did not decline). */
function agree(text: string): boolean {
  const ref = reference(text);
  // The block reader on its own: it runs first, before any scan for rare features.
  const block = loadBlock(text, DEFAULT_LIMITS);
  if (block !== undefined) {
    assert.ok(ref.ok, `js-yaml 5 rejects, the block reader accepts:\n${text}`);
    assert.deepStrictEqual(documents(block), ref.documents, `block reader differs for:\n${text}`);
    blockDecided++;
  }
  const fast = loadFast(text, DEFAULT_LIMITS);
  if (!ref.ok) {
    assert.equal(fast, undefined, `js-yaml 5 rejects, js-yaml 4 accepts:\n${text}`);
    return false;
  }
  if (fast === undefined) return false;
  assert.deepStrictEqual(documents(fast), ref.documents, `different values for:\n${text}`);
  return true;
}
const SCALARS = [
  // null
  '~',
  'null',
  'Null',
  'NULL',
  'nULL',
  'NuLL',
  'none',
  'Nil',
  // bool (YAML 1.2: only true/false; YAML 1.1's yes/no/on/off are strings)
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  'False',
  'FALSE',
  'yes',
  'Yes',
  'no',
  'NO',
  'on',
  'off',
  'y',
  'n',
  // int
  '0',
  '-0',
  '+0',
  '00',
  '007',
  '08',
  '1',
  '-1',
  '+1',
  '42',
  '1_000',
  '1,000',
  '123456789012345678901234567890',
  '0o17',
  '0o',
  '0o8',
  '-0o17',
  '+0o17',
  '0O17',
  '017',
  '0x1F',
  '0x1f',
  '0x',
  '0xg',
  '-0x1F',
  '+0x1F',
  '0X1F',
  '0b101',
  '-0b101',
  '+0b101',
  '0b2',
  '9007199254740993',
  // float
  '1.0',
  '-1.0',
  '+1.0',
  '1.',
  '.5',
  '-.5',
  '+.5',
  '1e3',
  '1E3',
  '1e+3',
  '1e-3',
  '-1.5e-3',
  '1.5E+10',
  '1e',
  'e3',
  '1.2.3',
  '.',
  '-.',
  '1e400',
  '-1e400',
  '.inf',
  '.Inf',
  '.INF',
  '-.inf',
  '+.inf',
  '.iNF',
  'inf',
  'Infinity',
  '.nan',
  '.NaN',
  '.NAN',
  '-.nan',
  'NaN',
  '0.1',
  '3.14159',
  '6.8523015e+5',
  '685.230_15e+03',
  '1:20',
  '190:20:30',
  // merge key as a value, timestamps, other YAML 1.1 types (strings in the core schema)
  '<<',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '2001-12-14 21:59:43.10 -5',
  '0b',
  '=',
  // strings that look like numbers or other things
  '1.0.0',
  'v1',
  '10.244.64.0/18',
  '52:54:00:00:00:01',
  '4Gi',
  '100m',
  '0.5Gi',
  'x86_64',
  '- a',
  '-a',
  '+a',
  'a b',
  'a  b',
  'a:b',
  'a#b',
  'ü',
  'a\u00a0b',
  '"q"',
  "'q'",
  'ipmi://198.19.0.1',
  '@',
  '`',
];

const asValue = (s: string): string[] => [
  `k: ${s}\n`,
  `- ${s}\n`,
  `[${s}]\n`,
  `{k: ${s}}\n`,
  `${s}: v\n`,
  `{${s}: v}\n`,
  `k: "${s}"\n`,
  `k: '${s}'\n`,
  `k: !!int ${s}\n`,
  `k: !!float ${s}\n`,
  `k: !!bool ${s}\n`,
  `k: !!null ${s}\n`,
  `k: !!str ${s}\n`,
  `k: !!int "${s}"\n`,
  `k: |\n  ${s}\n`,
  `${s}\n`,
  `--- ${s}\n`,
];

const STRUCTURES: string[] = [
  'a: 1\nb: 2\n',
  'a:\n  b:\n    c: 1\n',
  'a:\n- 1\n- 2\n',
  'a:\n  - 1\n  - 2\n',
  '- a\n- b\n',
  '- - a\n  - b\n- c\n',
  '- a: 1\n  b: 2\n- c: 3\n',
  'a: [1, 2, {b: c}]\n',
  'a: {b: [1, 2], c: d}\n',
  'a: [\n  1,\n  2\n]\n',
  'a: {\n  b: 1,\n  c: 2\n}\n',
  'a: [1, 2,]\n',
  'a: {b: 1,}\n',
  'a: [1,,2]\n',
  'a: [a: 1]\n',
  'a: [a: 1, b]\n',
  'a: {b}\n',
  'a: {b, c: d}\n',
  'a: {? b}\n',
  'a: [? b : c]\n',
  'a:\n',
  'a:\nb:\n',
  'a: \n  \nb: 1\n',
  '- \n- a\n',
  '-\n-\n',
  '? a\n: b\n',
  '? a\n? b\n',
  '? - a\n  - b\n: c\n',
  '? a\n',
  '[a, b]: c\n',
  '{a: 1}: c\n',
  'a: |\n  line1\n  line2\n',
  'a: |-\n  x\n\n',
  'a: |+\n  x\n\n',
  'a: >\n  folded\n  text\n\n  para\n',
  'a: >-\n  x\n  y\n',
  'a: |2\n   x\n',
  'a: |1\n  x\n',
  'a: >\n  a\n   b\n  c\n',
  'a: |\n\n  x\n',
  'a: |\n  x\n # not a comment\n',
  'a: |\n  x\n# comment\n',
  'a: | # c\n  x\n',
  'a: >+\n\n',
  'a: "x\\ny"\n',
  'a: "\\u00e9\\x41\\t\\\\ \\"q\\""\n',
  'a: "\\U0001F600"\n',
  'a: "\\z"\n',
  'a: "a\n  b"\n',
  'a: "a\n\n  b"\n',
  'a: "a \\\n  b"\n',
  "a: 'it''s'\n",
  "a: 'a\n  b'\n",
  "a: 'a\n\n  b'\n",
  'a: plain\n  continued\n',
  'a: plain\n\n  para\n',
  'a: a #c\n',
  'a: a#c\n',
  'a: "#"\n',
  '# only a comment\n',
  '',
  '\n\n',
  '---\n',
  '---\n...\n',
  '--- a\n',
  '---\na: 1\n...\n---\nb: 2\n',
  'a: 1\n---\n',
  '---\n---\n',
  'a: 1\n...\n',
  '--- |\n  x\n',
  '--- >\n  x\n',
  '--- "a"\n',
  '--- [a]\n',
  '--- {a: 1}\n',
  '--- # c\na: 1\n',
  '%YAML 1.2\n---\na: 1\n',
  '%YAML 1.1\n---\na: 1\n',
  '%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n',
  '%FOO bar\n---\na: 1\n',
  'a: 1\n%YAML 1.2\n',
  'a: !!str 1\n',
  'a: !!map {b: 1}\n',
  'a: !!seq [1]\n',
  'a: !!set {b}\n',
  'a: !!omap [a: 1]\n',
  'a: !!binary aGVsbG8=\n',
  'a: !!timestamp 2001-12-14\n',
  'a: !foo x\n',
  'a: !<tag:yaml.org,2002:str> 1\n',
  'a: ! 1\n',
  'a: !!int\n',
  'a: !!str\n',
  'a: !!null\n',
  'a: !!map\n',
  'a: !!seq\n',
  '!!map\na: 1\n',
  '!!str a: 1\n',
  'a: &x 1\nb: 2\n',
  '&x a: 1\n',
  'a: &x\n  b: 1\n',
  'a: &x [1]\n',
  '- &x a\n',
  'a: & x\n',
  'a: 1\r\nb: 2\r\n',
  '\ufeffa: 1\n',
  'a:\t1\n',
  'a: 1\t\n',
  '\ta: 1\n',
  'a:\n\t- 1\n',
  'a: "\t"\n',
  'a: b\u2028c\n',
  'a: \u0085\n',
  'a: \u0007\n',
  'a: 1\nb: 2\na: 3\n',
  'a: {b: 1, b: 2}\n',
  '1: a\n1.0: b\n',
  '"1": a\n1: b\n',
  'null: a\n~: b\n',
  'true: a\nTrue: b\n',
  '0x10: a\n16: b\n',
  '__proto__: a\n',
  'a: {__proto__: {b: 1}}\n',
  'constructor: 1\n',
  'toString: 1\n',
  'hasOwnProperty: 1\n',
  'a: b: c\n',
  'a:b\n',
  'a :b\n',
  'a : b\n',
  'a:  \n  - b\n',
  'a: - b\n',
  '- a: - b\n',
  '  a: 1\n  b: 2\n',
  ' - a\n',
  'a:\n  b: 1\n c: 2\n',
  'a:\n  - b\n  -c\n',
  'a: [b\n',
  'a: {b: 1\n',
  'a: "b\n',
  "a: 'b\n",
  'a: ]\n',
  'a: }\n',
  'a: ,\n',
  'a: [b]]\n',
  '[a]\nb: 1\n',
  'a: b\n- c\n',
  '- a\nb: c\n',
  'key with spaces: 1\n',
  '"quoted key": 1\n',
  "'single': 1\n",
  '"multi\n  line": 1\n',
  'a: "b": c\n',
  '? |\n  block key\n: v\n',
  'a: -\n',
  'a: - \n',
  'a: ?\n',
  'a: :\n',
  'a: ? b\n',
  '-a: 1\n',
  '- -1\n',
  'a: -1\n',
  'a: ---\n',
  'a: ...\n',
  '- ---\n',
  '---a: 1\n',
  '--- a: 1\n',
  '--- - a\n',
  'a: %x\n',
  'a: @x\n',
  'a: `x\n',
  'a: |x\n',
  'a: >x\n',
  'a: !\n',
  'a: x!\n',
  'a: x&y\n',
  'a: x|y\n',
  'a: {x: y}z\n',
  'a: [x]y\n',
  'a: "x"y\n',
  'a:\n  # comment\n  b: 1\n',
  'a: # comment\n  b: 1\n',
  'a:\n    b: 1\n  c: 2\n',
  'a:\n  b: 1\n    c: 2\n',
  'apiVersion: v1\nkind: X\nmetadata:\n  name: n\n  labels:\n    bpa.akraino.org/sriov: "true"\nspec:\n  masters:\n    - master-1:\n        cpu: 10\n',
  'a: [1, [2, [3, [4]]]]\n',
  'a: {b: {c: {d: {}}}}\n',
  'a: []\nb: {}\n',
  'a: [ ]\nb: { }\n',
  'a: {"b":1,"c":[true,null]}\n',
  '{"a": 1}\n',
  '["a", 1]\n',
  'a: [b, c]: d\n',
  'a: {b: c}: d\n',
  '[a]: b\n[c]: d\n',
  '- [a]: b\n',
  '? [a]\n: b\n',
  '? {a: 1}\n: b\n',
  'a: {[b]: c}\n',
  'a: {{b: 1}: c}\n',
  'a: "x"\n  # c\nb: 1\n',
  'a: x\n  y: z\n',
  'a:\n  - b\n  c: d\n',
  '- a\n  - b\n',
  'a: |\n x\n',
  'a:\n |\n  x\n',
  'a: >\n\n\n  x\n',
];

/** A small seeded generator of YAML: block and flow collections, scalars of every kind. */
function generator(seed: number): () => string {
  let state = seed;
  const rnd = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)] as T;
  const words = [
    ...SCALARS.slice(0, 90),
    'a',
    'b',
    'key',
    'x y',
    '',
    '-',
    '?',
    ':',
    '#',
    '|',
    '>',
    '%',
    '@',
  ];
  const scalar = (): string => {
    const w = pick(words);
    const r = rnd();
    if (r < 0.6) return /^[a-z0-9.~+]/i.test(w) && !/[#:]/.test(w) ? w : JSON.stringify(w);
    if (r < 0.8) return JSON.stringify(w);
    return `'${w.replace(/'/g, "''")}'`;
  };
  const count = (): number => Math.floor(rnd() * 4);
  const flow = (d: number): string => {
    if (d > 4 || rnd() < 0.4) return scalar();
    const sep = pick([', ', ',', ' , ', ',\n  ']);
    if (rnd() < 0.5) return `[${Array.from({ length: count() }, () => flow(d + 1)).join(sep)}]`;
    return `{${Array.from({ length: count() }, () => `${scalar()}: ${flow(d + 1)}`).join(sep)}}`;
  };
  const block = (indent: number, d: number): string => {
    const pad = ' '.repeat(indent);
    const r = rnd();
    if (d > 3 || r < 0.3) {
      if (rnd() < 0.7) return ` ${flow(d + 2).replace(/\n/g, `\n${pad} `)}\n`;
      return ` |\n${pad}  ${pick(words)}\n${pad}  ${pick(words)}\n`;
    }
    let out = '\n';
    if (r < 0.65) {
      const used = new Set<string>();
      for (let i = 0; i < 1 + rnd() * 3; i++) {
        const k = scalar();
        if (used.has(k)) continue;
        used.add(k);
        out += `${pad}${k}:${block(indent + pick([2, 2, 4, 1]), d + 1)}`;
      }
    } else {
      for (let i = 0; i < 1 + rnd() * 3; i++) {
        // Mostly compact (`- key: value`), as site files are; sometimes the dash alone.
        const step = pick([2, 2, 1, 3]);
        const inner = block(indent + step, d + 1);
        const lead = `\n${' '.repeat(indent + step)}`;
        const compact = step >= 2 && inner.startsWith(lead) && rnd() < 0.8;
        out += `${pad}-${compact ? ' '.repeat(step - 1) + inner.slice(lead.length) : inner}`;
      }
    }
    return out;
  };
  const doc = (): string => {
    let t = '';
    for (let i = 0; i < 1 + Math.floor(rnd() * 2); i++) {
      if (i > 0 || rnd() < 0.3) t += pick(['---\n', '--- # c\n']);
      t += block(0, 0).replace(/^[\n ]/, '');
      if (rnd() < 0.2) t += '# comment\n';
    }
    return t;
  };
  const edits = [
    ':',
    '-',
    '[',
    ']',
    '{',
    '}',
    ',',
    '#',
    "'",
    '"',
    '|',
    '>',
    '?',
    '&',
    '%',
    '@',
    '\t',
    '\n',
    ' ',
    '  ',
    'a',
    '\\',
    '\r',
    '\u2028',
    '\u00a0',
    '---',
    '...',
  ];
  /** A valid-looking document, or one with a few characters inserted, removed or replaced. */
  return () => {
    let t = doc();
    if (rnd() < 0.7) return t;
    for (let i = 0; i < 1 + Math.floor(rnd() * 2); i++) {
      const at = Math.floor(rnd() * (t.length + 1));
      const r = rnd();
      if (r < 0.4) t = t.slice(0, at) + pick(edits) + t.slice(at);
      else if (r < 0.7) t = t.slice(0, at) + t.slice(at + 1);
      else t = t.slice(0, at) + pick(edits) + t.slice(at + 1);
    }
    return t;
  };
}

/**
 * A seeded generator of the block YAML sites are written in (what the block reader reads):
 * plain keys of every resolution, scalars plain and quoted, trailing and whole-line comments,
 * blank lines, sequences under a key at its own column, compact entries, several documents;
 * a third of them then broken by a few edits (indentation, markers, indicators).
 */
function blockGenerator(seed: number): () => string {
  let state = seed;
  const rnd = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)] as T;
  const keys = [
    ...['a', 'b', 'name', 'x-y', 'a.b/c', 'k#1', 'a:b', 'é', '-x', '?x', 'a b', 'a,b', 'a]'],
    ...['1', '010', '0x1f', '0o7', '1e3', '1.0', '-1', '.5', 'true', 'True', 'null', '~'],
    ...['yes', 'NULL', '.inf', '.NaN', '+1', '00', 'constructor'],
  ];
  const values = [
    ...SCALARS.slice(0, 120),
    ...['x y', 'a#b', 'a #b', 'http://h/p?q=1', 'a: b', 'a:', ':a', '-', '- a', '-a'],
    ...['? a', '?a', 'a,b', '[a]', '{a}', 'a]', "it's", 'q"q', 'back\\slash', ''],
  ];
  /** Mostly values a plain scalar can hold, as site files have them; sometimes any. */
  const risky = /^[-?:,[\]{}#&*!|>'"%@`]|: |:$| #/;
  const scalar = (): string => {
    let w = pick(values);
    while (risky.test(w) && rnd() < 0.95) w = pick(values);
    const r = rnd();
    const plain = r < 0.6 ? w : r < 0.8 ? JSON.stringify(w) : `'${w.replace(/'/g, "''")}'`;
    return rnd() < 0.15 ? `${plain} # c` : plain;
  };
  const noise = (indent: number): string => {
    const r = rnd();
    if (r < 0.08) return '\n';
    if (r < 0.14) return `${' '.repeat(Math.floor(rnd() * (indent + 3)))}# note\n`;
    return '';
  };
  /** Keys for one mapping, rarely repeated (a duplicate is an error for js-yaml 5). */
  const keysFor = (n: number): string[] => {
    const used = new Set<string>();
    const out: string[] = [];
    while (out.length < n) {
      const k = pick(keys);
      if (used.has(k) && rnd() < 0.99) continue;
      used.add(k);
      out.push(k);
    }
    return out;
  };
  const flowText = (indent: number, d: number): string => {
    if (d > 5 || rnd() < 0.3) return scalar().replace(/ # c$/, '');
    const sep = pick([
      ', ',
      ',',
      ' , ',
      `,\n${' '.repeat(indent + 1)}`,
      `,\n${' '.repeat(indent)}`,
    ]);
    const n = Math.floor(rnd() * 4);
    if (rnd() < 0.5)
      return `[${Array.from({ length: n }, () => flowText(indent, d + 1)).join(sep)}]`;
    return `{${keysFor(n)
      .map((k) => `${k}: ${flowText(indent, d + 1)}`)
      .join(sep)}}`;
  };
  /**
   * A node's text after `key:` or `- `: a scalar on the same line, or a collection on the
   * lines below at `indent`; `keyColumn` is the column of the key it is the value of.
   */
  const node = (indent: number, d: number, keyColumn: number | undefined): string => {
    // A flow collection as the value, sometimes over several lines indented past the key.
    if (d > 0 && rnd() < 0.15) return ` ${flowText(indent, d)}\n`;
    // A document's root is a collection, as a site's are.
    const r = d === 0 ? 0.4 + rnd() * 0.6 : rnd();
    if (d > 4 || r < 0.35) return ` ${scalar()}\n`;
    if (r < 0.4) return '\n'; // null
    let out = '\n';
    if (r < 0.75) {
      const pad = ' '.repeat(indent);
      for (const k of keysFor(1 + Math.floor(rnd() * 4))) {
        out += noise(indent);
        out += `${pad}${k}:${node(indent + pick([2, 2, 2, 4, 1, 3]), d + 1, indent)}`;
      }
      return out;
    }
    // A sequence: below a key at the key's own column (as kubectl writes it), or indented.
    const at = keyColumn !== undefined && rnd() < 0.4 ? keyColumn : indent;
    const sp = ' '.repeat(at);
    for (let i = 0; i < 1 + rnd() * 3; i++) {
      out += noise(at);
      const gap = pick([1, 1, 1, 2, 3]);
      if (rnd() < 0.6) {
        // Compact: `- key: value` and the entry's other keys at the first key's column.
        const col = at + 1 + gap;
        const [first, ...rest] = keysFor(1 + Math.floor(rnd() * 3));
        out += `${sp}-${' '.repeat(gap)}${first}:${node(col + pick([2, 2, 1, 4]), d + 2, col)}`;
        for (const k of rest)
          out += `${noise(col)}${' '.repeat(col)}${k}:${node(col + pick([2, 2, 1, 4]), d + 2, col)}`;
      } else {
        out += `${sp}-${' '.repeat(gap)}${scalar()}\n`;
      }
    }
    return out;
  };
  const doc = (): string => {
    let t = '';
    for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
      if (i > 0 || rnd() < 0.3) t += pick(['---\n', '--- # c\n', '---\n\n']);
      t += noise(0) + node(0, 0, undefined).replace(/^[\n ]/, '');
    }
    return t;
  };
  const edits = [
    ' ',
    '  ',
    '\n',
    '- ',
    ': ',
    ':',
    '#',
    ' #',
    '"',
    "'",
    '---\n',
    '\n... ',
    '-',
    '[',
    '{',
    '|',
  ];
  return () => {
    let t = doc();
    if (rnd() < 0.67) return t;
    for (let i = 0; i < 1 + Math.floor(rnd() * 2); i++) {
      const at = Math.floor(rnd() * (t.length + 1));
      const r = rnd();
      if (r < 0.5) t = t.slice(0, at) + pick(edits) + t.slice(at);
      else if (r < 0.8) t = t.slice(0, at) + t.slice(at + 1);
      else t = t.slice(0, at) + pick(edits) + t.slice(at + 1);
    }
    return t;
  };
}

describe('the fast loader reads what js-yaml 5 reads', () => {
  it('scalars in every position and style', () => {
    let decided = 0;
    let cases = 0;
    for (const s of SCALARS) {
      for (const text of asValue(s)) {
        cases++;
        if (agree(text)) decided++;
      }
    }
    // Most of them are decided by the fast loader (those with tags are left to js-yaml 5):
    // the comparison is not vacuous.
    assert.ok(decided > cases * 0.5, `${decided} of ${cases} decided by js-yaml 4`);
  });

  it('structures: block, flow, scalars of every style, documents, directives, errors', () => {
    let decided = 0;
    for (const text of STRUCTURES) if (agree(text)) decided++;
    assert.ok(decided > STRUCTURES.length / 3, `${decided} of ${STRUCTURES.length} decided`);
  });

  it('nesting just under, at and over maxDepth, in every style', () => {
    const forms: Array<(n: number) => string> = [
      (n) => `${'['.repeat(n)}${']'.repeat(n)}\n`,
      (n) => `a: ${'['.repeat(n)}${']'.repeat(n)}\n`,
      (n) => `${'{a: '.repeat(n)}1${'}'.repeat(n)}\n`,
      (n) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x\n',
      (n) => Array.from({ length: n }, (_, i) => `${' '.repeat(i * 2)}- k:`).join('\n') + ' x\n',
      (n) => `${'- '.repeat(n)}x\n`,
      (n) =>
        Array.from({ length: n }, (_, i) => `${' '.repeat(i * 2)}${i % 2 ? '- k:' : 'k:'}`).join(
          '\n',
        ) + ' x\n',
    ];
    const depth = DEFAULT_LIMITS.maxDepth;
    for (const form of forms) {
      for (let n = 1; n <= depth + 3; n++) {
        const text = form(n);
        const ref = reference(text);
        agree(text);
        // At the limit, both refuse (js-yaml 5 then reports YAML_TOO_DEEP); under it, both read.
        assert.equal(usesRareFeatures(text), false, text);
        assert.equal(loadFast(text, DEFAULT_LIMITS) !== undefined, ref.ok, text);
      }
    }
  });

  it('generated documents, valid and broken (seeded)', () => {
    const next = generator(Number(process.env['BPA_SEMANTICS_SEED'] ?? 20261124));
    let decided = 0;
    let rejected = 0;
    const n = Number(process.env['BPA_SEMANTICS_DOCUMENTS'] ?? 3000);
    for (let i = 0; i < n; i++) {
      const text = next();
      if (agree(text)) decided++;
      else if (!reference(text).ok) rejected++;
    }
    assert.ok(decided > n / 10 && rejected > n / 10, `${decided} decided, ${rejected} rejected`);
  });

  it('generated block documents, valid and broken (seeded)', () => {
    const next = blockGenerator(Number(process.env['BPA_SEMANTICS_SEED'] ?? 20261124));
    const n = Number(process.env['BPA_SEMANTICS_DOCUMENTS'] ?? 3000);
    const before = blockDecided;
    let rejected = 0;
    for (let i = 0; i < n; i++) {
      const text = next();
      if (!agree(text) && !reference(text).ok) rejected++;
    }
    const read = blockDecided - before;
    assert.ok(
      read > n / 8 && rejected > n / 20,
      `${read} read by the block reader, ${rejected} rejected`,
    );
  });

  it('a document end marker with more on its line is left to js-yaml 5 (found by a review)', () => {
    for (const text of [
      '... a: 1\n',
      '...  a: 1\n',
      '... "x": 1\n',
      'a: 1\n... b: 2\n',
      'x:\n... a: 1\n',
      '---\n... a: 1\n',
      'a: 1\n---\n... b: 2\n',
      '... a:\n  b: 1\n',
      '... a: [1,\n  2]\n',
      '... O7:\n',
    ]) {
      assert.equal(loadBlock(text, DEFAULT_LIMITS), undefined, text);
      agree(text);
    }
    // Three dots that are no marker are plain text.
    assert.deepEqual(loadBlock('...a: 1\n', DEFAULT_LIMITS), [{ '...a': 1 }]);
    assert.deepEqual(loadBlock('b: ...\n', DEFAULT_LIMITS), [{ b: '...' }]);
    agree('...a: 1\n');
  });

  it('keys and words found again by their text: a slot shared by other text is no match', () => {
    // The reader keeps strings it has read by a slot of length and end characters: texts that
    // share a slot (`abc`, `axc`), texts that resolve to something else in it (`0x1` beside
    // `0y1`, `true` beside `trie`), keys beside values, long strings and two-byte ones must
    // each read as themselves, in either order, however often they repeat.
    const texts = [
      'a: abc\nb: axc\nc: abc\nd: axc\n',
      'a: 0y1\nb: 0x1\nc: 0y1\nd: 0x1\n',
      'k: trie\nl: true\nm: trie\nn: null\no: nulL\n',
      'abc: 1\naxc: 2\n0x1: 3\n0y1: 4\ntrue: 5\ntrie: 6\n',
      'abc: abc\naxc: [axc, abc, {abc: axc}]\n',
      'm: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\nn: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\n',
      'm: Intel(R) Xeon(R) Gold 6231 CPU @ 2.10GHz\nn: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\n',
      'ä: ü\nü: ä\nx: 😀\ny: 😁\n',
      '{a: abc, b: axc, abc: 0x1, axc: 0y1}\n',
    ];
    for (let round = 0; round < 3; round++) {
      for (const text of round === 1 ? [...texts].reverse() : texts) {
        assert.notEqual(loadBlock(text, DEFAULT_LIMITS), undefined, text);
        agree(text);
      }
    }
  });

  it('the block reader reads a good share of all the cases above itself (not vacuous)', () => {
    assert.ok(blockDecided > 1200, `${blockDecided} read by the block reader`);
  });
});

describe('what the fast loader leaves to js-yaml 5', () => {
  const cases: Array<[string, boolean]> = [
    ['a: 1\nb: [x, y]\nc: {d: e}\n', false],
    ['a: "what?"\nb: x?y\nc: http://h/?q=1\n', false],
    ['a: "what? no"\n', true], // coarse: a false alarm only costs speed
    ['a: 1\n---\nb: 2\n--- # second\nc: 3\n', false],
    ['a: "x#y"\nb: a#b\nc: [x, y] # c\n', false],
    ['a: "#"\n', true], // coarse: a false alarm only costs speed
    ['...\n---\na: 1\n', true],
    ['a: 1\n...\n', true],
    ['a: [x,# c\n  y]\n', true],
    ['a: "x"# c\n', true],
    ['a:\tb\n', true],
    [' a: 1\n', true],
    ['|\n  text\n', true],
    ['---# c\na: 1\n', true],
    ['a: &x 1\n', false],
    ['a: &x 1\nb: *x\n', true],
    ['a: {<<: {b: 1}}\n', true],
    ['a: !!str 1\n', true],
    ['? a\n: b\n', true],
    ['a: {? b}\n', true],
    ['[a]: b\n', true],
    ['{a: 1} : b\n', true],
    ['--- a: 1\n', true],
    ['---a: 1\n', true],
    ['a: 1\n... x\n', true],
    // Found by the block generator (seeds 2 to 4): js-yaml 4 reads an entry of only spaces or
    // a comment after its dash as the start of a nested block.
    ['- a\n-  \n- b\n', true],
    ['a:\n  -   # c\n  - b\n', true],
    ['a:\n  - x-y\n  - b-c # d\n', false],
    ['--- # c\na: 1\n', false],
    ['\r...  +.5\n  ~\n', true], // markers after a carriage return alone (seeds 2 and 8)
    ['\r---# c\n{0: []}\n', true],
    ['a: 1\r\nb: 2\r\n', false], // CRLF line ends are read by the fast path
  ];
  for (const [text, rare] of cases) {
    it(`${JSON.stringify(text)}: ${rare ? 'js-yaml 5' : 'js-yaml 4'}`, () => {
      assert.equal(usesRareFeatures(text), rare);
    });
  }

  it('a flow mapping with a key-only entry beside a collection is read by js-yaml 5', () => {
    for (const text of ['{a, [b]}\n', 'x: {a: 1, [b]}\n', 'x: {a: [1], b}\n']) {
      assert.equal(usesRareFeatures(text), false);
      assert.equal(loadFast(text, DEFAULT_LIMITS), undefined, text);
    }
    assert.deepEqual(loadFast('x: {a: [1], b: {c: d}}\n', DEFAULT_LIMITS), [
      { x: { a: [1], b: { c: 'd' } } },
    ]);
    assert.deepEqual(loadFast('{a: [1], b: 2}\n', DEFAULT_LIMITS), [{ a: [1], b: 2 }]);
  });

  it('a file js-yaml 4 warns about (deficient indentation) is read by js-yaml 5', () => {
    const text = 'a: [\n  1,\n  2\n]\n';
    assert.equal(loadFast(text, DEFAULT_LIMITS), undefined);
    assert.throws(() => loadExact('t.yaml', text, DEFAULT_LIMITS), /deficient indentation/);
  });
});
