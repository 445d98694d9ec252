/**
 * The part of js-yaml 4's API that the fast loader uses (the package is installed under the
 * name `js-yaml-4`, beside js-yaml 5, which keeps the name `js-yaml`).
 */
declare module 'js-yaml-4' {
  export interface TypeOptions {
    kind: 'scalar' | 'sequence' | 'mapping';
    /** Whether `data` is of this type. Called with a second argument (the tag) when explicit. */
    resolve?: (data: unknown, tag?: string) => boolean;
    construct?: (data: unknown) => unknown;
  }

  export class Type {
    constructor(tag: string, options: TypeOptions);
    readonly tag: string;
  }

  export class Schema {
    extend(types: { implicit?: Type[]; explicit?: Type[] }): Schema;
  }

  export const FAILSAFE_SCHEMA: Schema;
  /** js-yaml 4's own core schema: looser than YAML 1.2's (see core-schema.ts). */
  export const CORE_SCHEMA: Schema;

  export interface LoaderState {
    input: string;
    position: number;
    /** The depth of the node being composed, 1 for a document's root. */
    depth: number;
    kind: string | null;
    result: unknown;
  }

  export interface LoadOptions {
    schema?: Schema;
    filename?: string;
    /** Deepest nesting of nodes (js-yaml ≥ 4.3). */
    maxDepth?: number;
    /** Most keys copied through merge keys in one stream (js-yaml ≥ 4.3). */
    maxTotalMergeKeys?: number;
    /** Called with each warning; the default ignores them. */
    onWarning?: (warning: YAMLException) => void;
    /** Called when the loader opens and closes each node. */
    listener?: (event: 'open' | 'close', state: LoaderState) => void;
  }

  export function loadAll(input: string, options?: LoadOptions): unknown[];

  export class YAMLException extends Error {
    reason: string;
    mark: { line: number; column: number; position: number };
  }
}
