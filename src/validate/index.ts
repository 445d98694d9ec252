import type { LoadedSite } from '../load/index.js';
import { hasErrors, type Problem } from '../util/problem.js';
import { classify, type KindedDocument } from './classify.js';
import type { DocumentCache } from './document-cache.js';
import type { SiteModel } from './model.js';
import { buildModel } from './rules.js';
import { checkSchema, schemaValidator, type SchemaValidator } from './schema.js';
import { checkSecrets, type SecretCheckOptions } from './secrets.js';

export type { SiteModel } from './model.js';
export type { KindedDocument } from './classify.js';
export { validateInventory, type InventoryValidation } from './inventory.js';
export { DocumentCache } from './document-cache.js';
export type { SiteSecret } from './model.js';

export interface ValidationResult {
  /** The site model, present when there are no errors. */
  model?: SiteModel;
  problems: Problem[];
}

/**
 * Validates loaded documents: every document against its kind's schema, then the rules that
 * span documents. Collects every problem (positions are filled in later, only for files that
 * have problems). Pure apart from the compiled schemas. With a document cache (`bpa serve`),
 * a document already checked is not checked again (validate/document-cache.ts).
 */
export function validateSite(
  site: Pick<LoadedSite, 'documents' | 'problems' | 'incomplete'>,
  validator: SchemaValidator = schemaValidator(),
  cache?: DocumentCache,
  secretOptions: SecretCheckOptions = {},
): ValidationResult {
  const problems: Problem[] = [...site.problems];
  const docs: KindedDocument[] = [];
  for (const d of site.documents) {
    if (!cache) {
      docs.push(...checkDocument(d, validator, problems));
      continue;
    }
    const checked = cache.get(validator, d, () => {
      const found: Problem[] = [];
      return { kinded: checkDocument(d, validator, found), problems: found };
    });
    docs.push(...checked.kinded);
    // Copies: positions are filled in later, and the cached check outlives this run.
    for (const p of checked.problems) problems.push({ ...p });
  }
  const model = buildModel(docs, problems, { incomplete: site.incomplete });
  model.secrets = checkSecrets(site.documents, model.site, problems, secretOptions);
  return hasErrors(problems) ? { problems } : { model, problems };
}

/** One document on its own: its kinds, each checked against its schema. */
function checkDocument(
  d: LoadedSite['documents'][number],
  validator: SchemaValidator,
  problems: Problem[],
): KindedDocument[] {
  const kinded = classify(d, problems, 'site');
  for (const k of kinded) {
    const schemaProblems = checkSchema(validator, k);
    k.valid = schemaProblems.length === 0;
    problems.push(...schemaProblems);
  }
  return kinded;
}
