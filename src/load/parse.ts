import { CORE_SCHEMA, loadAll, types, YAMLException, type Listener } from 'js-yaml';
import { error, type Problem } from '../util/problem.js';
import type { LoadLimits } from './limits.js';
import { YamlCheckError, yamlChecks } from './yaml-checks.js';

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
  /**
   * The file's text, the same characters as given, held where its documents' strings point:
   * js-yaml appends a NUL to the text it reads, so it reads a copy of it, and the strings it
   * returns are slices of that copy. Whoever keeps the text (to locate problems, for the cache)
   * keeps this one, so a site's text is held once, not twice.
   */
  text: string;
}

/**
 * YAML 1.2 core schema plus the YAML 1.1 merge key (`<<: *defaults`): kubectl reads merge keys
 * (sigs.k8s.io/yaml), so manifests written for it use them, and without this they would be an
 * ordinary key named `<<` that every schema accepts and nothing reads.
 */
const SCHEMA = CORE_SCHEMA.extend({ implicit: [types.merge] });

/** Keys copied through merge keys, per file: a merge bomb stops here. */
const MAX_MERGE_KEYS = 10_000;

/**
 * Parses one file's text into documents, enforcing the hostile-input limits. Pure: no I/O.
 * js-yaml 4 reads the file, with the checks of `yaml-checks.ts` listening; positions of later
 * problems come from the same reader (`locate.ts`).
 */
export function parseFile(file: string, text: string, limits: LoadLimits): ParsedFile {
  const marks = strayByteOrderMarks(file, text);
  if (marks.length) return { documents: [], problems: marks, text };
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
      text,
    };
  }
  let values: unknown[];
  let read: string | undefined;
  const checks = yamlChecks(text, limits.maxAliases);
  const listener: Listener = (event, state) => {
    read ??= state.input;
    checks?.(event, state);
  };
  try {
    values = readYaml(text, limits, listener);
  } catch (err: unknown) {
    return { documents: [], problems: [yamlProblem(file, err, limits)], text };
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
  // The loader's input is the text, a line break when it ends without one, and the NUL.
  const kept = read?.startsWith(text) ? read.slice(0, text.length) : text;
  return { documents, problems, text: kept };
}

/**
 * js-yaml 4's reading of a text, its documents in order (empty ones as null); throws its
 * error, or the listener's. Warnings (deficient indentation, an unknown directive) are errors.
 */
export function readYaml(
  text: string,
  limits: Pick<LoadLimits, 'maxDepth'>,
  listener?: Listener,
): unknown[] {
  return loadAll(text, null, {
    schema: SCHEMA,
    maxDepth: limits.maxDepth,
    maxTotalMergeKeys: MAX_MERGE_KEYS,
    onWarning: rethrow,
    listener,
  });
}

function rethrow(warning: Error): never {
  throw warning;
}

/**
 * A byte order mark anywhere but at a file's very start (files joined with `cat` keep
 * theirs): YAML allows none inside a document, and js-yaml would read it as part of the
 * next key (`\uFEFFapiVersion`), so the document would seem to lack that key. The decoder
 * drops the one at the start.
 */
function strayByteOrderMarks(file: string, text: string): Problem[] {
  const problems: Problem[] = [];
  let at = text.indexOf('\uFEFF', text.charCodeAt(0) === 0xfeff ? 1 : 0);
  if (at === -1) return problems;
  let line = 1;
  let lineStart = 0;
  for (let nl = text.indexOf('\n'); at !== -1; at = text.indexOf('\uFEFF', at + 1)) {
    for (; nl !== -1 && nl < at; nl = text.indexOf('\n', nl + 1)) {
      line++;
      lineStart = nl + 1;
    }
    problems.push(
      error(
        'BYTE_ORDER_MARK',
        'a byte order mark (U+FEFF) inside the file: only its first character may be one; remove it',
        { file, line, column: at - lineStart + 1 },
      ),
    );
  }
  return problems;
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
  if (err instanceof YamlCheckError) {
    return error(err.code, err.message, { file, line: err.line, column: err.column });
  }
  if (err instanceof YAMLException) {
    const reason = err.reason ?? 'YAML error';
    const where = { file, line: (err.mark?.line ?? 0) + 1, column: (err.mark?.column ?? 0) + 1 };
    if (reason.includes('duplicated mapping key')) {
      return error('YAML_DUPLICATE_KEY', 'duplicate mapping key', where);
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
