import { CORE_SCHEMA, dump } from 'js-yaml';

/**
 * YAML text of plain data, for the reports and the documents bpa writes: key order as built,
 * no line folding, no anchors, strings quoted (double quotes) only where the YAML 1.2 core
 * schema would read them as something else. js-yaml writes it straight from the data, in a
 * fifth of the time of the `yaml` package, which builds a syntax tree of every node first
 * (hundreds of MiB for an inventory of 10,000 hosts). Keys whose value is undefined are left
 * out, as JSON does.
 */
export function yamlText(doc: unknown): string {
  return dump(doc, {
    schema: CORE_SCHEMA,
    lineWidth: -1,
    noRefs: true,
    noCompatMode: true,
    quotingType: '"',
    skipInvalid: true,
  });
}
