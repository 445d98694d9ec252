import type { Listener, LoaderState } from 'js-yaml';

/**
 * What js-yaml 4 reads without complaint but bpa refuses, checked from its listener while it
 * reads (each node reports its start and end), so no second reader is needed:
 * - more aliases (`*name`) in one document than `maxAliases`: js-yaml 4 has no such limit;
 * - a list or a mapping as a mapping key (`[a, b]: c`): js-yaml 4 turns it into the string
 *   "a,b", which YAML never meant;
 * - a merge key (`<<`) given a list holding a list: js-yaml 4 copies the inner list's
 *   indexes as keys;
 * - a block mapping or list that starts on a `---` line (`--- a: 1`): YAML does not allow it
 *   (js-yaml 4 reads it, other tools refuse the file).
 * A file with any of these is YAML_SYNTAX or YAML_ALIAS_LIMIT, at the line where a YAML 1.2
 * reader reports it. A text with none of the characters they need (`MAY_NEED_CHECKS`: most
 * site files) needs no checks: undefined.
 */
export function yamlChecks(text: string, maxAliases: number): Listener | undefined {
  if (!MAY_NEED_CHECKS.test(text)) return undefined;
  // Per depth: where the node being read opened, and the start of a merge key whose value it is.
  const opened: number[] = [];
  const mergeKeyAt: Array<number | undefined> = [];
  let aliases = 0;
  let lastAlias = -1;
  return (event, state) => {
    const d = state.depth;
    if (event === 'open') {
      opened[d] = state.position;
      mergeKeyAt[d + 1] = undefined;
      if (d === 1) aliases = 0;
      return;
    }
    const input = state.input;
    const kind = state.kind;
    const mergeKey = mergeKeyAt[d];
    if (mergeKey !== undefined) {
      mergeKeyAt[d] = undefined;
      if (!mergeable(state.result)) {
        throw new YamlCheckError(
          'YAML_SYNTAX',
          'a merge key (<<) takes a mapping, an alias of one (*name), or a list of those',
          state,
          mergeKey,
        );
      }
    }
    if (kind === 'mapping' || kind === 'sequence') {
      const key = contentStart(input, opened[d] ?? 0);
      if (followedByColon(input, state.position) && mayBeKey(input, key)) {
        throw new YamlCheckError(
          'YAML_SYNTAX',
          `a ${kind === 'mapping' ? 'mapping' : 'list'} is used as a key at line ${lineOf(input, key)}: keys must be plain values`,
          state,
          d > 1 ? contentStart(input, opened[d - 1] ?? 0) : key,
        );
      }
      if (d === 1) blockOnMarkerLine(state, contentStart(input, opened[1] ?? 0));
    } else if (kind === null) {
      const at = contentStart(input, opened[d] ?? 0);
      // A wrapper node and the node it wraps see the same alias: each alias counts once.
      if (input.charCodeAt(at) === STAR && at > lastAlias) {
        lastAlias = at;
        if (++aliases > maxAliases) {
          throw new YamlCheckError(
            'YAML_ALIAS_LIMIT',
            `more than ${maxAliases} aliases in one document`,
            state,
            at,
          );
        }
      }
    } else if (state.tag === MERGE_TAG && followedByColon(input, state.position)) {
      mergeKeyAt[d] = contentStart(input, opened[d] ?? 0);
    }
  };
}

/** A problem found by `yamlChecks`, at an offset of the loader's input. */
export class YamlCheckError extends Error {
  readonly line: number;
  readonly column: number;

  constructor(
    readonly code: 'YAML_SYNTAX' | 'YAML_ALIAS_LIMIT',
    message: string,
    state: LoaderState,
    offset: number,
  ) {
    super(message);
    this.line = lineOf(state.input, offset);
    const lineStart = state.input.lastIndexOf('\n', offset - 1) + 1;
    this.column = offset - lineStart + 1;
  }
}

const STAR = 0x2a;
const MERGE_TAG = 'tag:yaml.org,2002:merge';

/**
 * What each check needs in the text: a `*` (an alias), `<<` (a merge key), a `]` or `}` before
 * a `:` or a `?` (a collection as a key), content after `---` on its line.
 */
const MAY_NEED_CHECKS = /[*?]|<<|[\]}]\s*:|^\uFEFF?---[ \t]*[^\s#]/m;

/**
 * Whether a collection followed by a `:` is its key: a flow collection (an implicit key), or
 * any after a `?` (an explicit key). A block collection is followed by a `:` only in a file
 * that js-yaml refuses for its own reason (`a:\n  - x\n: y`).
 */
function mayBeKey(input: string, at: number): boolean {
  const c = input.charCodeAt(skipProperties(input, at));
  if (c === 0x5b /* [ */ || c === 0x7b /* { */) return true;
  let before = at - 1;
  while (input.charCodeAt(before) === 0x20 || input.charCodeAt(before) === 0x09) before--;
  return input.charCodeAt(before) === 0x3f; /* ? */
}

function mergeable(value: unknown): boolean {
  return Array.isArray(value) ? value.every(isMapping) : isMapping(value);
}

function isMapping(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A document's root that is a block mapping or list starting on its `---` line. */
function blockOnMarkerLine(state: LoaderState, at: number): void {
  const input = state.input;
  const c = input.charCodeAt(at);
  // Flow collections may start there, and properties (`--- &a`) may stand before a block.
  if (c === 0x7b || c === 0x5b || c === 0x26 || c === 0x21) return;
  const lineStart = input.lastIndexOf('\n', at - 1) + 1;
  if (lineStart < at && input.startsWith('---', lineStart)) {
    throw new YamlCheckError(
      'YAML_SYNTAX',
      `a block ${state.kind === 'mapping' ? 'mapping' : 'list'} cannot start on the --- line: put it on the next line`,
      state,
      at,
    );
  }
}

/** 1-based line of an offset. */
function lineOf(input: string, offset: number): number {
  let line = 1;
  for (let i = input.indexOf('\n'); i !== -1 && i < offset; i = input.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * Where a node's content starts, from where the loader opened it: past spaces, line breaks
 * and comments (as js-yaml skips them), at its properties (`&anchor`, `!tag`) if any.
 */
export function contentStart(input: string, at: number): number {
  for (;;) {
    const c = input.charCodeAt(at);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) at++;
    else if (c === 0x23 /* # */) {
      while (at < input.length && input.charCodeAt(at) !== 0x0a && input.charCodeAt(at) !== 0x0d)
        at++;
    } else return at;
  }
}

/**
 * Whether the next thing after `at`, past spaces and line breaks, is a `:` that separates a
 * key from its value (the node is a key): one followed by a space, a line break or the end of
 * a flow collection, or right after the node (`"a":1`, `[a]:b`). A `:` further on, followed by
 * more text, starts a plain scalar (`:b: 2` on the next line).
 */
export function followedByColon(input: string, at: number): boolean {
  for (;;) {
    const c = input.charCodeAt(at);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) at++;
    else if (c !== 0x3a) return false;
    else return /[\s,\]}\0]/.test(input.charAt(at + 1)) || !/\s/.test(input.charAt(at - 1));
  }
}

/** Past a node's properties (`&anchor`, `!tag`) and the space after them. */
export function skipProperties(input: string, at: number): number {
  for (;;) {
    const c = input.charCodeAt(at);
    if (c !== 0x26 && c !== 0x21) return at;
    at = skipToken(input, at);
  }
}

/** Past a token and the space, line breaks and comments after it. */
export function skipToken(input: string, at: number): number {
  while (at < input.length && !/[\s,[\]{}]/.test(input.charAt(at))) at++;
  return contentStart(input, at);
}
