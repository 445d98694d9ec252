import { keepDerived, keepsDerived } from '../../../src/util/memo.js';

/** Memos on for the tests of one describe block (the warm path's), as they were before. */
export function withDerivedKept(): void {
  let was = false;
  before(() => {
    was = keepsDerived();
    keepDerived(true);
  });
  after(() => keepDerived(was));
}
