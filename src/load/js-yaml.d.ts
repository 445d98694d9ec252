/**
 * The part of js-yaml 4's API that bpa uses. js-yaml ships no types of its own, and the
 * @types package another dependency brings predates 4.3 (no `maxDepth`, no node depth or tag
 * in the listener's state); this declaration is used before it.
 */
declare module 'js-yaml' {
  export interface TypeOptions {
    kind: 'scalar' | 'sequence' | 'mapping';
    resolve?: (data: unknown) => boolean;
    construct?: (data: unknown) => unknown;
  }

  export class Type {
    constructor(tag: string, options: TypeOptions);
    readonly tag: string;
  }

  export class Schema {
    extend(types: { implicit?: Type[]; explicit?: Type[] }): Schema;
  }

  export const CORE_SCHEMA: Schema;
  export const types: { merge: Type };

  /** What a listener sees of the loader, at the start (`open`) and end (`close`) of each node. */
  export interface LoaderState {
    /** The text read, without a leading byte order mark, with `\n` added if it had no line end, then `\0`. */
    input: string;
    /** Offset in `input`: where the node starts, before the space in front of it, or where it ends. */
    position: number;
    /** 0-based line of `position`. */
    line: number;
    /** The depth of the node, 1 for a document's root. */
    depth: number;
    /** Set at `close`: `scalar`, `mapping`, `sequence`, or null for an empty node or an alias. */
    kind: 'scalar' | 'mapping' | 'sequence' | null;
    /** Set at `close`: the node's tag; a plain scalar resolved by the schema has its type's tag. */
    tag: string | null;
    /** Set at `close`: the node's value. */
    result: unknown;
  }

  export type Listener = (event: 'open' | 'close', state: LoaderState) => void;

  export interface LoadOptions {
    schema?: Schema;
    /** Deepest nesting of nodes (js-yaml ≥ 4.3). */
    maxDepth?: number;
    /** Most keys copied through merge keys in one stream (js-yaml ≥ 4.3). */
    maxTotalMergeKeys?: number;
    /** Called with each warning; the default ignores them. */
    onWarning?: (warning: YAMLException) => void;
    /** Called when the loader opens and closes each node. */
    listener?: Listener;
  }

  export function load(input: string, options?: LoadOptions): unknown;
  export function loadAll(input: string, options?: LoadOptions): unknown[];
  export function loadAll(input: string, iterator: null, options?: LoadOptions): unknown[];

  export interface DumpOptions {
    schema?: Schema;
    /** Longest line before folding; -1: never fold. */
    lineWidth?: number;
    /** Write a repeated object again instead of an anchor and aliases. */
    noRefs?: boolean;
    /** Do not quote what only YAML 1.1 reads as something else (`yes`, `on`, `n`). */
    noCompatMode?: boolean;
    quotingType?: "'" | '"';
    /** Leave out keys whose value cannot be written (undefined) instead of throwing. */
    skipInvalid?: boolean;
  }

  export function dump(value: unknown, options?: DumpOptions): string;

  export class YAMLException extends Error {
    reason: string;
    mark: { line: number; column: number; position: number };
  }
}
