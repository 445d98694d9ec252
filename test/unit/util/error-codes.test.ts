import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERRORS_DOC, renderErrorDocs } from '../../../scripts/gen-error-docs.js';
import { RUNTIME_CODES, isRuntimeCode } from '../../../src/util/error-codes.js';
import { BpaError, StalledError } from '../../../src/util/errors.js';
import { CODES } from '../../../src/validate/codes.js';

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('runtime error codes', () => {
  it('docs/errors.md is generated from the registry (npx tsx scripts/gen-error-docs.ts)', () => {
    assert.equal(readFileSync(ERRORS_DOC, 'utf8'), renderErrorDocs());
  });

  it('every code has a heading, a summary, a fix and a retry kind', () => {
    const doc = readFileSync(ERRORS_DOC, 'utf8');
    for (const [code, info] of Object.entries(RUNTIME_CODES)) {
      assert.match(doc, new RegExp(`^### ${code}$`, 'm'));
      assert.ok(info.summary && info.fix, code);
      assert.ok(['stalled', 'waiting', 'transient'].includes(info.retry), code);
    }
  });

  it('runtime codes and site problem codes are separate lists', () => {
    for (const code of Object.keys(RUNTIME_CODES))
      assert.ok(!(code in CODES), `${code} is in both lists`);
  });

  it('a BpaError takes its default retry kind from the registry', () => {
    assert.equal(new BpaError('STATE_LOCKED', 'x').retry, 'waiting');
    assert.equal(new BpaError('GIT_UNAVAILABLE', 'x').retry, 'transient');
    assert.equal(new BpaError('PATH_NOT_FOUND', 'x').retry, 'stalled');
    assert.equal(new BpaError('GIT_UNAVAILABLE', 'x', 'stalled').retry, 'stalled');
    assert.deepEqual(new StalledError('SITE_INVALID', 'm').toJSON(), {
      code: 'SITE_INVALID',
      message: 'm',
      retry: 'stalled',
    });
  });

  it('every code written in src/ is registered (runtime) or a site problem code', () => {
    const unknown: string[] = [];
    for (const file of sources(SRC)) {
      if (file.endsWith('error-codes.ts') || file.endsWith(join('validate', 'codes.ts'))) continue;
      const text = readFileSync(file, 'utf8');
      // `code: 'X'`, `new XError('X', …)`, `fail('X', …)` and the git layer's constants.
      const found = [
        ...text.matchAll(/\bcode: '([A-Z][A-Z0-9_]+)'/g),
        ...text.matchAll(/Error\(\s*'([A-Z][A-Z0-9_]+)'/g),
        ...text.matchAll(/\bfail\(\s*'([A-Z][A-Z0-9_]+)'/g),
        ...text.matchAll(/^export const [A-Z_]+ = '([A-Z][A-Z0-9_]+)';$/gm),
      ].map((m) => m[1] ?? '');
      for (const code of found)
        if (!isRuntimeCode(code) && !(code in CODES)) unknown.push(`${code} (${file})`);
    }
    assert.deepEqual(unknown, []);
  });
});
