import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_LIMITS, FileLocator, loadSite, parseFile } from '../../../src/load/index.js';
import { decode, readSite } from '../../../src/load/read-site.js';
import { removeSite, writeSite } from '../validate/site-fixture.js';

describe('loader', () => {
  it('reads *.yaml and *.yml recursively, multi-document, skipping status/ and .bpaignore matches', async () => {
    const dir = await writeSite({
      'a.yaml': 'x: 1\n---\ny: 2\n',
      'sub/deeper/b.yml': 'z: 3\n',
      'status/cluster-a.yaml': 'written: by bpa\n',
      'sub/status/kept.yaml': 'nested: status dirs are input\n',
      'drafts/wip.yaml': 'ignored: true\n',
      'notes.txt': 'not yaml',
      'c.YAML': 'upper: case\n',
      '.bpaignore': 'drafts/\n# comment\n*.tmp.yaml\n',
      'scratch.tmp.yaml': 'ignored: too\n',
    });
    try {
      const site = await loadSite(dir);
      assert.deepEqual(site.problems, []);
      assert.deepEqual(
        site.documents.map((d) => [d.file, d.index]),
        [
          ['a.yaml', 0],
          ['a.yaml', 1],
          ['c.YAML', 0],
          ['sub/deeper/b.yml', 0],
          ['sub/status/kept.yaml', 0],
        ],
      );
      assert.deepEqual(site.documents[1]?.value, { y: 2 });
    } finally {
      await removeSite(dir);
    }
  });

  it('refuses a FIFO named like a site file at once, without waiting for a writer', async () => {
    const dir = await writeSite({ 'a.yaml': 'a: 1\n' });
    try {
      execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
      const site = await loadSite(dir);
      assert.deepEqual(
        site.problems.map((p) => [p.code, p.file, p.message]),
        [['READ_ERROR', 'pipe.yaml', 'not a regular file']],
      );
      assert.equal(site.documents.length, 1);
    } finally {
      await removeSite(dir);
    }
  });

  it('reads a file whose size says 0 to its end (as /proc files and some file systems do)', async () => {
    const site = await loadSite('/proc/version');
    assert.deepEqual(site.problems, []);
    assert.match(String(site.documents[0]?.value), /^Linux version /);
  });

  it('reads a file of exactly the size limit, and refuses one a byte larger', async () => {
    const limit = 64;
    const exact = `a: ${'x'.repeat(limit - 4)}\n`;
    assert.equal(exact.length, limit);
    const dir = await writeSite({ 'ok.yaml': exact, 'big.yaml': `b${exact}`, 'empty.yaml': '' });
    try {
      const site = await loadSite(dir, { ...DEFAULT_LIMITS, maxFileBytes: limit });
      assert.deepEqual(
        site.problems.map((p) => [p.code, p.file]),
        [['FILE_TOO_LARGE', 'big.yaml']],
      );
      assert.deepEqual(
        site.documents.map((d) => d.value),
        [{ a: 'x'.repeat(limit - 4) }],
      );
    } finally {
      await removeSite(dir);
    }
  });

  it('loads a single file given directly', async () => {
    const dir = await writeSite({ 'one.yaml': 'a: 1\n', 'other.yaml': 'b: 2\n' });
    try {
      const site = await loadSite(join(dir, 'one.yaml'));
      assert.equal(site.documents.length, 1);
      assert.equal(site.documents[0]?.file, 'one.yaml');
    } finally {
      await removeSite(dir);
    }
  });

  it('follows symlinks that stay inside the site, once, and survives link loops', async () => {
    const dir = await writeSite({ 'real/a.yaml': 'a: 1\n' });
    try {
      await symlink(join(dir, 'real'), join(dir, 'alias'));
      await symlink(dir, join(dir, 'real', 'loop'));
      const site = await loadSite(dir);
      assert.deepEqual(site.problems, []);
      assert.ok(site.documents.length >= 1 && site.documents.length <= 2);
    } finally {
      await removeSite(dir);
    }
  });

  it('skips empty documents but keeps document indexes stable', () => {
    const parsed = parseFile('f.yaml', '---\n---\na: 1\n---\n', DEFAULT_LIMITS);
    assert.deepEqual(
      parsed.documents.map((d) => d.index),
      [1],
    );
  });

  it('uses YAML 1.2 core semantics (no yes/no booleans, no timestamps)', () => {
    const parsed = parseFile(
      'f.yaml',
      'a: yes\nb: 2001-12-14\nc: 0o17\nd: ~\ne: true\nf: "010"\n',
      DEFAULT_LIMITS,
    );
    assert.deepEqual(parsed.documents[0]?.value, {
      a: 'yes',
      b: '2001-12-14',
      c: 15,
      d: null,
      e: true,
      f: '010',
    });
  });

  it('names a byte order mark inside a file with its line, and accepts one at its start', () => {
    const joined = parseFile(
      'f.yaml',
      'a: 1\n---\n\ufeffapiVersion: v1\nb: "\ufeff"\n',
      DEFAULT_LIMITS,
    );
    assert.deepEqual(
      joined.problems.map((p) => [p.code, p.line, p.column]),
      [
        ['BYTE_ORDER_MARK', 3, 1],
        ['BYTE_ORDER_MARK', 4, 5],
      ],
    );
    assert.deepEqual(joined.documents, []);
    const first = parseFile('f.yaml', '\ufeffapiVersion: v1\n', DEFAULT_LIMITS);
    assert.deepEqual(first.problems, []);
    assert.deepEqual(first.documents[0]?.value, { apiVersion: 'v1' });
  });

  it("gives back each file's text as it was, whatever its ending, start or errors", () => {
    for (const text of [
      'a: 1\n',
      'a: "a string longer than a slice"',
      '\ufeffa: 1\n',
      '',
      '---\n',
      'a: [1\n',
      'a: 1\r\n',
    ]) {
      assert.equal(parseFile('f.yaml', text, DEFAULT_LIMITS).text, text, JSON.stringify(text));
    }
  });

  it('parses each file as soon as it is read, and keeps the file the parse gives back', async () => {
    const dir = await writeSite({ 'a.yaml': 'a: 1\n', 'b/c.yaml': 'c: 3\n', 'd.yaml': 'd: [\n' });
    try {
      const seen: string[] = [];
      const read = await readSite(dir, DEFAULT_LIMITS, undefined, (f) => {
        seen.push(f.path);
        return { path: f.path, text: `kept ${f.path}` };
      });
      assert.deepEqual(seen, ['a.yaml', 'b/c.yaml', 'd.yaml']);
      assert.deepEqual(
        read.files.map((f) => f.text),
        ['kept a.yaml', 'kept b/c.yaml', 'kept d.yaml'],
      );
      const site = await loadSite(dir);
      assert.deepEqual(
        site.files.map((f) => f.text),
        ['a: 1\n', 'c: 3\n', 'd: [\n'],
      );
      assert.deepEqual(
        site.problems.map((p) => [p.file, p.code, p.line]),
        [['d.yaml', 'YAML_SYNTAX', 2]],
      );
    } finally {
      await removeSite(dir);
    }
  });

  it('accepts a few aliases within the limits', () => {
    const parsed = parseFile('f.yaml', 'a: &x {cpu: 4}\nb: *x\n', DEFAULT_LIMITS);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.documents[0]?.value, { a: { cpu: 4 }, b: { cpu: 4 } });
  });
});

