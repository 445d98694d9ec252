import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CODES } from '../../../src/validate/codes.js';

describe('docs/site-format.md', () => {
  const doc = readFileSync(new URL('../../../docs/site-format.md', import.meta.url), 'utf8');
  const headings = new Set([...doc.matchAll(/^### ([A-Z0-9_]+)\s*$/gm)].map((m) => m[1]));
  for (const code of Object.keys(CODES)) {
    it(`documents ${code}`, () => assert.ok(headings.has(code), `no "### ${code}" heading`));
  }
  it('documents no code that does not exist', () => {
    for (const h of headings) assert.ok(h !== undefined && h in CODES, `### ${h} is not a code`);
  });
});
