/**
 * bpa's own lint rules for the shape of src/: which folder may import which (`bpa/layers`) and
 * no import cycles (`bpa/no-cycle`). Both follow relative imports only; bpa imports its own
 * modules by relative path with a `.js` extension that names the `.ts` file beside it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** The module a relative specifier names, as an absolute `.ts` path; undefined for packages. */
function target(fromFile, spec) {
  if (typeof spec !== 'string' || !spec.startsWith('.')) return undefined;
  const abs = resolve(dirname(fromFile), spec);
  if (abs.endsWith('.js')) return `${abs.slice(0, -3)}.ts`;
  if (abs.endsWith('.ts')) return abs;
  if (existsSync(`${abs}.ts`)) return `${abs}.ts`;
  return join(abs, 'index.ts');
}

/** Each import, export-from and dynamic import with a literal source: [node, specifier]. */
function importVisitors(onImport) {
  const visit = (node) => {
    if (node.source && node.source.type === 'Literal') onImport(node.source, node.source.value);
  };
  return {
    ImportDeclaration: visit,
    ExportNamedDeclaration: visit,
    ExportAllDeclaration: visit,
    ImportExpression: visit,
  };
}

const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'a folder of src/ imports only from the folders of the rows below it' },
    schema: [
      {
        type: 'object',
        properties: { root: { type: 'string' }, layers: { type: 'array' } },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { root, layers: rows } = context.options[0];
    const src = join(root, 'src');
    const folderOf = (file) => {
      const rel = relative(src, file);
      if (rel.startsWith('..') || !rel.includes(sep)) return undefined;
      return rel.split(sep)[0];
    };
    const row = new Map(rows.flatMap((names, i) => names.map((n) => [n, i])));
    const from = folderOf(context.filename);
    if (from === undefined || !row.has(from)) return {};
    const below = rows.slice(0, row.get(from)).flat();
    const allowed = `src/${from} may import only from ${below.length ? below.map((f) => `src/${f}`).join(', ') : 'node and npm packages'} (layers: eslint.config.js, docs/architecture.md)`;
    return importVisitors((node, spec) => {
      const file = target(context.filename, spec);
      if (file === undefined) return;
      const to = folderOf(file);
      if (to === undefined || to === from) return;
      if (row.has(to) && row.get(to) < row.get(from)) return;
      context.report({ node, message: allowed });
    });
  },
};

/** The relative imports of every module of src/ as read from disk, built once per process. */
let diskGraph;
function graphOf(src) {
  if (diskGraph?.src === src) return diskGraph.edges;
  const edges = new Map();
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts')) continue;
    const file = join(src, f);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    edges.set(
      file,
      importedFiles.map((i) => target(file, i.fileName)).filter((t) => t !== undefined),
    );
  }
  diskGraph = { src, edges };
  return edges;
}

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'no module of src/ imports, directly or not, a module that imports it' },
    schema: [
      { type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false },
    ],
  },
  create(context) {
    const src = join(context.options[0].root, 'src');
    const self = context.filename;
    if (relative(src, self).startsWith('..')) return {};
    const edges = graphOf(src);
    const reachesSelf = (start) => {
      const seen = new Set();
      const stack = [start];
      while (stack.length) {
        const file = stack.pop();
        if (file === self) return true;
        if (seen.has(file)) continue;
        seen.add(file);
        for (const next of edges.get(file) ?? []) stack.push(next);
      }
      return false;
    };
    return importVisitors((node, spec) => {
      const file = target(self, spec);
      if (file !== undefined && file !== self && reachesSelf(file))
        context.report({ node, message: 'Dependency cycle detected' });
    });
  },
};

export default { rules: { layers, 'no-cycle': noCycle } };
