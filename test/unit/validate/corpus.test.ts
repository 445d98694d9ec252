import assert from 'node:assert/strict';
import { open, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { INVALID_CASES, type Case } from './corpus.js';
import { INVENTORY_CASES } from './corpus-inventory.js';
import { TRUST_CASES } from './trust-corpus.js';
import { BASE_SITE, removeSite, writeSite } from './site-fixture.js';
import { validateJson } from './run-cli.js';

const HOSTILE_CASES: Case[] = [
  {
    name: 'alias bomb (billion laughs)',
    files: {
      ...BASE_SITE,
      'bomb.yaml': [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
        'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
        'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
        'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
        'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
        'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
        '',
      ].join('\n'),
    },
    expect: [{ code: 'YAML_ALIAS_LIMIT', file: 'bomb.yaml', line: 1 }],
  },
  {
    name: 'too many aliases',
    files: { ...BASE_SITE, 'aliases.yaml': `a: &a x\nb: [${Array(150).fill('*a').join(', ')}]\n` },
    expect: [{ code: 'YAML_ALIAS_LIMIT', file: 'aliases.yaml', line: 2 }],
  },
  {
    name: 'deep nesting (flow)',
    files: { ...BASE_SITE, 'deep.yaml': `a: ${'['.repeat(5000)}${']'.repeat(5000)}\n` },
    expect: [{ code: 'YAML_TOO_DEEP', file: 'deep.yaml', line: 1 }],
  },
  {
    name: 'deep nesting (block)',
    files: {
      ...BASE_SITE,
      'deep-block.yaml':
        Array.from({ length: 100 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x\n',
    },
    expect: [{ code: 'YAML_TOO_DEEP', file: 'deep-block.yaml', line: 64 }],
  },
  {
    name: 'deep nesting (flow mappings)',
    files: { ...BASE_SITE, 'deep-map.yaml': `a: ${'{a: '.repeat(100)}1${'}'.repeat(100)}\n` },
    expect: [{ code: 'YAML_TOO_DEEP', file: 'deep-map.yaml', line: 1 }],
  },
  {
    name: 'deep nesting (block sequences)',
    files: {
      ...BASE_SITE,
      'deep-seq.yaml':
        Array.from({ length: 100 }, (_, i) => `${' '.repeat(i * 2)}-`).join('\n') + ' x\n',
    },
    expect: [{ code: 'YAML_TOO_DEEP', file: 'deep-seq.yaml', line: 65 }],
  },
  {
    name: '50 MiB file',
    files: { ...BASE_SITE },
    setup: async (dir) => {
      const fh = await open(join(dir, 'huge.yaml'), 'w');
      await fh.truncate(50 * 1024 * 1024);
      await fh.close();
    },
    expect: [{ code: 'FILE_TOO_LARGE', file: 'huge.yaml', line: 1 }],
  },
  {
    name: 'symlink escaping the site',
    files: { ...BASE_SITE },
    setup: async (dir) => {
      await symlink('/etc/hostname', join(dir, 'escape.yaml'));
    },
    expect: [{ code: 'SYMLINK_ESCAPE', file: 'escape.yaml', line: 1 }],
  },
  {
    name: 'symlinked directory escaping the site',
    files: { ...BASE_SITE },
    setup: async (dir) => {
      await symlink('/etc', join(dir, 'etc'));
    },
    expect: [{ code: 'SYMLINK_ESCAPE', file: 'etc', line: 1 }],
  },
  {
    name: 'binary file',
    files: {
      ...BASE_SITE,
      'blob.yaml': Buffer.from([0x61, 0x3a, 0x20, 0x0a, 0x00, 0x01, 0xff, 0xfe]),
    },
    expect: [{ code: 'BINARY_FILE', file: 'blob.yaml', line: 2 }],
  },
  {
    name: 'not UTF-8 (latin-1)',
    files: {
      ...BASE_SITE,
      'latin1.yaml': Buffer.concat([
        Buffer.from('a: 1\nb: caf'),
        Buffer.from([0xe9]),
        Buffer.from('\n'),
      ]),
    },
    expect: [{ code: 'NOT_UTF8', file: 'latin1.yaml', line: 2 }],
  },
  {
    name: 'too many documents',
    files: { ...BASE_SITE, 'docs.yaml': 'a: 1\n---\n'.repeat(1200) },
    expect: [{ code: 'TOO_MANY_DOCUMENTS', file: 'docs.yaml', line: 1 }],
  },
];

describe('bpa validate: invalid-input corpus', function () {
  this.timeout(30_000);
  for (const c of [...INVALID_CASES, ...HOSTILE_CASES, ...INVENTORY_CASES, ...TRUST_CASES]) {
    it(c.name, async () => {
      const dir = await writeSite(c.files);
      try {
        if (c.setup) await c.setup(dir);
        const result = await validateJson(dir);
        const pick = (e: { code: string; file?: string; line?: number }): Expected => ({
          code: e.code,
          file: e.file,
          line: e.line,
        });
        const expected = c.expect.filter((e) => (e.severity ?? 'error') === 'error').map(pick);
        assert.equal(
          result.code,
          expected.length ? 1 : 0,
          JSON.stringify(result.problems, null, 1),
        );
        assert.equal(result.valid, expected.length === 0);
        const errors = result.problems.filter((p) => p.severity === 'error').map(pick);
        assert.deepEqual(
          errors,
          sortLike(expected, errors),
          JSON.stringify(result.problems, null, 1),
        );
        // Warnings and notices are checked where a case lists any (or expects a clean site).
        const others = c.expect.filter((e) => e.severity !== undefined && e.severity !== 'error');
        if (others.length || c.expect.length === 0) {
          const found = result.problems
            .filter((p) => p.severity !== 'error')
            .map((p) => ({ ...pick(p), severity: p.severity }));
          const want = others.map((e) => ({ ...pick(e), severity: e.severity }));
          assert.deepEqual(found, sortLike(want, found), JSON.stringify(result.problems, null, 1));
        }
        for (const p of result.problems) {
          assert.ok(p.message.length > 0, 'every problem has a message');
          assert.ok(p.column !== undefined && p.column >= 1, 'every problem has a column');
        }
      } finally {
        await removeSite(dir);
      }
    });
  }

  it('the corpus has at least 120 cases', () => {
    assert.ok(INVALID_CASES.length + HOSTILE_CASES.length + TRUST_CASES.length >= 120);
  });
});

interface Expected {
  code: string;
  file?: string;
  line?: number;
}

/** Orders `expected` like `actual` (the CLI sorts by file and line) without hiding mismatches. */
function sortLike<T extends { file?: string; line?: number; code: string }>(
  expected: T[],
  _actual: T[],
): T[] {
  return [...expected].sort(
    (a, b) =>
      (a.file ?? '').localeCompare(b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      a.code.localeCompare(b.code),
  );
}
