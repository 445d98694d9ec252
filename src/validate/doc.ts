/** A classified document as the cross-document rules read it, and where its problems point. */
import type { Problem } from '../util/problem.js';
import type { KindedDocument } from './classify.js';
import type { DocRef } from './model.js';

export type Doc = KindedDocument;

export interface Meta {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
}

export function meta(d: Doc): Meta {
  const m = (d.value['metadata'] ?? {}) as Record<string, unknown>;
  return {
    name: typeof m['name'] === 'string' ? m['name'] : '',
    namespace: typeof m['namespace'] === 'string' ? m['namespace'] : undefined,
    labels: stringLabels(m['labels']),
  };
}

const NO_LABELS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Labels as strings, null values left out. Labels already all strings (nearly always) are
 * returned as they are, not copied: documents are never changed once read, and neither are
 * these (callers spread them into their own objects).
 */
function stringLabels(labels: unknown): Record<string, string> {
  if (typeof labels !== 'object' || labels === null) return NO_LABELS;
  const given = labels as Record<string, unknown>;
  if (Object.values(given).every((v) => typeof v === 'string')) {
    return given as Record<string, string>;
  }
  const copy: Record<string, string> = {};
  for (const [k, v] of Object.entries(given))
    if (v !== null && v !== undefined) copy[k] = String(v);
  return copy;
}

export const at = (d: Doc, ptr: string): Partial<Problem> => ({
  file: d.file,
  doc: d.doc,
  pointer: (d.base ?? '') + ptr,
});
export const ref = (d: Doc): DocRef => ({ file: d.file, doc: d.doc });
export const spec = (d: Doc): Record<string, unknown> =>
  (d.value['spec'] ?? {}) as Record<string, unknown>;
