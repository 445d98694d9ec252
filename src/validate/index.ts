import type { LoadedSite } from '../load/index.js';
import { hasErrors, type Problem } from '../util/problem.js';
import { classify, type KindedDocument } from './classify.js';
import type { SiteModel } from './model.js';
import { buildModel } from './rules.js';
import { checkSchema, schemaValidator, type SchemaValidator } from './schema.js';

export type { SiteModel } from './model.js';
export type { KindedDocument } from './classify.js';
export { validateInventory, type InventoryValidation } from './inventory.js';

export interface ValidationResult {
  /** The site model, present when there are no errors. */
  model?: SiteModel;
  problems: Problem[];
}

/**
 * Validates loaded documents: every document against its kind's schema, then the rules that
 * span documents. Collects every problem (positions are filled in later, only for files that
 * have problems). Pure apart from the compiled schemas.
 */
export function validateSite(
  site: Pick<LoadedSite, 'documents' | 'problems' | 'incomplete'>,
  validator: SchemaValidator = schemaValidator(),
): ValidationResult {
  const problems: Problem[] = [...site.problems];
  const docs: KindedDocument[] = [];
  for (const d of site.documents) {
    for (const kinded of classify(d, problems, 'site')) {
      const schemaProblems = checkSchema(validator, kinded);
      kinded.valid = schemaProblems.length === 0;
      problems.push(...schemaProblems);
      docs.push(kinded);
    }
  }
  const model = buildModel(docs, problems, { incomplete: site.incomplete });
  return hasErrors(problems) ? { problems } : { model, problems };
}
