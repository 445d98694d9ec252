import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Every relative import of every module of src/, type-only and dynamic ones included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join('src', f));
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    graph.set(
      file,
      importedFiles
        .map((i) => i.fileName)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts')),
    );
  }
  return graph;
}

/** The strongly connected components of more than one module: the import cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('architecture: which folder of src/ may import which', () => {
  let eslint: ESLint;
  before(() => {
    eslint = new ESLint({ cwd: ROOT });
  });

  /** The messages of the rules `ruleId` for `code` linted as if it were the file `path`. */
  async function lintAs(path: string, code: string, ruleId: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
    return (result?.messages ?? []).filter((m) => m.ruleId === ruleId).map((m) => m.message);
  }

  it('has no import cycle, type-only imports included', () => {
    assert.deepEqual(cycles(importGraph()), []);
  });

  it('lint fails an import from a later stage, naming what the folder may import', async () => {
    // validate is below plan: a validate module that imports the planner is refused.
    const messages = await lintAs(
      'src/validate/upward.ts',
      "import { planSite } from '../plan/index.js';\nexport const plan = planSite;\n",
      'bpa/layers',
    );
    assert.equal(messages.length, 1);
    assert.match(messages[0] ?? '', /src\/validate may import only from src\/util, src\/config/);
  });

  it('lint fails an import between two folders of one row', async () => {
    const messages = await lintAs(
      'src/apt/sideways.ts',
      "import { SshPool } from '../ssh/pool.js';\nexport const pool = SshPool;\n",
      'bpa/layers',
    );
    assert.equal(messages.length, 1);
  });

  it('lint passes an import from a lower folder', async () => {
    const messages = await lintAs(
      'src/plan/downward.ts',
      "import { normalizeMac } from '../util/mac.js';\nexport const mac = normalizeMac;\n",
      'bpa/layers',
    );
    assert.deepEqual(messages, []);
  });

  it('lint fails an import cycle', async () => {
    // errors.ts is imported by exec-error.ts: errors.ts importing it back closes a cycle.
    const messages = await lintAs(
      'src/util/errors.ts',
      `${readFileSync(join(ROOT, 'src/util/errors.ts'), 'utf8')}\nexport { ExecError } from './exec-error.js';\n`,
      'bpa/no-cycle',
    );
    assert.deepEqual(messages, ['Dependency cycle detected']);
  });

  it('places every folder of src/ in a row of the layers', async () => {
    const { LAYERS } = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as {
      LAYERS: string[][];
    };
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    assert.deepEqual([...LAYERS.flat()].sort(), folders);
  });
});
