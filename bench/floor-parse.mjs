// The parsing floor for the validate and plan benchmarks: read every YAML file under a
// directory and parse it with js-yaml 4's loadAll (its YAML 1.2 core schema), nothing else.
// js-yaml 4 is the fastest JavaScript YAML parser measured here (docs/PERFORMANCE.md).
//   node bench/floor-parse.mjs DIR
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.ya?ml$/i.test(e.name)) files.push(p);
  }
};
walk(process.argv[2]);
let documents = 0;
for (const f of files)
  documents += loadAll(readFileSync(f, 'utf8'), { schema: CORE_SCHEMA }).length;
console.log(JSON.stringify({ files: files.length, documents }));
