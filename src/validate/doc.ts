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
  const labels = (
    typeof m['labels'] === 'object' && m['labels'] !== null ? m['labels'] : {}
  ) as Record<string, unknown>;
  const strLabels: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels))
    if (v !== null && v !== undefined) strLabels[k] = String(v);
  return {
    name: typeof m['name'] === 'string' ? m['name'] : '',
    namespace: typeof m['namespace'] === 'string' ? m['namespace'] : undefined,
    labels: strLabels,
  };
}

export const at = (d: Doc, ptr: string): Partial<Problem> => ({
  file: d.file,
  doc: d.doc,
  pointer: (d.base ?? '') + ptr,
});
export const ref = (d: Doc): DocRef => ({ file: d.file, doc: d.doc });
export const spec = (d: Doc): Record<string, unknown> =>
  (d.value['spec'] ?? {}) as Record<string, unknown>;
