import assert from 'node:assert/strict';
import { digestEntries, normalizeSitePath } from '../../../src/source/digest.js';

const e = (
  path: string,
  oid: string,
  type = 'blob',
  mode = '100644',
): { path: string; oid: string; type: string; mode: string } => ({
  path,
  oid: oid.repeat(40),
  type,
  mode,
});

describe('source: input digest of a site tree', () => {
  const base = [
    e('clusters', '1', 'tree', '040000'),
    e('site.yaml', '2'),
    e('status', '3', 'tree', '040000'),
  ];

  it('ignores the status entry and the order of entries', () => {
    const d = digestEntries('sites/a', base);
    assert.equal(digestEntries('sites/a', [base[1]!, base[0]!]), d);
    assert.equal(
      digestEntries('sites/a', [base[0]!, base[1]!, e('status', '9', 'tree', '040000')]),
      d,
    );
  });

  it('changes with a blob id, a subtree id, a mode, a name or the site path', () => {
    const d = digestEntries('sites/a', base);
    const variants = [
      [e('clusters', '1', 'tree', '040000'), e('site.yaml', '4')],
      [e('clusters', '5', 'tree', '040000'), e('site.yaml', '2')],
      [e('clusters', '1', 'tree', '040000'), e('site.yaml', '2', 'blob', '100755')],
      [e('clusters', '1', 'tree', '040000'), e('site.yml', '2')],
      [e('clusters', '1', 'tree', '040000'), e('site.yaml', '2'), e('extra.yaml', '6')],
    ];
    for (const v of variants) assert.notEqual(digestEntries('sites/a', v), d);
    assert.notEqual(digestEntries('sites/b', base), d);
  });

  it('normalizes site path spellings', () => {
    assert.equal(normalizeSitePath('./sites//edge/'), 'sites/edge');
    assert.equal(normalizeSitePath('.'), '');
    assert.equal(normalizeSitePath(''), '');
    assert.equal(normalizeSitePath('/sites/edge'), 'sites/edge');
  });
});
