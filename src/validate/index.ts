import type { LoadedDocument, LoadedSite } from '../load/index.js';
import { error, hasErrors, type Problem } from '../util/problem.js';
import { KINDS, isKindName, type KindName } from './kinds.js';
import type { SiteModel } from './model.js';
import { buildModel } from './rules.js';
import { schemaValidator, type SchemaValidator } from './schema.js';

export type { SiteModel } from './model.js';

/** A document whose kind is known and whose shape passed its schema. */
export interface KindedDocument {
  kind: KindName;
  file: string;
  doc: number;
  /** Whether the document passed its schema (only those feed the model). */
  valid: boolean;
  value: Record<string, unknown>;
}

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
    const kinded = classify(d, problems);
    if (!kinded) continue;
    const schemaProblems = validator.check(kinded.kind, kinded.value, {
      file: d.file,
      doc: d.index,
    });
    kinded.valid = schemaProblems.length === 0;
    problems.push(...schemaProblems);
    docs.push(kinded);
  }
  const model = buildModel(docs, problems, { incomplete: site.incomplete });
  return hasErrors(problems) ? { problems } : { model, problems };
}

function classify(d: LoadedDocument, problems: Problem[]): KindedDocument | undefined {
  const where = { file: d.file, doc: d.index };
  if (typeof d.value !== 'object' || d.value === null || Array.isArray(d.value)) {
    problems.push(
      error('NOT_A_MAPPING', 'a site document must be a mapping with apiVersion and kind', {
        ...where,
        pointer: '',
      }),
    );
    return undefined;
  }
  const value = d.value as Record<string, unknown>;
  const { apiVersion, kind } = value;
  if (kind === undefined || apiVersion === undefined) {
    const missing = kind === undefined ? 'kind' : 'apiVersion';
    problems.push(
      error('MISSING_FIELD', `${missing}: required field is missing`, { ...where, pointer: '' }),
    );
    return undefined;
  }
  if (!isKindName(kind)) {
    problems.push(
      error(
        'UNKNOWN_KIND',
        `kind ${JSON.stringify(kind)} is not one bpa reads (${Object.keys(KINDS).join(', ')})`,
        {
          ...where,
          pointer: '/kind',
        },
      ),
    );
    return undefined;
  }
  if (apiVersion !== KINDS[kind].apiVersion) {
    problems.push(
      error(
        'UNKNOWN_KIND',
        `apiVersion ${JSON.stringify(apiVersion)} is not known for kind ${kind}; use ${KINDS[kind].apiVersion}`,
        {
          ...where,
          pointer: '/apiVersion',
        },
      ),
    );
    return undefined;
  }
  return { kind, file: d.file, doc: d.index, valid: false, value };
}
