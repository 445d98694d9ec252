/**
 * The validation of each document on its own (its kind, its schema), kept for as long as the
 * document object lives. With the load cache (load/cache.ts), an unchanged file's documents
 * are the same objects from one reconcile to the next, so their checks are not repeated; the
 * documents of a file that changed or left the site are new or gone, and so are their entries
 * (a WeakMap: nothing here outlives the site's documents). Rules that span documents are
 * never kept: they run again over every document.
 */
import type { LoadedDocument } from '../load/index.js';
import type { Problem } from '../util/problem.js';
import type { KindedDocument } from './classify.js';
import type { SchemaValidator } from './schema.js';

export interface DocumentCheck {
  kinded: KindedDocument[];
  /** Classification and schema problems, in the order they were found, without positions. */
  problems: Problem[];
}

export class DocumentCache {
  private readonly byValidator = new WeakMap<
    SchemaValidator,
    WeakMap<LoadedDocument, DocumentCheck>
  >();

  /** The check of `doc` under `validator`, made by `check` the first time. */
  get(validator: SchemaValidator, doc: LoadedDocument, check: () => DocumentCheck): DocumentCheck {
    let byDoc = this.byValidator.get(validator);
    if (!byDoc) {
      byDoc = new WeakMap();
      this.byValidator.set(validator, byDoc);
    }
    let found = byDoc.get(doc);
    if (!found) {
      found = check();
      byDoc.set(doc, found);
    }
    return found;
  }
}
