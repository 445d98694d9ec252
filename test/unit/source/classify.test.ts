import assert from 'node:assert/strict';
import { Errors } from 'isomorphic-git';
import { BpaError, StalledError } from '../../../src/util/errors.js';
import { isRemoteFailure, redact, toGitError } from '../../../src/source/classify.js';

const URL_ = 'https://git.example.org/site.git';

function netError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.0.0.1:443`), { code });
}

describe('source: classifying git failures', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['401', new Errors.HttpError(401, 'Unauthorized', ''), 'GIT_AUTH', 'stalled'],
    ['403', new Errors.HttpError(403, 'Forbidden', ''), 'GIT_AUTH', 'stalled'],
    ['404', new Errors.HttpError(404, 'Not Found', ''), 'GIT_REPO_NOT_FOUND', 'stalled'],
    ['500', new Errors.HttpError(500, 'Internal Server Error', ''), 'GIT_UNAVAILABLE', 'transient'],
    ['503', new Errors.HttpError(503, 'Service Unavailable', ''), 'GIT_UNAVAILABLE', 'transient'],
    ['refused', netError('ECONNREFUSED'), 'GIT_UNAVAILABLE', 'transient'],
    ['reset', netError('ECONNRESET'), 'GIT_UNAVAILABLE', 'transient'],
    ['dns', netError('ENOTFOUND'), 'GIT_UNAVAILABLE', 'transient'],
    ['timeout', new Error('Request timed out'), 'GIT_UNAVAILABLE', 'transient'],
    [
      'not smart http',
      new Errors.SmartHttpError('<html>', '<html>login</html>'),
      'GIT_UNAVAILABLE',
      'transient',
    ],
    ['local', new Error('EIO: i/o error'), 'GIT_FAILED', 'transient'],
  ];
  for (const [name, err, code, retry] of cases) {
    it(`${name} → ${code} (${retry})`, () => {
      const out = toGitError(err, 'fetching main', URL_, []);
      assert.ok(out instanceof BpaError);
      assert.equal(out.code, code);
      assert.equal(out.retry, retry);
      assert.match(out.message, /^fetching main: /);
    });
  }

  it('passes bpa errors through unchanged', () => {
    const e = new StalledError('GIT_REF_NOT_FOUND', 'x');
    assert.equal(toGitError(e, 'w', URL_, []), e);
  });

  it('never lets a secret or URL credentials through', () => {
    const leaky = new Error(
      'failed for https://bot:S3CRET@git.example.org/site.git with header Basic QUJD and S3CRET',
    );
    const out = toGitError(leaky, 'fetching', 'https://bot:S3CRET@git.example.org/site.git', [
      'S3CRET',
      'Basic QUJD',
    ]);
    assert.ok(!out.message.includes('S3CRET'), out.message);
    assert.ok(!out.message.includes('QUJD'), out.message);
    assert.equal(redact('a-TOKEN-b-TOKEN', ['TOKEN', '']), 'a-***-b-***');
  });

  it('tells remote failures from local ones', () => {
    assert.equal(isRemoteFailure(new Errors.HttpError(502, 'Bad Gateway', '')), true);
    assert.equal(isRemoteFailure(netError('ECONNREFUSED')), true);
    assert.equal(isRemoteFailure(new Errors.PushRejectedError('not-fast-forward')), true);
    assert.equal(isRemoteFailure(new Errors.NotFoundError('abc')), false);
    assert.equal(isRemoteFailure(new Error('ENOENT: no such file')), false);
  });
});