describe('FileLocator', () => {
  const text = [
    'apiVersion: v1', // 1
    'spec:', // 2
    '  masters:', // 3
    '    - master-1:', // 4
    '        cpu: 10', // 5
    '    - "master-2": {cpu: 4}', // 6
    '---', // 7
    'second: [a, b,', // 8
    '  c]', // 9
    '',
  ].join('\n');
  const loc = new FileLocator(text);
  const cases: Array<[number, string, number, number]> = [
    [0, '', 1, 1],
    [0, '/spec', 2, 1],
    [0, '/spec/masters/0', 4, 7],
    [0, '/spec/masters/0/master-1/cpu', 5, 9],
    [0, '/spec/masters/1/master-2/cpu', 6, 20],
    [0, '/spec/masters/9', 3, 3], // past the end: the deepest existing node
    [1, '/second/2', 9, 3],
  ];
  for (const [doc, ptr, line, column] of cases) {
    it(`doc ${doc} ${ptr || '(root)'} → ${line}:${column}`, () => {
      assert.deepEqual(loc.locate(doc, ptr), { line, column });
    });
  }
  // Positions as js-yaml 5's event stream gave them, before js-yaml 4's listener did.
  const more: Array<[string, number, string, number, number]> = [
    ['"quoted": {\'k\': 1}\n', 0, '/quoted/k', 1, 13],
    ['a: &base\n  cpu: 4\nc:\n  - &item x\n  - *item\n', 0, '/a', 1, 1],
    ['a: &base\n  cpu: 4\nc:\n  - &item x\n  - *item\n', 0, '/c/0', 4, 6],
    ['a: &base\n  cpu: 4\nc:\n  - &item x\n  - *item\n', 0, '/c/1', 5, 6],
    ['list:\n  - |\n    text\n  - >-\n    folded\n', 0, '/list/1', 5, 1],
    ['pairs: [a: 1, b]\n', 0, '/pairs/0/a', 1, 9],
    ['pairs: [a: 1, b]\n', 0, '/pairs/1', 1, 15],
    ['? explicit\n: value\n', 0, '/explicit', 1, 3],
    ['- plain\n- k: v\n', 0, '/1/k', 2, 3],
    ['x: 1\n---\n# c\n\ny: [1,\n  2]\n', 1, '', 5, 1],
    ['spec:\n  tags: !!seq\n    - a\n', 0, '/spec/tags/0', 3, 7],
  ];
  for (const [text, doc, ptr, line, column] of more) {
    it(`${JSON.stringify(text)} doc ${doc} ${ptr || '(root)'} → ${line}:${column}`, () => {
      assert.deepEqual(new FileLocator(text).locate(doc, ptr), { line, column });
    });
  }
  it('escapes ~ and / in pointer segments', () => {
    const l = new FileLocator('metadata:\n  labels:\n    bpa.akraino.org/sriov: "true"\n');
    assert.deepEqual(l.locate(0, '/metadata/labels/bpa.akraino.org~1sriov'), {
      line: 3,
      column: 5,
    });
  });
});

