import type { Schema } from 'js-yaml';
import type { LoadOptions } from 'js-yaml-4';
import { error, type Problem } from '../util/problem.js';
import { loadBlock } from './block-yaml.js';
import { fastSchema4 } from './core-schema.js';
import { jsYaml4, jsYaml5 } from './yaml-libs.js';
import type { LoadLimits } from './limits.js';

/** One YAML document of a site file. `value` is plain JSON-compatible data. */
export interface LoadedDocument {
  /** Path relative to the site root, with `/` separators. */
  file: string;
  /** Index of the document in its file, 0-based, counting empty documents too. */
  index: number;
  value: unknown;
}

export interface ParsedFile {
  documents: LoadedDocument[];
  problems: Problem[];
}

/**
 * YAML 1.2 core schema plus the YAML 1.1 merge key (`<<: *defaults`): kubectl reads merge keys
 * (sigs.k8s.io/yaml), so manifests written for it use them, and without this they would be an
 * ordinary key named `<<` that every schema accepts and nothing reads.
 */
let schema5: Schema | undefined;

function referenceSchema(): Schema {
  if (schema5) return schema5;
  const { CORE_SCHEMA, mergeTag } = jsYaml5();
  return (schema5 = CORE_SCHEMA.withTags(mergeTag));
}

/** Keys copied through merge keys, per file: a merge bomb stops here. */
const MAX_MERGE_KEYS = 10_000;

/**
 * Parses one file's text into documents, enforcing the hostile-input limits. Pure: no I/O.
 *
 * Three readers, one meaning. The happy path has no positions: bpa's own reader of the YAML
 * sites are written in (`block-yaml.ts`, more than twice as fast as js-yaml 4), and for what
 * it declines js-yaml 4's loader, the fastest of the JavaScript YAML parsers measured
 * (docs/PERFORMANCE.md), with a schema that resolves scalars exactly as js-yaml 5's core
 * schema does (`core-schema.ts`). js-yaml 5 is the reference: every file js-yaml 4 rejects,
 * for any reason, is parsed again by js-yaml 5, whose error (code, message, line) is
 * reported, and so is every file that may hold something the two read differently or whose
 * limit only js-yaml 5 enforces (aliases and `maxAliases`, merge keys, tags, complex keys…:
 * `usesRareFeatures`). Positions of problems come from js-yaml 5's event stream
 * (`locate.ts`), built only for files with problems. `test/unit/load/semantics.test.ts`
 * checks that the readers read the same documents.
 */
export function parseFile(file: string, text: string, limits: LoadLimits): ParsedFile {
  // The block reader counts documents itself and declines past the limit.
  let values = loadBlock(text, limits);
  if (values === undefined) {
    const docCount = countDocumentMarkers(text);
    if (docCount > limits.maxDocumentsPerFile) {
      return {
        documents: [],
        problems: [
          error(
            'TOO_MANY_DOCUMENTS',
            `file holds ${docCount} YAML documents; the limit is ${limits.maxDocumentsPerFile}`,
            { file, line: 1, column: 1 },
          ),
        ],
      };
    }
    values = loadJsYaml4(text, limits);
  }
  if (values === undefined) {
    try {
      values = loadExact(file, text, limits);
    } catch (err: unknown) {
      return { documents: [], problems: [yamlProblem(file, err, limits)] };
    }
  }
  const documents: LoadedDocument[] = [];
  const problems: Problem[] = [];
  const mayAlias = text.includes('*');
  values.forEach((value, index) => {
    if (value === null || value === undefined) return; // an empty document, e.g. a trailing `---`
    if (mayAlias && expandedSize(value, limits.maxExpandedNodes) > limits.maxExpandedNodes) {
      problems.push(
        error(
          'YAML_ALIAS_LIMIT',
          `document expands to more than ${limits.maxExpandedNodes} nodes through aliases`,
          { file, doc: index, pointer: '' },
        ),
      );
      return;
    }
    documents.push({ file, index, value });
  });
  return { documents, problems };
}

/**
 * The fast path on its own: the block reader's reading of a file (`block-yaml.ts`), else
 * js-yaml 4's (`loadJsYaml4`), else undefined where js-yaml 5 must decide. Exported for the
 * tests that compare it with js-yaml 5, and the parser benchmark.
 */
export function loadFast(text: string, limits: LoadLimits): unknown[] | undefined {
  return loadBlock(text, limits) ?? loadJsYaml4(text, limits);
}

/**
 * js-yaml 4's reading of a file, or undefined where js-yaml 5 must decide: the file may use a
 * feature where js-yaml 4 reads differently or lacks js-yaml 5's limits (`usesRareFeatures`),
 * or js-yaml 4 rejects it or warns about it (a syntax error, nesting deeper than `maxDepth`,
 * deficient indentation, a stack overflow).
 */
