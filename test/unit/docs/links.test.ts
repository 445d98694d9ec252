import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main.js';
import type { Io } from '../../../src/cli/io.js';
import { STEPS } from '../../../src/reconcile/steps.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** README.md and every docs/*.md, relative to the repository. */
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks, line by line (a `#` in a YAML block is no heading). */
function prose(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((l, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(l);
    if (m?.[1]) {
      if (fence === undefined) fence = m[1][0];
      else if (m[1][0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text: l });
  });
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a Markdown file has: its headings (with -1, -2 for repeats) and `<a id>`s. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: l } of prose(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (h?.[1] !== undefined) {
      const base = slug(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of l.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) if (a[1]) out.add(a[1]);
  }
  return out;
}

/** The relative link targets of a Markdown file, with their lines (inline code left out). */
function links(text: string): Array<{ line: number; target: string }> {
  const out: Array<{ line: number; target: string }> = [];
  for (const { line, text: l } of prose(text)) {
    const bare = l.replace(/`[^`]*`/g, '``');
    for (const m of bare.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      if (m[1]) out.push({ line, target: m[1] });
    const ref = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(bare);
    if (ref?.[1]) out.push({ line, target: ref[1] });
  }
  return out.filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target));
}

/** Why a link does not resolve, or undefined when it does. */
function broken(doc: string, target: string): string | undefined {
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), path);
  if (!existsSync(file)) return `${relative(ROOT, file)} does not exist`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md') || statSync(file).isDirectory()) return undefined;
  if (!anchors(readFileSync(file, 'utf8')).has(anchor))
    return `${relative(ROOT, file)} has no heading #${anchor}`;
  return undefined;
}

/**
 * Top-level folders of the repository a document may name a file in. Not `sites/`: the
 * benchmarks name paths inside the site repositories they generate (`sites/bench`).
 */
const TOP = [
  'src',
  'test',
  'docs',
  'scripts',
  'bench',
  'deploy',
  'eslint-rules',
  'installer',
  'schemas',
  'bin',
];
const SRC_FOLDERS = readdirSync(join(ROOT, 'src'));

/**
 * The repository files a document names in inline code (`src/serve/http.ts`, or
 * `reconcile/report.ts` for a file under src/), where the name is a path without a placeholder.
 */
function namedFiles(text: string): Array<{ line: number; name: string; path: string }> {
  const out: Array<{ line: number; name: string; path: string }> = [];
  for (const { line, text: l } of prose(text)) {
    for (const m of l.matchAll(/`([^`\s]+)`/g)) {
      const name = m[1] as string;
      if (!/^[\w.-]+\/[\w./-]*$/.test(name) || name.includes('..')) continue;
      const first = name.split('/')[0] as string;
      if (TOP.includes(first)) out.push({ line, name, path: name });
      else if (SRC_FOLDERS.includes(first) && /\.(ts|js)$/.test(name))
        out.push({ line, name, path: `src/${name}` });
    }
  }
  return out;
}

describe('README.md and docs/*.md', () => {
  for (const doc of DOCS) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    it(`${doc}: every relative link points at a file and heading that exist`, () => {
      const bad = links(text).flatMap(({ line, target }) => {
        const why = broken(doc, target);
        return why ? [`${doc}:${line}: (${target}): ${why}`] : [];
      });
      assert.deepEqual(bad, []);
    });
    it(`${doc}: every file of the repository it names exists`, () => {
      const bad = namedFiles(text)
        .filter(({ path }) => !existsSync(join(ROOT, path)))
        .map(({ line, name }) => `${doc}:${line}: \`${name}\` does not exist`);
      assert.deepEqual(bad, []);
    });
  }

  it('the link checker finds a missing file, a missing heading and ignores code blocks', () => {
    assert.match(broken('docs/ui.md', 'nope.md') ?? '', /docs\/nope\.md does not exist/);
    assert.match(broken('docs/ui.md', 'ui.md#no-such-heading') ?? '', /no heading/);
    assert.equal(broken('README.md', 'docs/ui.md#notifications'), undefined);
    assert.deepEqual(
      links('```\n[a](missing.md)\n```\n`[b](x.md)` [c](y.md#z) [d](https://e.org)'),
      [{ line: 4, target: 'y.md#z' }],
    );
    assert.deepEqual(
      [...anchors('# A `b` c\n## Pull requests: `-o markdown`\n# A b c\n```\n# no\n```')],
      ['a-b-c', 'pull-requests--o-markdown', 'a-b-c-1'],
    );
  });
});

describe('README.md: the Commands table', () => {
  it('lists every command of bpa --help', async () => {
    let help = '';
    const io: Io = {
      out: (s: string) => {
        help += s;
      },
      err: () => undefined,
      exit: () => undefined,
    } as unknown as Io;
    assert.equal(await main(['--help'], io, {}), 0);
    const commands = [...(help.split(/^Commands:$/m)[1] ?? '').matchAll(/^ {2}(\w[\w-]*)/gm)]
      .map((m) => m[1] as string)
      .filter((c) => c !== 'help');
    assert.ok(commands.length >= 7, `commands read from --help: ${commands.join(', ')}`);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = readme.split(/^## Commands$/m)[1]?.split(/^#{2,3} /m)[0] ?? '';
    const missing = commands.filter((c) => !new RegExp(`^\\| \`bpa ${c}\\b`, 'm').test(table));
    assert.deepEqual(missing, []);
  });
});

describe('README.md: the Documentation list', () => {
  it('links every docs/*.md', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const list = readme.split(/^## Documentation$/m)[1]?.split(/^## /m)[0] ?? '';
    const missing = DOCS.filter((d) => d !== 'README.md' && !list.includes(`](${d})`));
    assert.deepEqual(missing, []);
  });
});

describe('docs/architecture.md', () => {
  const text = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  it('places every folder of src/ in its folder table', () => {
    const table = text.split(/^## Folders/m)[1]?.split(/^## /m)[0] ?? '';
    const missing = SRC_FOLDERS.filter((f) => !table.includes(`\`${f}\``));
    assert.deepEqual(missing, []);
  });
  it('lists every step of src/reconcile/steps.ts', () => {
    const missing = STEPS.map((s) => s.name).filter((n) => !text.includes(`| \`${n}\` |`));
    assert.deepEqual(missing, []);
  });
});
