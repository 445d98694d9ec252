import assert from 'node:assert/strict';
import { nameProblem, parseSha256 } from '../../../src/artifacts/names.js';
import { parseRange } from '../../../src/serve/artifacts/send-file.js';

describe('artifact names', () => {
  for (const name of ['ubuntu-22.04.qcow2', 'a', 'kubelet_1.29.1-1.1_amd64.deb', 'v1+x~y']) {
    it(`accepts ${name}`, () => {
      assert.equal(nameProblem(name.endsWith('.deb') ? 'packages' : 'files', name), undefined);
    });
  }
  const bad: Array<[string, RegExp]> = [
    ['../etc/passwd', /path separator/],
    ['a\\b', /path separator/],
    ['..', /"\.\."/],
    ['a..b', /"\.\."/],
    ['.hidden', /starting with a letter/],
    ['', /1 to 200/],
    ['x'.repeat(201), /1 to 200/],
    ['with space', /letters, digits/],
    ['img.qcow2.sha256sum', /checksum files/],
    ['img.md5sum', /checksum files/],
  ];
  for (const [name, why] of bad) {
    it(`refuses ${JSON.stringify(name.slice(0, 20))}`, () => {
      assert.match(nameProblem('images', name) ?? '', why);
    });
  }
  it('takes only .deb files as packages', () => {
    assert.match(nameProblem('packages', 'tool.tar.gz') ?? '', /\.deb/);
  });
  it('reads a sha256 header in either case, nothing else', () => {
    assert.equal(parseSha256(` ${'AB'.repeat(32)} `), 'ab'.repeat(32));
    assert.equal(parseSha256('ab'.repeat(31)), undefined);
    assert.equal(parseSha256(undefined), undefined);
  });
});

describe('parseRange', () => {
  const cases: Array<[string | undefined, ReturnType<typeof parseRange>]> = [
    [undefined, undefined],
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=5-', { start: 5, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-1000', { start: 0, end: 99 }],
    ['bytes=90-1000', { start: 90, end: 99 }],
    ['bytes=100-', 'unsatisfiable'],
    ['bytes=9-5', 'unsatisfiable'],
    ['bytes=-0', 'unsatisfiable'],
    ['bytes=0-1,5-6', undefined],
    ['items=0-1', undefined],
    ['bytes=-', undefined],
  ];
  for (const [header, want] of cases) {
    it(`${String(header)} of 100 bytes`, () => assert.deepEqual(parseRange(header, 100), want));
  }
});
