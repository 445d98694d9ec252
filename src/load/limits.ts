/** Limits that keep hostile or accidental input from exhausting memory or time. */
export interface LoadLimits {
  /** Largest file read, in bytes. Larger files are reported, never read. */
  maxFileBytes: number;
  /** Most YAML documents in one file. */
  maxDocumentsPerFile: number;
  /** Most alias nodes (`*ref`) in one document. */
  maxAliases: number;
  /** Most nodes a document may expand to once aliases are followed (billion laughs). */
  maxExpandedNodes: number;
  /** Deepest nesting of mappings and sequences. */
  maxDepth: number;
  /** Most files under the site root. */
  maxFiles: number;
}

export const DEFAULT_LIMITS: Readonly<LoadLimits> = Object.freeze({
  maxFileBytes: 1024 * 1024,
  maxDocumentsPerFile: 1000,
  maxAliases: 100,
  maxExpandedNodes: 100_000,
  maxDepth: 64,
  maxFiles: 100_000,
});