function loadJsYaml4(text: string, limits: LoadLimits): unknown[] | undefined {
  if (usesRareFeatures(text)) return undefined;
  try {
    return jsYaml4().loadAll(text, {
      schema: fastSchema4(),
      maxDepth: limits.maxDepth,
      maxTotalMergeKeys: MAX_MERGE_KEYS,
      onWarning: rethrow,
      listener: text.includes('{') ? flowKeyGuard() : undefined,
    });
  } catch {
    return undefined;
  }
}

function rethrow(warning: Error): never {
  throw warning;
}

/**
 * Refuses a flow mapping with a key-only entry (`{a, b}`) when one of its entries is a
 * collection: that entry may be a complex key (`{[a], b}`), which js-yaml 5 rejects and
 * js-yaml 4 turns into a string. js-yaml 4 composes a node for every key and for every value
 * that follows a `:`, so a mapping of n keys has 2n child nodes unless an entry has no value.
 * A node that only carries the result of its single child (js-yaml 4 tries a block mapping
 * first at block level) is not checked itself.
 */
function flowKeyGuard(): NonNullable<LoadOptions['listener']> {
  // Per depth (js-yaml 4's state.depth: 1 for a document's root) of the nodes being composed.
  const children: number[] = [0];
  const collections: boolean[] = [false];
  const last: unknown[] = [undefined];
  return (event, state) => {
    const d = state.depth;
    if (event === 'open') {
      children[d - 1] = (children[d - 1] ?? 0) + 1;
      children[d] = 0;
      collections[d] = false;
      last[d] = undefined;
      return;
    }
    const kind = state.kind;
    last[d - 1] = state.result;
    if (kind === 'sequence') collections[d - 1] = true;
    if (kind !== 'mapping') return;
    collections[d - 1] = true;
    if (!collections[d]) return;
    if (children[d] === 1 && last[d] === state.result) return; // a wrapper
    const keys = Object.keys(state.result as object).length;
    if ((children[d] ?? 0) < 2 * keys) throw new Error('a key-only entry beside a collection');
  };
}

/**
 * Whether the text may hold something the fast loader leaves to js-yaml 5. Each test is
 * coarse on purpose (a `*` inside a quoted string also counts): a false alarm costs only
 * speed. What is sent to js-yaml 5, and why (each found by comparing the two parsers):
 * - `*` aliases: js-yaml 5 counts them (`maxAliases`), js-yaml 4 cannot;
 * - `<<` merge keys: js-yaml 4 also merges the indexes of a list given as a source;
 * - `!` tags: js-yaml 4 reads an empty node tagged `!` as null, js-yaml 5 as "";
 * - complex keys (`? key`, `[a]: b`, `{a: 1}: b`): js-yaml 4 turns them into strings,
 *   js-yaml 5 rejects them (a flow mapping's key-only entry is checked while loading);
 * - content on a `---` line, or a `#` right after it: js-yaml 4 reads `--- a: 1`, `---a: 1`
 *   and `---# c` as a document start; document end markers (`...`), after which js-yaml 4
 *   may count an extra empty document;
 * - a `#` right after a quote, a bracket or a comma (`"a"# c`, `[a,# c`): not a comment for
 *   js-yaml 5;
 * - tabs anywhere, a stream that starts indented, a block scalar as a whole document, a
 *   list entry with nothing after its dash but spaces or a comment: js-yaml 4 is lax about
 *   the indentation around them (it reads `x:\n  -\n - y` as a list of two, js-yaml 5
 *   rejects it);
 * - a carriage return not followed by a line feed (old Mac line ends): js-yaml 4 does not see
 *   a `---` or `...` after one as a marker.
 */
export function usesRareFeatures(text: string): boolean {
  for (const marker of RARE) if (text.includes(marker)) return true;
  const first = text.charCodeAt(0);
  // An indented stream, a document end marker first, a block scalar as a document.
  if (first === 0x20 || first === 0xfeff || first === 0x7c || first === 0x3e) return true;
  if (text.startsWith('...')) return true;
  // A carriage return alone is a line break to both, but js-yaml 4 does not look for markers
  // (`---`, `...`) after it.
  for (let at = text.indexOf('\r'); at !== -1; at = text.indexOf('\r', at + 1)) {
    if (text.charCodeAt(at + 1) !== 0x0a) return true;
  }
  // A list entry with nothing after its dash but spaces or a comment (a `---` marker is no
  // entry); coarse: `a-#b` counts too.
  EMPTY_ENTRY.lastIndex = 0;
  for (let m = EMPTY_ENTRY.exec(text); m !== null; m = EMPTY_ENTRY.exec(text)) {
    const at = m.index;
    if (text.charCodeAt(at - 1) !== 0x2d || text.charCodeAt(at - 2) !== 0x2d) return true;
  }
  for (let at = text.indexOf('?'); at !== -1; at = text.indexOf('?', at + 1)) {
    if (isSpaceOrEnd(text.charCodeAt(at + 1))) return true;
  }
  for (const close of [']', '}']) {
    for (let at = text.indexOf(close); at !== -1; at = text.indexOf(close, at + 1)) {
      let next = at + 1;
      while (text.charCodeAt(next) === 0x20) next++;
      if (text.charCodeAt(next) === 0x3a /* : */) return true;
    }
  }
  let at = text.startsWith('---') ? 0 : text.indexOf('\n---');
  while (at !== -1) {
    const start = text[at] === '\n' ? at + 1 : at;
    let next = start + 3;
    if (!isSpaceOrEnd(text.charCodeAt(next))) return true; // `---a`, `---#`
    while (text.charCodeAt(next) === 0x20) next++;
    const c = text.charCodeAt(next);
    if (!(Number.isNaN(c) || c === 0x0a || c === 0x0d || c === 0x23 /* # */)) return true;
    at = text.indexOf('\n---', start);
  }
  return false;
}

