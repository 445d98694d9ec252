import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearerToken, readSecretFile, sameSecret } from '../../../src/serve/auth.js';
import type { IncomingMessage } from 'node:http';

describe('serve/auth', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bpa-auth-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a secret file without its surrounding whitespace', async () => {
    writeFileSync(join(dir, 'token'), '  s3cret\n');
    assert.equal(await readSecretFile(join(dir, 'token'), 'the UI token'), 's3cret');
  });

  it('refuses an empty secret file and a missing one, naming the file', async () => {
    writeFileSync(join(dir, 'empty'), '\n \n');
    await assert.rejects(readSecretFile(join(dir, 'empty'), 'the UI token'), (err: Error) => {
      assert.match(err.message, /empty: it must hold the UI token/);
      assert.equal((err as { code?: string }).code, 'SECRET_FILE_UNREADABLE');
      return true;
    });
    await assert.rejects(readSecretFile(join(dir, 'absent'), 'the UI token'), /absent \(ENOENT\)/);
  });

  it('compares secrets whatever their lengths', () => {
    assert.equal(sameSecret('abc', 'abc'), true);
    assert.equal(sameSecret('abc', 'abcd'), false);
    assert.equal(sameSecret('', 'abc'), false);
  });

  it('reads only a well-formed Bearer header', () => {
    const req = (authorization?: string): IncomingMessage =>
      ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;
    assert.equal(bearerToken(req('Bearer abc')), 'abc');
    assert.equal(bearerToken(req('bearer abc ')), 'abc');
    assert.equal(bearerToken(req('Basic abc')), undefined);
    assert.equal(bearerToken(req('Bearer a b')), undefined);
    assert.equal(bearerToken(req()), undefined);
  });
});
