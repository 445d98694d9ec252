// The least any validator of a site can do, as a reference for the validate budget: the
// floor's parse (bench/floor-parse.mjs), every document kept until the end (a validator
// checks rules across documents), and each one checked against its kind's schema with bpa's
// compiled schemas (dist/validate/compiled-schemas.js, so `npm run build` first). No rules
// across documents, no positions, no CLI.
//   node bench/floor-validate.mjs DIR
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as schemas from '../dist/validate/compiled-schemas.js';

const byKind = {
  BareMetalHost: schemas.baremetalhost,
  HardwareData: schemas.hardwaredata,
  Cluster: schemas.cluster,
  Provisioning: schemas.provisioning,
  Software: schemas.software,
  Site: schemas.site,
};
const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.ya?ml$/i.test(e.name)) files.push(p);
  }
};
walk(process.argv[2]);
const kept = [];
let invalid = 0;
for (const f of files) {
  const documents = loadAll(readFileSync(f, 'utf8'), { schema: CORE_SCHEMA });
  for (const d of documents) if (!byKind[d?.kind]?.(d)) invalid++;
  kept.push(documents);
}
console.log(JSON.stringify({ files: files.length, documents: kept.flat().length, invalid }));
