import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkStateDir } from '../../../src/state/dir.js';
import { StalledError } from '../../../src/util/errors.js';

describe('checkStateDir', () => {
  let tmp = '';
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-state-dir-'));
    await writeFile(join(tmp, 'file'), 'x');
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('accepts a directory, and a path where one can be created', async () => {
    await checkStateDir(tmp);
    await checkStateDir(join(tmp, 'new', 'deeper'));
  });

  it('refuses a file, a device and a path through a file with STATE_DIR_INVALID', async () => {
    for (const [dir, why] of [
      [join(tmp, 'file'), /is not a directory but a file/],
      ['/dev/null', /is not a directory but a device/],
      [join(tmp, 'file', 'state'), /a part of its path is not a directory/],
    ] as const) {
      await assert.rejects(checkStateDir(dir), (err: unknown) => {
        assert.ok(err instanceof StalledError);
        assert.equal(err.code, 'STATE_DIR_INVALID');
        assert.match(err.message, why);
        assert.ok(err.message.includes(dir), err.message);
        return true;
      });
    }
  });
});
