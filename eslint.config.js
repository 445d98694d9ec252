import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import bpa from './eslint-rules/bpa.js';

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
  ['ssh', 'apt', 'source', 'runtime', 'sops'],
  ['load'],
  ['validate'],
  ['state', 'artifacts'],
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
    plugins: { bpa },
    rules: {
      'bpa/no-cycle': ['error', { root: import.meta.dirname }],
      'bpa/layers': ['error', { root: import.meta.dirname, layers: LAYERS }],
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