/** A dash followed by nothing but spaces up to the end of its line, a `#` or the text's end. */
const EMPTY_ENTRY = /-(?= *(?:[\n\r#]|$))/g;

/** Substrings that send a file to js-yaml 5 wherever they are (see usesRareFeatures). */
const RARE = [
  '*',
  '<<',
  '!',
  '\t',
  '\n...', // document end markers
  '\n|', // a block scalar as a document
  '\n>',
  '"#', // a `#` that is no comment for js-yaml 5
  "'#",
  ']#',
  '}#',
  '[#',
  '{#',
  ',#',
];

/** Space, tab, line break or the end of the text. */
function isSpaceOrEnd(c: number): boolean {
  return Number.isNaN(c) || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** js-yaml 5's reading of a file, with every limit; throws its error. */
export function loadExact(file: string, text: string, limits: LoadLimits): unknown[] {
  return jsYaml5().loadAll(text, {
    schema: referenceSchema(),
    maxTotalMergeKeys: MAX_MERGE_KEYS,
    maxDepth: limits.maxDepth,
    maxAliases: limits.maxAliases,
    filename: file,
  });
}

/** An upper bound on the number of `---` document markers, without parsing. */
function countDocumentMarkers(text: string): number {
  let count = 1;
  let at = text.startsWith('---') ? 0 : text.indexOf('\n---');
  while (at !== -1) {
    count++;
    at = text.indexOf('\n---', at + 1);
  }
  return count;
}

/**
 * Counts the nodes of a value as if every alias were a copy, memoized per shared object, and
 * stops as soon as the limit is passed. Aliases in js-yaml are shared references, so parsing
 * an alias bomb is cheap; walking it (as schema validation does) is not.
 */
function expandedSize(value: unknown, limit: number): number {
  const memo = new Map<object, number>();
  const size = (v: unknown): number => {
    if (v === null || typeof v !== 'object') return 1;
    const known = memo.get(v);
    if (known !== undefined) return known;
    let total = 1;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      total += size(child);
      if (total > limit) break;
    }
    memo.set(v, total);
    return total;
  };
  return size(value);
}

function yamlProblem(file: string, err: unknown, limits: LoadLimits): Problem {
  if (err instanceof jsYaml5().YAMLException) {
    const reason = err.reason ?? 'YAML error';
    const where = { file, line: (err.mark?.line ?? 0) + 1, column: (err.mark?.column ?? 0) + 1 };
    if (reason.includes('duplicated mapping key')) {
      return error('YAML_DUPLICATE_KEY', 'duplicate mapping key', where);
    }
    if (reason.includes('maxAliases')) {
      return error(
        'YAML_ALIAS_LIMIT',
        `more than ${limits.maxAliases} aliases in one document`,
        where,
      );
    }
    if (reason.includes('maxTotalMergeKeys')) {
      return error(
        'YAML_ALIAS_LIMIT',
        `merge keys (<<) copy more than ${MAX_MERGE_KEYS} keys in this file`,
        where,
      );
    }
    if (reason.includes('cannot merge mappings')) {
      return error(
        'YAML_SYNTAX',
        'a merge key (<<) takes a mapping, an alias of one (*name), or a list of those',
        where,
      );
    }
    if (reason.includes('maxDepth')) {
      return error('YAML_TOO_DEEP', `nesting deeper than ${limits.maxDepth} levels`, where);
    }
    return error('YAML_SYNTAX', reason, where);
  }
  if (err instanceof RangeError) {
    return error('YAML_TOO_DEEP', 'nesting too deep to parse', { file, line: 1, column: 1 });
  }
  return error('YAML_SYNTAX', err instanceof Error ? err.message : String(err), {
    file,
    line: 1,
    column: 1,
  });
}
