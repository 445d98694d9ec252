import assert from 'node:assert/strict';
import { isCommitId, resolveAdvertised, type AdvertisedRef } from '../../../src/source/refs.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const T = 'd'.repeat(40);

const REFS: AdvertisedRef[] = [
  { ref: 'HEAD', oid: A },
  { ref: 'refs/heads/main', oid: A },
  { ref: 'refs/heads/v1', oid: B },
  { ref: 'refs/tags/v1', oid: C },
  { ref: 'refs/tags/v2', oid: T, peeled: B },
  { ref: 'refs/heads/feature/x', oid: B },
];

describe('source: resolving a ref against the advertisement', () => {
  const cases: Array<[string, { fullRef: string; oid: string; commit: string } | undefined]> = [
    ['main', { fullRef: 'refs/heads/main', oid: A, commit: A }],
    ['refs/heads/main', { fullRef: 'refs/heads/main', oid: A, commit: A }],
    ['HEAD', { fullRef: 'HEAD', oid: A, commit: A }],
    // git's precedence: a tag wins over a branch of the same short name
    ['v1', { fullRef: 'refs/tags/v1', oid: C, commit: C }],
    ['refs/heads/v1', { fullRef: 'refs/heads/v1', oid: B, commit: B }],
    // an annotated tag names the tag object; the commit is the peeled value
    ['v2', { fullRef: 'refs/tags/v2', oid: T, commit: B }],
    ['feature/x', { fullRef: 'refs/heads/feature/x', oid: B, commit: B }],
    ['heads/main', { fullRef: 'refs/heads/main', oid: A, commit: A }],
    ['nope', undefined],
    ['refs/heads/nope', undefined],
  ];
  for (const [ref, want] of cases) {
    it(`${ref} → ${want ? want.fullRef : 'not found'}`, () => {
      assert.deepEqual(resolveAdvertised(REFS, ref), want);
    });
  }

  it('recognizes full commit ids only', () => {
    assert.equal(isCommitId(A), true);
    assert.equal(isCommitId('ABCDEF0123456789abcdef0123456789abcdef01'), true);
    assert.equal(isCommitId('abc1234'), false);
    assert.equal(isCommitId(`${A}0`), false);
    assert.equal(isCommitId('g'.repeat(40)), false);
  });
});
