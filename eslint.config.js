import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * The folders of src/, lowest first. A folder may import only from the folders of the rows
 * before its own: never from a later row, nor from another folder of its row. The reconcile
 * steps run in this order (docs/architecture.md), so an import against it is a stage reaching
 * into a later one. scripts/, test/ and bench/ may import anything.
 */
export const LAYERS = [
  ['util'],
  ['config'],
  ['kube'],
  ['ssh', 'apt', 'source'],
  ['load'],
  ['validate'],
  ['state'],
  ['observe'],
  ['plan'],
  ['apply'],
  ['report'],
  ['reconcile'],
  ['serve'],
  ['cli'],
];

const placed = new Set(LAYERS.flat());
for (const entry of readdirSync(join(import.meta.dirname, 'src'), { withFileTypes: true })) {
  if (!placed.has(entry.name))
    throw new Error(`src/${entry.name} has no place in LAYERS (eslint.config.js): add it to a row`);
}

/** One zone per folder: everything it may not import from, with the rule in the message. */
const layerZones = LAYERS.flatMap((row, i) =>
  row.flatMap((folder) => {
    const below = LAYERS.slice(0, i).flat();
    const above = LAYERS.slice(i)
      .flat()
      .filter((f) => f !== folder);
    if (!above.length) return [];
    return {
      target: `./src/${folder}`,
      from: above.map((f) => `./src/${f}`),
      message: `src/${folder} may import only from ${below.length ? below.map((f) => `src/${f}`).join(', ') : 'node and npm packages'} (layers: eslint.config.js, docs/architecture.md)`,
    };
  }),
);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Read TypeScript files when following imports, not only .js ones.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
    },
  },
  {
    files: ['src/cli/**', 'bench/**', 'test/**', 'bin/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