describe('decode', () => {
  it('drops a leading byte order mark and keeps one elsewhere', () => {
    assert.deepEqual(decode(Buffer.from('\ufeffa: 1\n')), { text: 'a: 1\n' });
    assert.deepEqual(decode(Buffer.from('a: "\ufeff"\n')), { text: 'a: "\ufeff"\n' });
    assert.deepEqual(decode(Buffer.from('')), { text: '' });
  });

  it('refuses what is not UTF-8, naming the line and column of the first bad byte', () => {
    const bad: Array<[number[], number, number]> = [
      [[0x61, 0x0a, 0x62, 0xff], 2, 2], // a byte that never starts a character
      [[0x61, 0x0a, 0x0a, 0xc0, 0xaf], 3, 1], // an overlong encoding of "/"
      [[0xed, 0xa0, 0x80], 1, 1], // a UTF-16 surrogate encoded
      [[0x61, 0x62, 0xe2, 0x82], 1, 3], // a character cut off at the end
      [[0xf4, 0x90, 0x80, 0x80], 1, 1], // past U+10FFFF
    ];
    for (const [bytes, line, column] of bad) {
      const r = decode(Uint8Array.from(bytes));
      assert.deepEqual(
        r,
        { problem: { code: 'NOT_UTF8', message: 'file is not valid UTF-8', at: { line, column } } },
        JSON.stringify(bytes),
      );
    }
    assert.deepEqual(decode(Buffer.from('é — 𝄞\n')), { text: 'é — 𝄞\n' });
  });
});
