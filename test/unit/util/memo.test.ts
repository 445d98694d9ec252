import assert from 'node:assert/strict';
import { ObjectMemo, keepDerived, keepsDerived } from '../../../src/util/memo.js';

describe('ObjectMemo', () => {
  let was = false;
  before(() => {
    was = keepsDerived();
  });
  after(() => keepDerived(was));

  it('keeps nothing while memos are off (one-shot commands), and what it is given once on', () => {
    const memo = new ObjectMemo<object, number>();
    const key = {};
    keepDerived(false);
    memo.set(key, 1);
    assert.equal(memo.get(key), undefined);
    keepDerived(true);
    assert.equal(memo.get(key), undefined, 'nothing was kept while off');
    memo.set(key, 2);
    assert.equal(memo.get(key), 2);
    assert.equal(memo.get({}), undefined);
    keepDerived(false);
    assert.equal(memo.get(key), undefined, 'off again: nothing is handed out');
  });
});
